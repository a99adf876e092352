"""Where one CBOR data item ends (RFC 8949 section 3), for cutting a CBOR Sequence (RFC 8742).

A CBOR watch stream (`application/cbor-seq`) is data items one after another, with nothing
between them: each event is one item (apimachinery runtime/serializer/cbor/framer.go, which
lets the data items delimit themselves, as JSON objects do). Finding an item's end needs
only the heads of the items inside it — major type, argument, and for indefinite lengths the
break — never their values, so this reads heads and skips the rest; decoding the values is
k8s_wiretap.decode.cbor's job.

`item_end(data, start)` is the offset just past the item that starts at `start`, None when
`data` ends inside it (wait for more bytes), and CborError when the bytes cannot be CBOR
(reserved additional information 28-30, a break outside an indefinite-length item, an
indefinite-length string whose chunks are not of its type, nesting deeper than `MAX_DEPTH`).
"""

from __future__ import annotations

__all__ = ["MAX_DEPTH", "SELF_DESCRIBED", "CborError", "item_end", "self_described"]

# The head of tag 55799, "self-described CBOR" (RFC 8949 section 3.4.6): apimachinery's CBOR
# serializer writes it before every object it encodes (cbor.go `selfDescribedCBOR`) and
# recognizes CBOR by it.
SELF_DESCRIBED = b"\xd9\xd9\xf7"
MAX_DEPTH = 10_000  # as apimachinery's decoder (internal/modes/decode.go MaxNestedLevels)
_BREAK = 0xFF


class CborError(ValueError):
    """Bytes that are not well-formed CBOR."""


def self_described(data: bytes) -> bool:
    """Whether `data` starts as apimachinery's CBOR always does."""
    return data[:3] == SELF_DESCRIBED


def _head(data: bytes, offset: int) -> tuple[int, int | None, int] | None:
    """(major type, argument or None for indefinite length, offset after the head)."""
    if offset >= len(data):
        return None
    initial = data[offset]
    major, info = initial >> 5, initial & 0x1F
    if info < 24:
        return major, info, offset + 1
    if info in (28, 29, 30):
        raise CborError(f"reserved additional information {info} at offset {offset}")
    if info == 31:
        if major in (0, 1, 6):
            raise CborError(f"indefinite length for major type {major} at offset {offset}")
        return major, None, offset + 1
    size = 1 << (info - 24)
    end = offset + 1 + size
    if end > len(data):
        return None
    return major, int.from_bytes(data[offset + 1 : end], "big"), end


def item_end(data: bytes, start: int = 0) -> int | None:
    """The offset just past the data item at `start`; None if `data` ends inside it."""
    # Open items, innermost last: how many items each still holds (None: until a break) and,
    # for an indefinite-length string, the major type its chunks must have.
    stack: list[tuple[int | None, int | None]] = [(1, None)]
    offset = start
    while stack:
        left, chunks = stack[-1]
        if left == 0:
            stack.pop()
            continue
        if offset >= len(data):
            return None
        if data[offset] == _BREAK:
            if left is not None:
                raise CborError(f"a break outside an indefinite-length item at offset {offset}")
            stack.pop()
            offset += 1
            continue
        head = _head(data, offset)
        if head is None:
            return None
        major, argument, after = head
        if chunks is not None and (major != chunks or argument is None):
            raise CborError(f"a bad chunk in an indefinite-length string at offset {offset}")
        if major == 7 and argument is not None and data[offset] & 0x1F == 24 and argument < 32:
            raise CborError(f"simple value {argument} in two bytes at offset {offset}")
        if left is not None:
            stack[-1] = (left - 1, chunks)
        offset = after
        if major in (2, 3) and argument is not None:
            offset += argument
            if offset > len(data):
                return None
        elif major in (2, 3, 4, 5, 6):
            if len(stack) > MAX_DEPTH:
                raise CborError(f"nested deeper than {MAX_DEPTH}")
            if major in (2, 3):
                stack.append((None, major))
            elif major == 6:
                stack.append((1, None))
            else:
                pairs = 2 if major == 5 else 1
                stack.append((None if argument is None else pairs * argument, None))
    return offset
