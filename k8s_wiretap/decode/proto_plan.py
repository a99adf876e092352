"""A compiled message: read its protobuf fields into slots, then render them as Go's JSON would.

A `Plan` is made once per message (proto_compile.py) from the schema:

- `dispatch` maps a field key (number << 3 | wire type) to `(op, slot, sub)`: how to read the
  value and where to keep it; `table` holds the same entries in a tuple indexed by the key,
  which the hot loop reads: one index per field, no string looked up.
- `render` lists `(json key, slot, mode, arg)` in Go field order; `mode` is the encoding/json
  rule for the field's Go kind (omitempty, pointer, value struct, inline, map...).

Presence on the wire is Go's nil-ness: gogo writes non-pointer scalars always and pointers,
slices, maps and bytes only when non-nil, so an absent slot renders as the Go zero value
(`null` for nil, "" / 0 / false for scalars, the zero struct for a value struct).
Fields a message does not declare are kept, decoded schemaless, under "$unknownFields".

Bytes are read by the rules of the one wire reader (k8s_wiretap.wire.protowire): the hot loop
inlines one- and two-byte varints and leaves longer ones, and fields it does not know, to
`read_varint` and `read_value`. Its bounds: a value that runs past the end of its message
raises ProtoError, a varint that does ends the loop past the end (ProtoError "truncated"), and
an inlined read past the end of the whole buffer is caught as IndexError and raised as
ProtoError; nothing else escapes.

A plan meets nested `k8s\\0` objects (a RawExtension, unknown fields read schemaless) that only
the whole decoder can decode; `nested`, which the compiler (proto_compile.py) sets on every
plan, is that decoder.
"""

from __future__ import annotations

import struct
from typing import Any

from k8s_wiretap.decode.proto_scalars import GO_UTF8, b64, go_float
from k8s_wiretap.decode.proto_schemaless import Nested, schemaless_value
from k8s_wiretap.wire.protowire import ProtoError, read_value, read_varint

__all__ = ["UNKNOWN_FIELDS", "Plan", "Slots", "Typed"]

UNKNOWN_FIELDS = "$unknownFields"
SIGN64, TWO64 = 1 << 63, 1 << 64

# Read ops. Below OP_VARINT the value is length-delimited.
OP_STRING, OP_MESSAGE, OP_REP_MESSAGE, OP_REP_STRING, OP_BYTES = 0, 1, 2, 3, 4
OP_MAP, OP_PACKED, OP_RAW_BYTES, OP_REP_BYTES = 5, 6, 7, 8
OP_VARINT = 10  # sub: a converter (int32, uint32, uint64)
OP_BOOL, OP_INT64, OP_REP_VARINT = 11, 12, 13
OP_FIXED = 14  # sub: (struct, repeated)

# Render modes. Below M_DEFAULT an absent field is left out; from it on, written anyway.
M_OMIT = 0  # omitempty scalar, slice, bytes: written when not empty
M_PRESENT = 1  # omitempty pointer: written when present
M_MESSAGE_PTR = 2  # omitempty pointer to a message: written when present
M_OMIT_NULL = 3  # omitzero value struct whose JSON is null when zero (a Time): left out then
M_MAP = 4  # omitempty map: keys sorted
M_MESSAGE_SLICE = 5  # omitempty named slice in a wrapper message (Verbs): written when not empty
M_INLINE_PTR = 6  # embedded pointer to a struct: its fields in place when present
M_DEFAULT = 7  # written always: the value, or arg (the Go zero value) when absent
M_MESSAGE = 8  # value struct: always written, the zero struct when absent
M_MESSAGE_NULL = 9  # pointer without omitempty: the message, or null
M_MAP_NULL = 10  # map without omitempty: keys sorted, null when absent
M_INLINE = 11  # embedded struct: its fields in place
M_TYPE_META = 12  # the Go-only TypeMeta of a top-level kind: kind and apiVersion from the envelope

# A message span: (buffer, start, stop); merged duplicates get a buffer of their own.
Span = tuple[bytes, int, int]
Slots = list[Any]
Unknown = list[tuple[int, int | bytes]]
NO_TYPE_META: tuple[str, str] = ("", "")
Entry = tuple[int, int, Any]


class Plan:
    """How to read and render one message; specials override `decode`."""

    __slots__ = (
        "blank",
        "dispatch",
        "items",
        "merge",
        "name",
        "nested",
        "render",
        "size",
        "table",
    )

    def __init__(self, name: str) -> None:
        self.name = name
        self.nested: Nested | None = None  # set by the compiler
        self.dispatch: dict[int, tuple[int, int, Any]] = {}
        self.table: tuple[Entry | None, ...] = ()  # dispatch as a list indexed by key: seal()
        self.render: tuple[tuple[str, int, int, Any], ...] = ()
        self.size = 0
        self.blank: Slots = []  # size empty slots, copied for each message: seal()
        self.merge = True  # duplicates of a singular field of this type merge (else: last wins)
        self.items = -1  # a list type's "items" slot

    def seal(self) -> None:
        """Build `table` from `dispatch`, once every entry is in (the compiler calls it).

        Indexing a tuple by the key is faster than a dict lookup, and the keys are small
        (Kubernetes field numbers stay below 64, so a table has at most ~512 entries). It
        covers every one-byte key (below 0x80), so those need no bounds check.
        """
        size = max(0x80, max(self.dispatch, default=0) + 1)
        self.table = tuple(self.dispatch.get(tag) for tag in range(size))
        self.blank = [None] * self.size  # copying a list is faster than [None] * size

    def decode(self, buf: bytes, pos: int, end: int) -> Any:
        """The JSON value of the message in buf[pos:end]."""
        slots, unknown = self.parse(buf, pos, end)
        out: dict[str, Any] = {}
        extra = self.render_into(out, slots, unknown, NO_TYPE_META)
        if extra:
            out[UNKNOWN_FIELDS] = extra
        return out

    def decode_object(self, buf: bytes, pos: int, end: int, type_meta: tuple[str, str]) -> Any:
        """An object with its type: kind and apiVersion where its TypeMeta is.

        Like the API server's handlers, which set an empty list's items to [] rather than
        nil (setObjectSelfLink), a list's missing items render as [].
        """
        slots, unknown = self.parse(buf, pos, end)
        if self.items >= 0 and slots[self.items] is None:
            slots[self.items] = []
        out: dict[str, Any] = {}
        extra = self.render_into(out, slots, unknown, type_meta)
        if extra:
            out[UNKNOWN_FIELDS] = extra
        return out

    def parse(self, buf: bytes, pos: int, end: int) -> tuple[Slots, Unknown | None]:
        """Read every field of buf[pos:end] into slots (see the module docstring).

        The hot loop of the decoder, hence one long function with the common cases (one- and
        two-byte varints, strings, messages) inline and the rare ones in helpers.
        """
        slots: Slots = self.blank.copy()
        table = self.table
        known = len(table)
        unknown: Unknown | None = None
        try:
            while pos < end:
                tag = buf[pos]
                if tag < 0x80:  # the table covers every one-byte key
                    pos += 1
                    entry = table[tag]
                else:
                    if buf[pos + 1] < 0x80:
                        tag = (tag & 0x7F) | buf[pos + 1] << 7
                        pos += 2
                    else:
                        tag, pos = read_varint(buf, pos)
                    entry = table[tag] if tag < known else None
                if entry is None:
                    value, pos = read_value(buf, tag, pos, end)
                    unknown = [*unknown, (tag, value)] if unknown else [(tag, value)]
                    continue
                op, slot, sub = entry
                if op < OP_VARINT:
                    size = buf[pos]
                    if size < 0x80:
                        pos += 1
                    elif buf[pos + 1] < 0x80:
                        size = (size & 0x7F) | buf[pos + 1] << 7
                        pos += 2
                    else:
                        size, pos = read_varint(buf, pos)
                    stop = pos + size
                    if stop > end:
                        raise ProtoError(f"{self.name}: field {tag >> 3} runs past the end")
                    if op == OP_STRING:
                        try:  # the default arguments are the fast path of bytes.decode
                            slots[slot] = buf[pos:stop].decode()
                        except UnicodeDecodeError:  # invalid UTF-8: as Go reads it
                            slots[slot] = buf[pos:stop].decode("utf-8", GO_UTF8)
                    elif op == OP_MESSAGE:
                        old = slots[slot]
                        slots[slot] = (
                            (buf, pos, stop) if old is None else _merge(old, sub, buf, pos, stop)
                        )
                    elif op == OP_REP_MESSAGE:
                        items = slots[slot]
                        if items is None:
                            slots[slot] = [sub.decode(buf, pos, stop)]
                        else:
                            items.append(sub.decode(buf, pos, stop))
                    elif op == OP_REP_STRING:
                        items = slots[slot]
                        if items is None:
                            slots[slot] = [buf[pos:stop].decode("utf-8", GO_UTF8)]
                        else:
                            items.append(buf[pos:stop].decode("utf-8", GO_UTF8))
                    elif op == OP_MAP:
                        entries = slots[slot]
                        if entries is None:
                            entries = slots[slot] = {}
                        key, value = sub.entry(buf, pos, stop)
                        entries[key] = value
                    else:
                        _length_delimited(slots, op, slot, sub, buf, pos, stop)
                    pos = stop
                elif op == OP_FIXED:
                    pos = _fixed(slots, slot, sub, buf, pos, end)
                else:
                    value = buf[pos]
                    if value < 0x80:
                        pos += 1
                    else:
                        value, pos = read_varint(buf, pos)
                    if op == OP_BOOL:
                        slots[slot] = value != 0
                    elif op == OP_INT64:
                        slots[slot] = value - TWO64 if value >= SIGN64 else value
                    elif op == OP_VARINT:
                        slots[slot] = sub(value)
                    else:  # OP_REP_VARINT
                        _append(slots, slot, sub(value))
        except IndexError:  # an inlined read past the end of the buffer
            raise ProtoError(f"{self.name}: truncated") from None
        if pos != end:
            raise ProtoError(f"{self.name}: truncated")
        return slots, unknown

    def render_into(
        self, out: dict[str, Any], slots: Slots, unknown: Unknown | None, type_meta: tuple[str, str]
    ) -> dict[str, Any] | None:
        """Write the fields into `out` in Go order; return the unknown fields, if any."""
        extra = _unknown_fields(unknown, self.nested) if unknown else None
        for key, slot, mode, arg in self.render:
            value = slots[slot]
            if value is None and mode < M_DEFAULT:  # absent, left out: 40% of fields
                continue
            if mode == M_OMIT:
                if value:
                    out[key] = value
            elif mode == M_DEFAULT:
                out[key] = arg if value is None else value
            elif mode == M_MESSAGE:
                out[key] = (
                    arg.decode(value[0], value[1], value[2]) if value else arg.decode(b"", 0, 0)
                )
            elif mode == M_PRESENT:
                if value is not None:
                    out[key] = value
            elif mode == M_MESSAGE_PTR:
                if value:
                    out[key] = arg.decode(value[0], value[1], value[2])
            elif mode == M_MESSAGE_NULL:
                out[key] = arg.decode(value[0], value[1], value[2]) if value else None
            elif mode == M_OMIT_NULL:
                if value:
                    rendered = arg.decode(value[0], value[1], value[2])
                    if rendered is not None:
                        out[key] = rendered
            elif mode == M_MAP:
                if value:
                    out[key] = dict(sorted(value.items()))
            elif mode == M_MAP_NULL:
                out[key] = dict(sorted(value.items())) if value else None
            elif mode == M_MESSAGE_SLICE:
                items = arg.decode(value[0], value[1], value[2]) if value else None
                if items:
                    out[key] = items
            elif mode == M_TYPE_META:
                kind, api_version = type_meta
                if kind:
                    out["kind"] = kind
                if api_version:
                    out["apiVersion"] = api_version
            elif value or mode == M_INLINE:  # M_INLINE, M_INLINE_PTR
                if value:
                    inner_slots, inner_unknown = arg.parse(value[0], value[1], value[2])
                else:
                    inner_slots, inner_unknown = arg.parse(b"", 0, 0)
                nested = arg.render_into(out, inner_slots, inner_unknown, NO_TYPE_META)
                if nested:
                    extra = _merge_unknown(extra, nested, key)
        return extra


def _merge(old: Span, sub: Plan, buf: bytes, pos: int, stop: int) -> Span:
    """A singular message seen again: proto merges (concatenation), some Go types replace."""
    if not sub.merge:
        return (buf, pos, stop)
    merged = old[0][old[1] : old[2]] + buf[pos:stop]
    return (merged, 0, len(merged))


def _length_delimited(
    slots: Slots, op: int, slot: int, sub: Any, buf: bytes, pos: int, stop: int
) -> None:
    """The rarer length-delimited ops: bytes, packed scalars."""
    if op == OP_BYTES:
        slots[slot] = b64(buf[pos:stop])
    elif op == OP_RAW_BYTES:
        slots[slot] = buf[pos:stop]
    elif op == OP_PACKED:
        _packed(slots, slot, sub, buf, pos, stop)
    else:  # OP_REP_BYTES
        _append(slots, slot, b64(buf[pos:stop]))


def _fixed(
    slots: Slots, slot: int, sub: tuple[struct.Struct, bool], buf: bytes, pos: int, end: int
) -> int:
    layout, repeated = sub
    stop = pos + layout.size
    if stop > end:
        raise ProtoError("fixed-size field runs past the end")
    value = go_float(layout.unpack_from(buf, pos)[0])
    if repeated:
        _append(slots, slot, value)
    else:
        slots[slot] = value
    return stop


def _append(slots: Slots, slot: int, value: Any) -> None:
    items = slots[slot]
    if items is None:
        slots[slot] = [value]
    else:
        items.append(value)


def _packed(slots: Slots, slot: int, sub: Any, buf: bytes, pos: int, stop: int) -> None:
    """A packed repeated scalar: varints (sub is a converter) or fixed (sub is (struct, _))."""
    while pos < stop:
        if isinstance(sub, tuple):
            layout = sub[0]
            if pos + layout.size > stop:
                raise ProtoError("packed field runs past the end")
            _append(slots, slot, go_float(layout.unpack_from(buf, pos)[0]))
            pos += layout.size
        else:
            value, pos = read_varint(buf, pos)
            _append(slots, slot, sub(value))
    if pos != stop:
        raise ProtoError("packed field truncated")


def _unknown_fields(unknown: Unknown, nested: Nested | None) -> dict[str, Any]:
    """{field number: value or [values]}: varints as numbers, the rest schemaless."""
    extra: dict[str, Any] = {}
    for tag, raw in unknown:
        value = schemaless_value(tag & 7, raw, 0, nested)
        key = str(tag >> 3)
        if key in extra:
            previous = extra[key]
            extra[key] = [*previous, value] if isinstance(previous, list) else [previous, value]
        else:
            extra[key] = value
    return extra


def _merge_unknown(
    extra: dict[str, Any] | None, nested: dict[str, Any], number: str
) -> dict[str, Any]:
    """Unknown fields of an inlined message, as "<its field number>.<number>"."""
    merged = dict(extra or {})
    merged.update((f"{number}.{key}", value) for key, value in nested.items())
    return merged


class Typed:
    """A nested object whose TypeMeta the API server fills in (StatefulSet volumeClaimTemplates)."""

    __slots__ = ("merge", "plan", "type_meta")

    def __init__(self, plan: Plan, kind: str, api_version: str) -> None:
        self.plan = plan
        self.type_meta = (kind, api_version)
        self.merge = plan.merge

    def decode(self, buf: bytes, pos: int, end: int) -> Any:
        return self.plan.decode_object(buf, pos, end, self.type_meta)

    def parse(self, buf: bytes, pos: int, end: int) -> tuple[Slots, Unknown | None]:
        return self.plan.parse(buf, pos, end)
