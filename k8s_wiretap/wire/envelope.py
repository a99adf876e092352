"""The Kubernetes protobuf envelope: `k8s\\0` + runtime.Unknown; the one parser of it.

apimachinery pkg/runtime/serializer/protobuf: a body (and an etcd value) is the 4-byte magic
followed by `runtime.Unknown {typeMeta=1 {apiVersion=1, kind=2}, raw=2, contentEncoding=3,
contentType=4}`; `raw` holds the object's own message, without type information.

`unwrap` reads it as gogo's `Unknown.Unmarshal` does: the last value of a field wins, a
typeMeta seen twice merges field by field, unknown fields are skipped, a known field with the
wrong wire type is an error. The decoder (k8s_wiretap.decode) and redaction
(capture/redact.py) both read envelopes here, so they never disagree on an object's kind.
Unlike Go, the four strings must be UTF-8 (they are type names the server writes in ASCII; an
envelope whose kind is not text names nothing either reader could trust): ProtoError if not.
"""

from __future__ import annotations

from dataclasses import dataclass

from k8s_wiretap.wire.protowire import (
    BYTES,
    Field,
    ProtoError,
    encode,
    parse,
    read_value,
    read_varint,
)

__all__ = ["MAGIC", "Envelope", "is_protobuf", "unwrap", "unwrap_fields", "with_raw"]

MAGIC = b"k8s\x00"
# runtime.Unknown's fields, and runtime.TypeMeta's, each length-delimited.
TYPE_META, RAW, CONTENT_ENCODING, CONTENT_TYPE = 1, 2, 3, 4
API_VERSION, KIND = 1, 2
# Their keys (number << 3 | wire type).
_TYPE_META, _RAW, _CONTENT_ENCODING, _CONTENT_TYPE = (n << 3 | BYTES for n in range(1, 5))
_ENVELOPE_KEYS = frozenset((_TYPE_META, _RAW, _CONTENT_ENCODING, _CONTENT_TYPE))
_API_VERSION, _KIND = API_VERSION << 3 | BYTES, KIND << 3 | BYTES


@dataclass(frozen=True)
class Envelope:
    api_version: str
    kind: str
    raw: bytes
    content_encoding: str = ""
    content_type: str = ""


def is_protobuf(data: bytes) -> bool:
    return data[:4] == MAGIC


def _other(data: bytes, key: int, offset: int, end: int, known: int, message: str) -> int:
    """Skip a field that is not one of the strings read: unknown, or wrong (an error)."""
    if 0 < key >> 3 <= known:
        raise ProtoError(f"{message} field {key >> 3}: wire type {key & 7}, not length-delimited")
    return read_value(data, key, offset, end)[1]


def unwrap_fields(data: bytes) -> tuple[str, str, bytes, str, str]:
    """`unwrap`, as a tuple (api_version, kind, raw, content_encoding, content_type).

    Once per decoded object (nested ones included), hence inline reading of the common case:
    one-byte keys, one- and two-byte lengths; IndexError past the end is caught.
    """
    if data[:4] != MAGIC:
        raise ProtoError("no k8s\\0 magic")
    api_version = kind = encoding = content_type = ""
    raw = b""
    offset, end = len(MAGIC), len(data)
    try:
        while offset < end:
            key = data[offset]
            if key < 0x80:
                offset += 1
            else:
                key, offset = read_varint(data, offset)
            if key not in _ENVELOPE_KEYS:
                offset = _other(data, key, offset, end, CONTENT_TYPE, "envelope")
                continue
            size = data[offset]
            if size < 0x80:
                offset += 1
            elif data[offset + 1] < 0x80:
                size = (size & 0x7F) | data[offset + 1] << 7
                offset += 2
            else:
                size, offset = read_varint(data, offset)
            start, offset = offset, offset + size
            if offset > end:
                raise ProtoError(f"envelope field {key >> 3} runs past the end")
            if key == _RAW:
                raw = data[start:offset]
            elif key == _TYPE_META:  # seen twice, they merge: the fields it has replace
                while start < offset:
                    key = data[start]
                    if key < 0x80:
                        start += 1
                    else:
                        key, start = read_varint(data, start)
                    if key != _API_VERSION and key != _KIND:
                        start = _other(data, key, start, offset, KIND, "typeMeta")
                        continue
                    size = data[start]
                    if size < 0x80:
                        start += 1
                    else:
                        size, start = read_varint(data, start)
                    stop = start + size
                    if stop > offset:
                        raise ProtoError(f"typeMeta field {key >> 3} runs past the end")
                    if key == _API_VERSION:
                        api_version = data[start:stop].decode("utf-8")
                    else:
                        kind = data[start:stop].decode("utf-8")
                    start = stop
                if start != offset:
                    raise ProtoError("typeMeta runs past the end")
            elif key == _CONTENT_ENCODING:
                encoding = data[start:offset].decode("utf-8")
            else:
                content_type = data[start:offset].decode("utf-8")
    except IndexError:
        raise ProtoError("envelope truncated") from None
    except UnicodeDecodeError:
        raise ProtoError("envelope type or content strings are not UTF-8") from None
    return api_version, kind, raw, encoding, content_type


def unwrap(data: bytes) -> Envelope:
    """Split an enveloped body; ProtoError if it is not one (see the module docstring)."""
    return Envelope(*unwrap_fields(bytes(data)))


def with_raw(data: bytes, raw: bytes) -> bytes:
    """The same envelope with `raw` replaced, every other field kept as it was."""
    fields = parse(data[4:])
    rewritten = [Field(RAW, BYTES, raw) if f.number == RAW else f for f in fields]
    return MAGIC + encode(rewritten)
