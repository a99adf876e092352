"""Map fields: each entry is a message {key = 1, value = 2}, either side possibly missing.

gogo fills a missing key or value with Go's zero value (a new empty struct for a message
value, an empty non-nil slice for a named-slice value such as ExtraValue); the JSON of the
map then writes the keys sorted, which the render step does.
"""

from __future__ import annotations

from typing import Any

from k8s_wiretap.decode.proto_plan import Plan
from k8s_wiretap.decode.proto_scalars import GO_UTF8, ZERO, Reader, b64, read_string, scalar_reader
from k8s_wiretap.wire.protowire import BYTES, ProtoError, read_value, read_varint

__all__ = ["MapEntry"]


class MapEntry:
    """One map<K, V> entry message {key = 1, value = 2}; a missing one is Go's zero value."""

    __slots__ = ("key", "key_zero", "string_keys", "value", "value_plan", "value_zero")

    def __init__(self, key_type: str, value_type: str, value_plan: Plan | None) -> None:
        self.key = scalar_reader(key_type)
        self.key_zero = ZERO[key_type]
        self.value_plan = value_plan
        self.value: Reader = (BYTES, None) if value_plan else scalar_reader(value_type)
        self.value_zero = None if value_plan else ZERO[value_type]
        # string keys and a length-delimited value: entries can take the fast path
        self.string_keys = self.key[1] is read_string and self.value[0] == BYTES

    def entry(self, buf: bytes, pos: int, end: int) -> tuple[Any, Any]:
        """Key and value of the entry in buf[pos:end]; short string keys take a fast path."""
        if self.string_keys and end - pos >= 4:
            size = buf[pos + 1]
            key_end = pos + 2 + size
            if buf[pos] == 0x0A and size < 0x80 and key_end + 2 <= end and buf[key_end] == 0x12:
                value_size = buf[key_end + 1]
                if value_size < 0x80 and key_end + 2 + value_size == end:
                    key = buf[pos + 2 : key_end].decode("utf-8", GO_UTF8)
                    return key, self._value_at(buf, key_end + 2, end)
        return self._entry(buf, pos, end)

    def _value_at(self, buf: bytes, pos: int, end: int) -> Any:
        if self.value_plan is not None:
            return self.value_plan.decode(buf, pos, end)
        if self.value[1] is read_string:
            return buf[pos:end].decode("utf-8", GO_UTF8)
        return b64(buf[pos:end])

    def _entry(self, buf: bytes, pos: int, end: int) -> tuple[Any, Any]:
        key, value, found = self.key_zero, self.value_zero, False
        while pos < end:
            tag, pos = read_varint(buf, pos)
            number, wire = tag >> 3, tag & 7
            if number == 1 and wire == self.key[0]:
                key, pos = self.key[1](buf, pos, end)
            elif number == 2 and wire == self.value[0]:
                value, pos, found = *self._value(buf, pos, end), True
            else:
                pos = read_value(buf, tag, pos, end)[1]
        if pos != end:
            raise ProtoError("map entry truncated")
        if not found and self.value_plan is not None:
            value = self.value_plan.decode(b"", 0, 0)
        return key, value

    def _value(self, buf: bytes, pos: int, end: int) -> tuple[Any, int]:
        if self.value_plan is None:
            result: tuple[Any, int] = self.value[1](buf, pos, end)
            return result
        size, pos = read_varint(buf, pos)
        if pos + size > end:
            raise ProtoError("map value runs past the end")
        return self.value_plan.decode(buf, pos, pos + size), pos + size
