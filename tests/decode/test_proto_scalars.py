"""Go's scalars: embedded JSON is read exactly as Python's json reads it, whichever reader ran."""

from __future__ import annotations

import json

import pytest

from k8s_wiretap.decode.proto_scalars import GO_UTF8, embedded_json
from k8s_wiretap.wire.protowire import ProtoError


@pytest.mark.parametrize(
    "raw",
    [
        b'{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}',
        b"[18446744073709551616, -9223372036854775809, 123456789012345678]",
        b'{"big": 1234567890123456789012345}',
        b"[1e400, -0.0, 0.1]",
        b'"\\ud800"',
        b'{"a": "\xff"}',
        b'{"a": 1, "a": 2}',
    ],
)
def test_embedded_json_reads_as_json_does(raw: bytes) -> None:
    expected = json.loads(raw.decode("utf-8", GO_UTF8))
    found = embedded_json(raw)
    assert repr(found) == repr(expected)


@pytest.mark.parametrize("raw", [b"NaN", b"[Infinity]", b"", b"{", b"\xef\xbb\xbf{}"])
def test_what_is_not_json_is_refused(raw: bytes) -> None:
    with pytest.raises(ProtoError):
        embedded_json(raw)
