"""Protobuf without a schema: field numbers as keys, guessing what length-delimited bytes are.

For a kind the schema does not know, and for unknown fields of a known message. Fields are
read by the one wire reader (k8s_wiretap.wire.protowire). A length-delimited value becomes, in
this order: a nested `k8s\\0` object (decoded by `nested`, which the caller passes: the full
decoder sits above this module), printable UTF-8 text (no control characters: field keys of a
message almost always are), a nested message if the bytes parse as one exactly, other UTF-8
text, or else hex. A field seen more than once becomes a list.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from k8s_wiretap.wire.envelope import MAGIC
from k8s_wiretap.wire.protowire import BYTES, Field, ProtoError, parse

__all__ = ["MAX_DEPTH", "Nested", "decode_schemaless", "schemaless_value"]

MAX_DEPTH = 32
# Decodes a nested `k8s\0` object; ProtoError if it is not one (then it is read as bytes).
Nested = Callable[[bytes], Any]


def _as_message(raw: bytes, depth: int, nested: Nested | None) -> dict[str, Any] | None:
    if not raw or depth >= MAX_DEPTH:
        return None
    try:
        fields = parse(raw)
    except ProtoError:
        return None
    return _collect(fields, depth + 1, nested)


def _length_delimited(raw: bytes, depth: int, nested: Nested | None) -> Any:
    if nested is not None and raw[:4] == MAGIC and depth < MAX_DEPTH:
        try:
            return nested(raw)
        except ProtoError:
            pass
    try:
        text: str | None = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and text.isprintable():
        return text
    message = _as_message(raw, depth, nested)
    if message is not None:
        return message
    return text if text is not None else raw.hex()


def schemaless_value(
    wire_type: int, raw: int | bytes, depth: int = 0, nested: Nested | None = None
) -> Any:
    """One field's value: varints as numbers, fixed as little-endian unsigned numbers."""
    if isinstance(raw, int):
        return raw
    if wire_type != BYTES:
        return int.from_bytes(raw, "little")
    return _length_delimited(raw, depth, nested)


def _collect(fields: list[Field], depth: int, nested: Nested | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    repeated: set[str] = set()
    for field in fields:
        key = str(field.number)
        value = schemaless_value(field.wire_type, field.value, depth, nested)
        if key not in out:
            out[key] = value
        elif key in repeated:
            out[key].append(value)
        else:
            out[key] = [out[key], value]
            repeated.add(key)
    return out


def decode_schemaless(raw: bytes, nested: Nested | None = None) -> dict[str, Any]:
    """A message read without a schema: {"<field number>": value or [values]}.

    ProtoError if `raw` is not a message; nested `k8s\\0` objects are decoded by `nested`
    (None: they are read like any other bytes).
    """
    return _collect(parse(raw), 0, nested)
