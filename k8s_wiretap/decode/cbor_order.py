"""The key order of the API server's JSON, put back on an object whose keys came unordered.

CBOR carries no key order worth keeping: apimachinery sorts map keys bytewise (shorter keys
first) or, for responses and watch events, shuffles them (`EncodeNondeterministic`). Its JSON
has one: Go struct fields in declaration order, map keys sorted (encoding/json), and raw JSON
as it was stored. This module walks a decoded object with the release's schema (the same one
protobuf decoding uses; its fields are in Go order) and builds each map again in that order:

- a kind the schema knows: its fields in Go order (inlined structs in place), each value by
  its field's type; keys the schema does not know follow, sorted;
- maps, custom resources and anything unstructured: keys sorted, as encoding/json sorts a
  map[string]interface{};
- embedded objects (RawExtension, runtime.Unknown, a Table row's object, a watch event's
  object): by their own apiVersion and kind;
- managedFields' fieldsV1: structured-merge-diff's order (fieldpath/serialize.go): "." first,
  then `f:` fields by name, `k:` keys, `v:` values, `i:` indexes, each by value.

What cannot be put back: raw JSON kept as the client sent it (a ControllerRevision's data
came from Go and is sorted, but a CRD's `default` or `example` values are as written).
"""

from __future__ import annotations

import json
from functools import cmp_to_key
from typing import Any

from k8s_wiretap.kube.release import ReleaseLike
from k8s_wiretap.kube.schema import lookup_kind, messages

__all__ = ["fields_v1_order", "served_order", "served_order_event"]

_RAW = frozenset({"RawExtension", "Unknown", "JSON"})
_LEAVES = frozenset(
    {"Quantity", "Duration", "Time", "MicroTime", "IntOrString", "GroupVersion", "Slice"}
)
# Kinds the API server sends without an apiVersion (/api, /api/v1): meta/v1's unversioned ones.
_UNVERSIONED = frozenset({"APIVersions", "APIResourceList", "APIGroupList", "APIGroup", "Status"})
_PROPS_OR = frozenset(
    {"JSONSchemaPropsOrArray", "JSONSchemaPropsOrBool", "JSONSchemaPropsOrStringArray"}
)


def served_order(value: Any, release: ReleaseLike = None) -> Any:
    """`value` (an object or any JSON value) with its keys in the server's JSON order."""
    return _Orderer(release).any(value)


def served_order_event(event: dict[str, Any], release: ReleaseLike = None) -> dict[str, Any]:
    """A watch event {"type", "object"}: meta/v1 WatchEvent's order, the object by its kind."""
    orderer = _Orderer(release)
    ordered: dict[str, Any] = {key: event[key] for key in ("type", "object") if key in event}
    if "object" in ordered:
        ordered["object"] = orderer.any(ordered["object"])
    ordered.update({key: orderer.any(event[key]) for key in sorted(event) if key not in ordered})
    return ordered


class _Orderer:
    def __init__(self, release: ReleaseLike) -> None:
        self.release = release
        self.messages = messages(release)

    def any(self, value: Any) -> Any:
        """An embedded or unstructured value: by its kind if the schema knows it, else sorted."""
        if isinstance(value, list):
            return [self.any(item) for item in value]
        if not isinstance(value, dict):
            return value
        api_version, kind = value.get("apiVersion"), value.get("kind")
        if api_version is None and kind in _UNVERSIONED:
            api_version = "v1"
        if isinstance(api_version, str) and isinstance(kind, str) and api_version and kind:
            found = lookup_kind(api_version, kind, self.release)
            if found in self.messages:
                return self.message(value, found)
        return {key: self.any(value[key]) for key in sorted(value)}

    def message(self, value: Any, name: str) -> Any:
        spec = self.messages.get(name)
        if spec is None:
            return self.any(value)
        special = spec.get("special")
        if special in _LEAVES:
            return value
        if special in _RAW:
            return self.any(value)
        if special == "FieldsV1":
            return fields_v1_order(value)
        if special in _PROPS_OR:
            props = name.rsplit(".", 1)[0] + ".JSONSchemaProps"
            return self.repeated(value, props) if isinstance(value, list | dict) else value
        if not isinstance(value, dict):
            return value
        ordered: dict[str, Any] = {}
        self._fields(value, spec, ordered)
        ordered.update({key: self.any(value[key]) for key in sorted(value) if key not in ordered})
        return ordered

    def _fields(self, value: dict[str, Any], spec: dict[str, Any], into: dict[str, Any]) -> None:
        for field in spec.get("fields", []):
            if field.get("inline"):
                inlined = self.messages.get(field.get("message", ""))
                if inlined is not None:
                    self._fields(value, inlined, into)
                continue
            key = field["json"]
            if key in value and key not in into:
                into[key] = self.field(value[key], field)

    def field(self, value: Any, field: dict[str, Any]) -> Any:
        if field["type"] == "map":
            if not isinstance(value, dict):
                return value
            target = field["value"]
            inner = target.get("message") if isinstance(target, dict) else None
            return {
                key: self.message(value[key], inner) if inner else self.any(value[key])
                for key in sorted(value)
            }
        if field["type"] == "message":
            return self.repeated(value, field["message"])
        return value

    def repeated(self, value: Any, name: str) -> Any:
        if isinstance(value, list):
            return [self.message(item, name) for item in value]
        return self.message(value, name)


# -- structured-merge-diff's field sets -------------------------------------------------------

_KINDS = {"f": 0, "k": 1, "v": 2, "i": 3}


def fields_v1_order(value: Any) -> Any:
    """A fieldsV1 set in the order structured-merge-diff writes it (fieldpath/serialize.go
    `emitContentsV1`, PathElement.Compare): "." first, then fields, keys, values, indexes."""
    if not isinstance(value, dict):
        return value
    keys = sorted(value, key=cmp_to_key(_compare_elements))
    return {key: fields_v1_order(value[key]) for key in keys}


def _element(key: str) -> tuple[int, Any]:
    if key == ".":
        return -1, None
    prefix, _, rest = key.partition(":")
    kind = _KINDS.get(prefix, 4)
    if kind == 0:
        return kind, rest
    if kind == 3:
        return kind, int(rest) if rest.lstrip("-").isdigit() else rest
    try:
        return kind, json.loads(rest)
    except ValueError:
        return kind, rest


def _compare_elements(left: str, right: str) -> int:
    (kind_l, value_l), (kind_r, value_r) = _element(left), _element(right)
    if kind_l != kind_r:
        return -1 if kind_l < kind_r else 1
    if kind_l == 1 and isinstance(value_l, dict) and isinstance(value_r, dict):
        return _compare_keys(value_l, value_r)
    found = _compare_values(value_l, value_r)
    return found if found else (left > right) - (left < right)


def _compare_keys(left: dict[str, Any], right: dict[str, Any]) -> int:
    """value.FieldList.Compare: field by field in name order, then the shorter first."""
    for (name_l, value_l), (name_r, value_r) in zip(
        sorted(left.items()), sorted(right.items()), strict=False
    ):
        if name_l != name_r:
            return -1 if name_l < name_r else 1
        found = _compare_values(value_l, value_r)
        if found:
            return found
    return (len(left) > len(right)) - (len(left) < len(right))


def _rank(value: Any) -> int:
    """structured-merge-diff value.Compare's order of types: numbers (floats and ints
    together), strings, booleans, lists, maps, null."""
    if value is None:
        return 5
    if isinstance(value, bool):
        return 2
    if isinstance(value, int | float):
        return 0
    if isinstance(value, str):
        return 1
    return 3 if isinstance(value, list) else 4


def _compare_values(left: Any, right: Any) -> int:
    rank_l, rank_r = _rank(left), _rank(right)
    if rank_l != rank_r:
        return -1 if rank_l < rank_r else 1
    if rank_l == 4:
        return _compare_keys(left, right)
    if rank_l == 3:
        for item_l, item_r in zip(left, right, strict=False):
            found = _compare_values(item_l, item_r)
            if found:
                return found
        return (len(left) > len(right)) - (len(left) < len(right))
    if rank_l == 5:
        return 0
    return int((left > right) - (left < right))
