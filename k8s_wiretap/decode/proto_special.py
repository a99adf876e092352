"""Messages whose JSON is not their fields: the Go types with a MarshalJSON of their own.

Each special reads its fields like any message (slots keyed here by proto field number, bytes
kept raw) and then renders what the Go type's MarshalJSON writes:

Time/MicroTime → RFC 3339 string or null when zero; Duration → "1h0m0s"; Quantity → canonical
string; IntOrString → number or string; RawExtension, runtime.Unknown, FieldsV1 and
apiextensions JSON → the embedded JSON (a nested `k8s\\0` envelope is decoded as an object);
GroupVersion → "group/version"; JSONSchemaPropsOr{Array,Bool,StringArray} → whichever side is
set; Slice (a named slice wrapped as {repeated items = 1}: Verbs, ExtraValue) → the list.
Unknown fields of a special are skipped, as gogo's Unmarshal skips them. A nested `k8s\\0`
object is decoded by the plan's `nested` decoder, which the compiler sets (proto_plan.py).
"""

from __future__ import annotations

from typing import Any

from k8s_wiretap.decode.proto_gotime import format_duration, format_micro_time, format_time
from k8s_wiretap.decode.proto_plan import Plan, Slots
from k8s_wiretap.decode.proto_scalars import embedded_json
from k8s_wiretap.kube.quantity import QuantityError, canonical_quantity
from k8s_wiretap.wire.envelope import MAGIC
from k8s_wiretap.wire.protowire import ProtoError, read_varint

__all__ = ["REPLACED_ON_DUPLICATE", "SPECIALS", "SlicePlan", "SpecialPlan"]

# Types whose Unmarshal replaces the whole value (custom code), rather than merging fields.
REPLACED_ON_DUPLICATE = {"Time", "MicroTime", "Quantity"}


class SpecialPlan(Plan):
    """A plan whose value is computed from its fields by `value`."""

    __slots__ = ("numbers", "subs")

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.numbers: dict[int, int] = {}  # proto field number → slot
        self.subs: dict[int, Plan] = {}  # proto field number → message plan

    def field(self, slots: Slots, number: int) -> Any:
        slot = self.numbers.get(number)
        return None if slot is None else slots[slot]

    def message(self, slots: Slots, number: int) -> Any:
        """The rendered message field `number`, or None when absent (a nil pointer)."""
        span = self.field(slots, number)
        return None if span is None else self.subs[number].decode(span[0], span[1], span[2])

    def decode(self, buf: bytes, pos: int, end: int) -> Any:
        slots, _unknown = self.parse(buf, pos, end)
        return self.value(slots)

    def value(self, slots: Slots) -> Any:
        raise NotImplementedError

    def embedded(self, raw: bytes) -> Any:
        """Raw bytes embedded in JSON: a nested protobuf object, or JSON."""
        if raw[:4] == MAGIC and self.nested is not None:
            return self.nested(raw)
        return embedded_json(raw)


CACHE_LIMIT = 4096


class TimePlan(SpecialPlan):
    """Rendered times are cached by their bytes: objects repeat the same few timestamps."""

    __slots__ = ("cache",)

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.cache: dict[bytes, Any] = {}

    def decode(self, buf: bytes, pos: int, end: int) -> Any:
        if pos == end:  # Time.Unmarshal: empty → the zero time
            return None
        key = buf[pos:end]
        value = self.cache.get(key, self)
        if value is self:
            if len(self.cache) >= CACHE_LIMIT:
                self.cache.clear()
            value = self.cache[key] = super().decode(buf, pos, end)
        return value

    def value(self, slots: Slots) -> Any:
        return format_time(self.field(slots, 1) or 0)


class MicroTimePlan(TimePlan):
    __slots__ = ()

    def value(self, slots: Slots) -> Any:
        return format_micro_time(self.field(slots, 1) or 0, self.field(slots, 2) or 0)


class DurationPlan(SpecialPlan):
    __slots__ = ()

    def value(self, slots: Slots) -> Any:
        return format_duration(self.field(slots, 1) or 0)


class QuantityPlan(TimePlan):
    """Cached like times: requests and limits repeat."""

    __slots__ = ()

    def decode(self, buf: bytes, pos: int, end: int) -> Any:
        if pos == end:
            return "0"
        return super().decode(buf, pos, end)

    def value(self, slots: Slots) -> Any:
        text = self.field(slots, 1)
        if text is None:
            return "0"
        try:
            return canonical_quantity(text)
        except QuantityError as error:
            raise ProtoError(str(error)) from None


class IntOrStringPlan(SpecialPlan):
    __slots__ = ()

    def value(self, slots: Slots) -> Any:
        kind = self.field(slots, 1) or 0
        if kind == 0:
            return self.field(slots, 2) or 0
        if kind == 1:
            return self.field(slots, 3) or ""
        raise ProtoError(f"IntOrString of type {kind}")


class RawPlan(SpecialPlan):
    """RawExtension {raw = 1}, FieldsV1 {Raw = 1}: nil → null, else the bytes as JSON.

    Every object's managedFields hold FieldsV1: the usual message, field 1 and nothing else,
    is read without the general parse."""

    __slots__ = ()

    def decode(self, buf: bytes, pos: int, end: int) -> Any:
        if pos < end and buf[pos] == 0x0A:  # field 1, length-delimited
            try:
                size, start = read_varint(buf, pos + 1)
            except ProtoError:  # damaged: reported as the general parse reports it
                size, start = -1, end
            if start + size == end:
                return self.embedded(buf[start:end])
        return super().decode(buf, pos, end)

    def value(self, slots: Slots) -> Any:
        raw = self.field(slots, 1)
        return None if raw is None else self.embedded(raw)


class UnknownPlan(SpecialPlan):
    """runtime.Unknown {typeMeta = 1, raw = 2, contentEncoding = 3, contentType = 4}."""

    __slots__ = ()

    def value(self, slots: Slots) -> Any:
        raw = self.field(slots, 2)
        return None if raw is None else self.embedded(raw)


class JsonPlan(SpecialPlan):
    """apiextensions JSON {raw = 1}: empty → null."""

    __slots__ = ()

    def value(self, slots: Slots) -> Any:
        raw = self.field(slots, 1)
        return self.embedded(raw) if raw else None


class GroupVersionPlan(SpecialPlan):
    __slots__ = ()

    def value(self, slots: Slots) -> Any:
        group, version = self.field(slots, 1) or "", self.field(slots, 2) or ""
        text = f"{group}/{version}" if group else version
        if text.count("/") > 1:
            raise ProtoError(f"illegal GroupVersion {text!r}")
        return text


class SchemasOrArrayPlan(SpecialPlan):
    """JSONSchemaPropsOrArray {schema = 1, jSONSchemas = 2}."""

    __slots__ = ()

    def value(self, slots: Slots) -> Any:
        return self.field(slots, 2) or self.message(slots, 1)


class SchemaOrBoolPlan(SpecialPlan):
    """JSONSchemaPropsOrBool {allows = 1, schema = 2}."""

    __slots__ = ()

    def value(self, slots: Slots) -> Any:
        schema = self.message(slots, 2)
        return bool(self.field(slots, 1)) if schema is None else schema


class SchemaOrStringArrayPlan(SpecialPlan):
    """JSONSchemaPropsOrStringArray {schema = 1, property = 2}."""

    __slots__ = ()

    def value(self, slots: Slots) -> Any:
        return self.field(slots, 2) or self.message(slots, 1)


class SlicePlan(SpecialPlan):
    """A named slice: present (even empty) is a list."""

    __slots__ = ()

    def value(self, slots: Slots) -> Any:
        return self.field(slots, 1) or []


SPECIALS: dict[str, type[SpecialPlan]] = {
    "Time": TimePlan,
    "MicroTime": MicroTimePlan,
    "Duration": DurationPlan,
    "Quantity": QuantityPlan,
    "IntOrString": IntOrStringPlan,
    "RawExtension": RawPlan,
    "FieldsV1": RawPlan,
    "Unknown": UnknownPlan,
    "JSON": JsonPlan,
    "GroupVersion": GroupVersionPlan,
    "JSONSchemaPropsOrArray": SchemasOrArrayPlan,
    "JSONSchemaPropsOrBool": SchemaOrBoolPlan,
    "JSONSchemaPropsOrStringArray": SchemaOrStringArrayPlan,
    "Slice": SlicePlan,
}
