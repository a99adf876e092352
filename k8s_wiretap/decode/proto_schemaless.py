"""Protobuf without a schema: field numbers as keys, guessing what length-delimited bytes are.

For a kind the schema does not know, and for unknown fields of a known message. A
length-delimited value becomes, in this order: a nested `k8s\\0` object, printable UTF-8 text
(no control characters: field keys of a message almost always are), a nested message if the
bytes parse as one exactly, other UTF-8 text, or else hex.
A field seen more than once becomes a list.
"""

from __future__ import annotations

from typing import Any

from k8s_wiretap.decode.proto_errors import DecodeError
from k8s_wiretap.decode.proto_wire import read_varint, skip_field
from k8s_wiretap.wire.envelope import MAGIC

__all__ = ["MAX_DEPTH", "decode_schemaless", "schemaless_value"]

MAX_DEPTH = 32
VARINT, FIXED64, BYTES, FIXED32 = 0, 1, 2, 5


def _fields(raw: bytes) -> list[tuple[int, int | bytes]]:
    """(key, value) of every field; DecodeError (or IndexError, truncated) if malformed."""
    fields = []
    pos, end = 0, len(raw)
    while pos < end:
        tag, pos = read_varint(raw, pos)
        pos, value = skip_field(raw, pos, end, tag)
        fields.append((tag, value))
    if pos != end:
        raise DecodeError("truncated")
    return fields


def _as_message(raw: bytes, depth: int) -> dict[str, Any] | None:
    if not raw or depth >= MAX_DEPTH:
        return None
    try:
        fields = _fields(raw)
    except (DecodeError, IndexError):
        return None
    return _collect(fields, depth + 1)


def _length_delimited(raw: bytes, depth: int) -> Any:
    if raw[:4] == MAGIC and depth < MAX_DEPTH:
        from k8s_wiretap.decode.protobuf import decode_object

        try:
            return decode_object(raw)
        except DecodeError:
            pass
    try:
        text: str | None = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and text.isprintable():
        return text
    message = _as_message(raw, depth)
    if message is not None:
        return message
    return text if text is not None else raw.hex()


def schemaless_value(wire_type: int, raw: int | bytes, depth: int = 0) -> Any:
    """One field's value: varints as numbers, fixed as little-endian unsigned numbers."""
    if isinstance(raw, int):
        return raw
    if wire_type != BYTES:
        return int.from_bytes(raw, "little")
    return _length_delimited(raw, depth)


def _collect(fields: list[tuple[int, int | bytes]], depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    repeated: set[str] = set()
    for tag, raw in fields:
        key, value = str(tag >> 3), schemaless_value(tag & 7, raw, depth)
        if key not in out:
            out[key] = value
        elif key in repeated:
            out[key].append(value)
        else:
            out[key] = [out[key], value]
            repeated.add(key)
    return out


def decode_schemaless(raw: bytes) -> dict[str, Any]:
    """A message read without a schema: {"<field number>": value or [values]}."""
    try:
        return _collect(_fields(raw), 0)
    except IndexError:
        raise DecodeError("truncated") from None
