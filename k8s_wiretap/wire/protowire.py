"""The protobuf wire format, schemaless: parse a message into fields and write it back.

Enough to find and rewrite fields by number (redaction) and to show an unknown message
(decoding). A field is `(number, wire_type, value)`: varint → int, fixed64/fixed32 → the raw
8/4 bytes, length-delimited → bytes. Groups (wire types 3, 4) are obsolete and rejected.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

__all__ = [
    "BYTES",
    "FIXED32",
    "FIXED64",
    "VARINT",
    "Field",
    "ProtoError",
    "encode",
    "encode_varint",
    "parse",
    "read_varint",
]

VARINT, FIXED64, BYTES, FIXED32 = 0, 1, 2, 5


class ProtoError(ValueError):
    """Bytes that are not a protobuf message."""


@dataclass(frozen=True)
class Field:
    number: int
    wire_type: int
    value: int | bytes


def read_varint(data: bytes | memoryview, offset: int) -> tuple[int, int]:
    """The varint at `offset` and the offset after it."""
    result = shift = 0
    while True:
        if offset >= len(data):
            raise ProtoError("truncated varint")
        byte = data[offset]
        offset += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, offset
        shift += 7
        if shift >= 64:
            raise ProtoError("varint longer than 10 bytes")


def encode_varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def iter_fields(data: bytes) -> Iterator[Field]:
    """Fields in wire order; ProtoError on anything malformed."""
    view = memoryview(data)
    offset = 0
    while offset < len(view):
        key, offset = read_varint(view, offset)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise ProtoError("field number 0")
        if wire_type == VARINT:
            value, offset = read_varint(view, offset)
            yield Field(number, wire_type, value)
            continue
        if wire_type == BYTES:
            size, offset = read_varint(view, offset)
        elif wire_type in (FIXED64, FIXED32):
            size = 8 if wire_type == FIXED64 else 4
        else:
            raise ProtoError(f"unsupported wire type {wire_type}")
        if offset + size > len(view):
            raise ProtoError(f"field {number} runs past the end")
        yield Field(number, wire_type, bytes(view[offset : offset + size]))
        offset += size


def parse(data: bytes) -> list[Field]:
    return list(iter_fields(data))


def encode(fields: list[Field]) -> bytes:
    out = bytearray()
    for field in fields:
        out += encode_varint(field.number << 3 | field.wire_type)
        if field.wire_type == VARINT:
            assert isinstance(field.value, int)
            out += encode_varint(field.value)
        else:
            assert isinstance(field.value, bytes)
            if field.wire_type == BYTES:
                out += encode_varint(len(field.value))
            out += field.value
    return bytes(out)
