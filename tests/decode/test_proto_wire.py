"""One reader, one view: the decoder, the envelope parser and redaction agree on the same bytes.

All three read protobuf with k8s_wiretap.wire.protowire (redaction with `parse` and
`envelope.unwrap`, the decoder with the same reader inlined in its hot loop), and raise its
one error. Here the same bytes go to each:

- schemaless decoding refuses exactly what `parse` refuses, and otherwise shows its fields;
- the decoder refuses every envelope `unwrap` refuses, and otherwise decodes the kind
  `unwrap` names; so a body is a Secret to the decoder exactly when it is one to redaction,
  which then either redacts its values or, unable to parse it, replaces it whole.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from k8s_wiretap.capture.redact import UNREADABLE, Redactor
from k8s_wiretap.decode.protobuf import (
    DecodeError,
    decode_object,
    decode_schemaless,
    render_message,
)
from k8s_wiretap.kube.requestinfo import parse_request
from k8s_wiretap.wire.envelope import MAGIC, unwrap
from k8s_wiretap.wire.protowire import (
    BYTES,
    FIXED32,
    MASK64,
    VARINT,
    Field,
    ProtoError,
    encode,
    parse,
)

SECRET_VALUE = b"hunter2-agreement"
SECRETS = parse_request("GET", "/api/v1/namespaces/default/secrets/s")
PROTOBUF = "application/vnd.kubernetes.protobuf"


def test_decode_error_is_the_wire_readers_proto_error() -> None:
    assert DecodeError is ProtoError


@pytest.mark.parametrize(
    ("raw", "reason"),
    [  # field 9: unknown to the envelope and to a Pod
        (b"\x4a\x05abc", "runs past the end"),
        (b"\x48\x80", "truncated varint"),
        (b"\x48" + b"\xff" * 10 + b"\x01", "longer than 10 bytes"),
        (b"\x00\x01", "field number 0"),
        (b"\x4b", "wire type 3"),
        (b"\x4c", "wire type 4"),
        (b"\x4e\x00", "wire type 6"),
        (b"\x4f\x00", "wire type 7"),
    ],
)
def test_every_reader_refuses_bad_wire_format_with_the_one_error(raw: bytes, reason: str) -> None:
    pod = MAGIC + encode([Field(2, BYTES, raw)])  # no typeMeta: decoded as told
    readers: list[Callable[[], object]] = [
        lambda: parse(raw),  # as redaction reads messages
        lambda: decode_schemaless(raw),
        lambda: render_message("k8s.io.api.core.v1.Pod", raw),
        lambda: decode_object(pod, api_version="v1", kind="Pod"),
        lambda: unwrap(MAGIC + raw),  # as redaction and the decoder read envelopes
    ]
    for read in readers:
        with pytest.raises(ProtoError, match=reason):
            read()


def test_a_varint_past_64_bits_wraps_the_same_for_every_reader() -> None:
    wrapped = b"\xff" * 9 + b"\x7f"  # 2**70 - 1, which Go reads as 2**64 - 1
    assert parse(b"\x08" + wrapped) == [Field(1, VARINT, MASK64)]
    assert decode_schemaless(b"\x08" + wrapped) == {"1": MASK64}
    # ObjectMeta.generation (7) is an int64: -1; a container port (int32, 3): -1 too
    meta = render_message("k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta", b"\x38" + wrapped)
    assert meta["generation"] == -1
    port = render_message("k8s.io.api.core.v1.ContainerPort", b"\x18" + wrapped)
    assert port["containerPort"] == -1


@given(st.binary(max_size=256))
def test_schemaless_decoding_refuses_what_parse_refuses(data: bytes) -> None:
    try:
        fields = parse(data)
    except ProtoError:
        with pytest.raises(DecodeError):
            decode_schemaless(data)
        return
    got = decode_schemaless(data)
    assert list(got) == list(dict.fromkeys(str(f.number) for f in fields))


# -- envelopes: random, duplicated, mistyped and broken fields ---------------------------------

NAMES = st.sampled_from([b"v1", b"Secret", b"ConfigMap", b"Widget", b"", b"Secret\xff", b"x/v1"])
SECRET_RAW = encode(
    [
        Field(2, BYTES, encode([Field(1, BYTES, b"password"), Field(2, BYTES, SECRET_VALUE)])),
        Field(3, BYTES, b"Opaque"),
    ]
)
TYPE_META_FIELD = st.one_of(
    st.builds(Field, st.sampled_from([1, 2]), st.just(BYTES), NAMES),
    st.builds(Field, st.sampled_from([1, 2, 9]), st.just(VARINT), st.integers(0, 3)),
)
ENVELOPE_FIELD = st.one_of(
    st.builds(Field, st.just(1), st.just(BYTES), st.lists(TYPE_META_FIELD, max_size=3).map(encode)),
    st.builds(Field, st.just(2), st.just(BYTES), st.sampled_from([SECRET_RAW, b"", b"\x0a"])),
    st.builds(Field, st.sampled_from([3, 4]), st.just(BYTES), st.sampled_from([b"", b"gzip"])),
    st.builds(Field, st.sampled_from([1, 2, 3, 4, 9]), st.just(VARINT), st.integers(0, 3)),
    st.builds(Field, st.sampled_from([2, 9]), st.just(FIXED32), st.just(b"\x00\x00\x00\x00")),
)
A_SECRET = [
    Field(1, BYTES, encode([Field(1, BYTES, b"v1"), Field(2, BYTES, b"Secret")])),
    Field(2, BYTES, SECRET_RAW),
]


@st.composite
def envelopes(draw: st.DrawFn) -> bytes:
    """Half of them a Secret's envelope to begin with, then fields of all sorts, maybe cut."""
    fields = (A_SECRET if draw(st.booleans()) else []) + draw(st.lists(ENVELOPE_FIELD, max_size=4))
    body = MAGIC + encode(draw(st.permutations(fields)))
    cut = draw(st.none() | st.integers(len(MAGIC), len(body)))
    return body[:cut]


def decoded_or_none(body: bytes) -> dict[str, Any] | None:
    with contextlib.suppress(DecodeError):
        return decode_object(body)
    return None


@given(envelopes())
def test_the_decoder_and_redaction_see_the_same_envelope(body: bytes) -> None:
    redacted, changed = Redactor().body(SECRETS, PROTOBUF, body)
    try:
        wrapped = unwrap(body)
    except ProtoError:
        assert decoded_or_none(body) is None  # the decoder refuses it too
        assert (redacted, changed) == (UNREADABLE, True)  # redaction fails closed
        return
    got = decoded_or_none(body)
    if got is not None:
        assert got["kind"] == wrapped.kind and got["apiVersion"] == wrapped.api_version
    if wrapped.kind == "Secret":
        assert changed and SECRET_VALUE not in redacted
        if got is not None and "data" in got:
            again = decode_object(redacted)
            assert again["kind"] == "Secret"
            assert set(again["data"]) == set(got["data"])
            assert again["data"] != got["data"]
    else:
        assert got is None or got["kind"] != "Secret"


def test_an_envelope_refused_only_for_its_wire_types_is_refused_by_both() -> None:
    # gogo's Unknown.Unmarshal refuses a raw that is not length-delimited; so does everyone.
    type_meta = encode([Field(1, BYTES, b"v1"), Field(2, BYTES, b"Secret")])
    body = MAGIC + encode(
        [Field(1, BYTES, type_meta), Field(2, BYTES, SECRET_RAW), Field(2, VARINT, 1)]
    )
    with pytest.raises(ProtoError, match="wire type 0"):
        unwrap(body)
    with pytest.raises(DecodeError, match="wire type 0"):
        decode_object(body)
    assert Redactor().body(SECRETS, PROTOBUF, body) == (UNREADABLE, True)
