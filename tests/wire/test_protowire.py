"""The schemaless protobuf wire format reads what it writes and rejects garbage cleanly."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from k8s_wiretap.wire import envelope
from k8s_wiretap.wire.protowire import (
    BYTES,
    FIXED32,
    FIXED64,
    VARINT,
    Field,
    ProtoError,
    encode,
    encode_varint,
    parse,
    read_varint,
)

FIELDS = st.lists(
    st.one_of(
        st.builds(Field, st.integers(1, 2**29 - 1), st.just(VARINT), st.integers(0, 2**64 - 1)),
        st.builds(Field, st.integers(1, 2**29 - 1), st.just(BYTES), st.binary(max_size=64)),
        st.builds(Field, st.integers(1, 100), st.just(FIXED32), st.binary(min_size=4, max_size=4)),
        st.builds(Field, st.integers(1, 100), st.just(FIXED64), st.binary(min_size=8, max_size=8)),
    ),
    max_size=20,
)


@given(FIELDS)
def test_round_trip(fields: list[Field]) -> None:
    assert parse(encode(fields)) == fields


def test_varints() -> None:
    assert encode_varint(300) == b"\xac\x02"
    assert read_varint(b"\xac\x02", 0) == (300, 2)
    assert encode_varint(-1) == b"\xff" * 9 + b"\x01"
    with pytest.raises(ProtoError, match="truncated"):
        read_varint(b"\x80", 0)


@given(st.binary(max_size=512))
def test_garbage_raises_only_proto_error(data: bytes) -> None:
    with contextlib.suppress(ProtoError):
        parse(data)


def test_envelope_round_trip_keeps_other_fields() -> None:
    type_meta = encode([Field(1, BYTES, b"v1"), Field(2, BYTES, b"Secret")])
    body = envelope.MAGIC + encode(
        [Field(1, BYTES, type_meta), Field(2, BYTES, b"\x0a\x00"), Field(4, BYTES, b"")]
    )
    wrapped = envelope.unwrap(body)
    assert (wrapped.api_version, wrapped.kind, wrapped.raw) == ("v1", "Secret", b"\x0a\x00")
    rewritten = envelope.with_raw(body, b"\x0a\x01x")
    assert envelope.unwrap(rewritten).raw == b"\x0a\x01x"
    assert envelope.unwrap(rewritten).kind == "Secret"
    with pytest.raises(ProtoError):
        envelope.unwrap(b'{"kind":"Secret"}')
