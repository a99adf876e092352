"""The protobuf wire format: the project's one reader (and writer) of protobuf bytes.

Everything that reads protobuf reads it here: the Kubernetes decoder (k8s_wiretap.decode, whose
hot loop inlines one- and two-byte varints and calls `read_varint` and `read_value` for the
rest), the `k8s\\0` envelope (envelope.py), redaction (capture/redact.py) and gnostic OpenAPI
(decode/gnostic.py). The rules are those of gogo's generated Unmarshal code, which the API
server runs, except that groups are refused:

- a varint is at most 10 bytes and wraps to 64 bits (bits a 10th byte carries past bit 63 are
  dropped, as Go's `uint64` shift drops them); an 11th byte is an error;
- a field key is a varint `number << 3 | wire type`; field number 0 is refused, and so are wire
  types other than 0 (varint), 1 (fixed64), 2 (length-delimited) and 5 (fixed32): groups (3, 4)
  are obsolete and never written by Kubernetes, 6 and 7 do not exist;
- a value (length-delimited, fixed-size, or a varint) that runs past the end of its message is
  refused.

Anything else raises `ProtoError`, the one error of protobuf reading. The decoder's
`DecodeError` is the same class (k8s_wiretap/decode/protobuf.py says why).

Schemaless use (redaction, gnostic, unknown kinds): `parse` and `iter_fields` give
`Field(number, wire_type, value)`: varint → int, fixed64/fixed32 → the raw 8/4 bytes,
length-delimited → bytes; `encode` writes fields back.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

__all__ = [
    "BYTES",
    "FIXED32",
    "FIXED64",
    "MASK64",
    "VARINT",
    "Field",
    "ProtoError",
    "encode",
    "encode_varint",
    "iter_fields",
    "parse",
    "read_value",
    "read_varint",
]

VARINT, FIXED64, BYTES, FIXED32 = 0, 1, 2, 5
MASK64 = (1 << 64) - 1


class ProtoError(ValueError):
    """Bytes that are not the protobuf they claim to be, with a short reason."""


@dataclass(frozen=True, slots=True)
class Field:
    number: int
    wire_type: int
    value: int | bytes


def read_varint(data: bytes, offset: int) -> tuple[int, int]:
    """The varint at `offset` (wrapped to 64 bits) and the offset after it.

    Reads at most 10 bytes and never past the end of `data`. A caller reading inside a
    message that ends before `data` does checks the returned offset against that end.
    """
    try:
        byte = data[offset]
        if byte < 0x80:
            return byte, offset + 1
        result = byte & 0x7F
        shift = 7
        while shift < 70:
            offset += 1
            byte = data[offset]
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                return (result & MASK64 if shift == 63 else result), offset + 1
            shift += 7
    except IndexError:
        raise ProtoError("truncated varint") from None
    raise ProtoError("varint longer than 10 bytes")


def read_value(data: bytes, key: int, offset: int, end: int) -> tuple[int | bytes, int]:
    """The value of the field with `key` at `offset`, in a message ending at `end`.

    An int for a varint, the raw bytes otherwise; and the offset after it.
    """
    if key < 8:
        raise ProtoError("field number 0")
    wire_type = key & 7
    if wire_type == VARINT:
        value, offset = read_varint(data, offset)
        if offset > end:
            raise ProtoError(f"field {key >> 3} runs past the end")
        return value, offset
    if wire_type == BYTES:
        size, offset = read_varint(data, offset)
    elif wire_type == FIXED64:
        size = 8
    elif wire_type == FIXED32:
        size = 4
    else:
        raise ProtoError(f"wire type {wire_type} (field {key >> 3})")
    stop = offset + size
    if stop > end:
        raise ProtoError(f"field {key >> 3} runs past the end")
    return data[offset:stop], stop


def iter_fields(data: bytes, start: int = 0, end: int | None = None) -> Iterator[Field]:
    """The fields of the message in data[start:end], in wire order; ProtoError if malformed."""
    if not isinstance(data, bytes):
        data = bytes(data)
    end = len(data) if end is None else end
    offset = start
    while offset < end:
        key, offset = read_varint(data, offset)
        value, offset = read_value(data, key, offset, end)
        yield Field(key >> 3, key & 7, value)


def parse(data: bytes) -> list[Field]:
    """Every field of a message, in wire order; ProtoError if malformed."""
    return list(iter_fields(data))


def encode_varint(value: int) -> bytes:
    """A varint; a negative value as its 64-bit two's complement (ten bytes)."""
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
