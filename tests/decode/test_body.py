"""Any body decodes or says why not, with a hex preview; nothing raises."""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from k8s_wiretap.decode.body import decode_body


def test_json_yaml_text_gzip() -> None:
    document = {"kind": "Pod", "metadata": {"name": "p"}}
    assert decode_body(json.dumps(document).encode(), "application/json").value == document
    table = decode_body(
        b'{"kind":"Table","rows":[]}', "application/json;as=Table;v=v1;g=meta.k8s.io"
    )
    assert table.format == "json" and table.value["kind"] == "Table"
    applied = decode_body(b"kind: ConfigMap\ndata: {a: b}\n", "application/apply-patch+yaml")
    assert applied.format == "yaml" and applied.value == {"kind": "ConfigMap", "data": {"a": "b"}}
    assert decode_body(b"ok", "text/plain; charset=utf-8").value == "ok"
    zipped = decode_body(gzip.compress(json.dumps(document).encode()), "application/json")
    assert zipped.value == document
    assert decode_body(b"", "application/json").format == "empty"


def test_undecodable_bodies_say_why_with_a_preview() -> None:
    broken = decode_body(b'{"kind": "Pod", "metadata": {"na', "application/json")
    assert not broken.ok and broken.error is not None
    assert broken.error.startswith("undecodable: JSONDecodeError")
    assert "7b 22 6b 69 6e 64" in broken.error  # {"kind
    binary = decode_body(bytes(range(200, 256)), "application/octet-stream")
    assert binary.error is not None and "no decoder" in binary.error and "…" in binary.error
    cut = decode_body(b'{"kind": "Pod"}', "application/json", truncated=True)
    assert cut.error is not None and "size cap" in cut.error
    bad_gzip = decode_body(b"\x1f\x8b\x08garbage", "application/json")
    assert bad_gzip.error is not None and "gzip" in bad_gzip.error


@given(
    st.binary(max_size=400),
    st.sampled_from(
        [
            "",
            "application/json",
            "application/yaml",
            "application/vnd.kubernetes.protobuf",
            "application/apply-patch+yaml",
            "text/plain",
            "application/vnd.kubernetes.protobuf;stream=watch",
        ]
    ),
)
def test_random_bytes_never_raise(data: bytes, content_type: str) -> None:
    decoded = decode_body(data, content_type)
    assert decoded.ok or (decoded.error or "").startswith("undecodable: ")


@given(st.binary(max_size=400))
def test_random_bytes_after_the_protobuf_magic_never_raise(data: bytes) -> None:
    decoded = decode_body(b"k8s\x00" + data, "application/vnd.kubernetes.protobuf")
    assert decoded.ok or (decoded.error or "").startswith("undecodable: ")


JSON_EDGES = [
    b'{"a":1,"b":[true,null,-0,-0.0,1.5e3],"a":2}',  # a repeated key: the last value, first place
    b"123456789012345678901234567890",  # past 64 bits
    b"0.12345678901234567890123",  # digits past a float's
    b"[NaN, Infinity, -Infinity]",
    b"1E400",  # a float that overflows
    b'"\\ud800 \\udc00"',  # lone surrogates, escaped
    b'"\xed\xa0\x80"',  # a surrogate, encoded
    b'\xef\xbb\xbf{"bom": 1}',
    '{"utf16": 1}'.encode("utf-16-le"),
    b"[1,]",
    b'"\xff"',
]


@pytest.mark.parametrize("data", JSON_EDGES)
def test_json_is_what_json_loads_gives(data: bytes) -> None:
    """Bodies are parsed by orjson where it reads alike, by json otherwise: the same value,
    or the same error, as json.loads."""
    try:
        expected = ("json", json.loads(data))
    except ValueError as error:
        expected = ("binary", f"{type(error).__name__}: {error}")
    decoded = decode_body(data, "application/json")
    if expected[0] == "json":
        assert decoded.format == "json" and repr(decoded.value) == repr(expected[1])
    else:
        assert decoded.error is not None and expected[1][:60] in decoded.error
