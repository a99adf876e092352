"""An object through the API server's Go types: decoded into its struct, encoded again.

A server-side apply merges the configuration into the live object as untyped values
(structured-merge-diff), then turns the result into the kind's Go struct
(`runtime.DefaultUnstructuredConverter.FromUnstructured`, structuredmerge.go's
`toVersioned`), which is what the server stores and answers with. The Go struct changes the
JSON (apimachinery runtime/converter.go, Go's encoding/json):

- an `omitempty` field holding its Go zero value is left out: `paused: false`,
  `minReadySeconds: 0`, `hostname: ""`, `args: []`, `labels: {}`, a null pointer — yet the
  apply's managed fields keep them (the field set is computed before the conversion);
- a null where the field is a Go value becomes its zero value (`workingDir: null` → "",
  then left out as above; a struct → `{}`);
- the items of a few lists get the kind and apiVersion the conversion sets on them
  (`typeMeta` in kube/schema: a StatefulSet's `volumeClaimTemplates`);
- a value field that is missing is encoded all the same when it is a struct (`omitempty`
  or not: a container's `resources`, a Deployment's `strategy` come back as `{}`), or a
  scalar without `omitempty` (a StatefulSet's `serviceName: ""`).

The fields' Go facts (JSON name, `omitempty`, value/pointer/slice/map, nested type) are
those of the release's Go types, kube/schema (scripts/generate_schema.py reads them from
k8s.io/api). Types with their own JSON form (Time, Quantity, IntOrString, RawExtension...)
are left as they are, and so are kinds without Go types (custom resources) and members the
type does not declare (prune.py drops those); missing pointers, slices and maps without
`omitempty` (encoded as null) are not added.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import cache
from typing import Any

from k8s_wiretap.kube import schema
from k8s_wiretap.kube.release import ReleaseLike

__all__ = [
    "go_fields",
    "kind_message",
    "may_change_when_decoded",
    "through_go_types",
    "zero_object",
]

Field = dict[str, Any]
_DROP: Any = object()
_ZERO = {"bool": False, "string": "", "bytes": "", "int32": 0, "int64": 0, "double": 0}


def through_go_types(obj: Any, release: ReleaseLike, members: Collection[str] = ()) -> Any:
    """`obj` (a whole object, changed in place and returned) as `release`'s API server
    encodes it after decoding it into its Go type (see the module docstring); `members`:
    only these top-level members (all if empty), when the rest is known to be as encoded."""
    found = kind_message(obj, release)
    if found is not None:
        _struct(obj, *found, members)
    return obj


_DIRECTIVES = ("$patch", "$retainKeys", "$deleteFromPrimitiveList")
# the JSON of a zero value of the types with their own (MarshalJSON, ToUnstructured)
_SPECIAL_ZERO = {"Time": None, "MicroTime": None, "Quantity": "0", "IntOrString": 0}


def zero_object(api_version: str, kind: str, release: ReleaseLike) -> dict[str, Any]:
    """The kind's Go zero value as the API server's ToUnstructured gives it (what the field
    manager compares the first owner's fields with, skipnonapplied.go): every field but the
    omitempty ones that are empty, nil pointers, slices and maps as null, structs in full;
    just apiVersion and kind for a kind without Go types."""
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    found = kind_message(obj, release)
    if found is not None:
        obj.update({k: v for k, v in _zero(*found).items() if k not in ("apiVersion", "kind")})
    return obj


def _zero(message: str, minor: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, field in (go_fields(message, minor) or {}).items():
        nested = field.get("message")
        if field["go"] != "value":
            if not field["omitempty"]:
                out[name] = None
        elif nested is None:
            if not field["omitempty"] and field["type"] in _ZERO:
                out[name] = _ZERO[field["type"]]
        elif go_fields(nested, minor) is not None:
            out[name] = _zero(nested, minor)
        elif not field.get("omitzero"):
            special = schema.messages(minor).get(nested, {}).get("special")
            if special in _SPECIAL_ZERO:
                out[name] = _SPECIAL_ZERO[special]
    return out


def may_change_when_decoded(kind: str, patch: Any) -> frozenset[str]:
    """The top-level members where an object a patch of `kind` ("strategic", "merge",
    "json") made can differ from what the server stores after decoding it into its Go type
    and defaulting it: none (empty) unless the patch sets a Go zero value or a null, or
    removes something (a directive, a JSON patch's remove, move or replace), since the object
    before is already as the server stores it and new parts the server defaults are allowed
    for (compare.py); then the members the patch reaches."""
    if kind == "json":
        operations = [op for op in patch if isinstance(op, dict)] if isinstance(patch, list) else []
        ops = {op.get("op") for op in operations}
        if not ops & {"remove", "move", "replace"} and not _zero_inside(
            [op.get("value") for op in operations]
        ):
            return frozenset()
        paths = [op.get(key) for op in operations for key in ("path", "from")]
        members = {p.split("/")[1] for p in paths if isinstance(p, str) and p.count("/")}
        for op in operations:  # the whole document, replaced: its members
            if op.get("path") == "" and isinstance(op.get("value"), dict):
                members.update(op["value"])
        return frozenset(members)
    if not isinstance(patch, dict) or not _zero_inside(patch):
        return frozenset()
    return frozenset(patch)


def _zero_inside(value: Any) -> bool:
    if isinstance(value, dict):
        if not value or any(key.startswith(_DIRECTIVES) for key in value):
            return True
        return any(_zero_inside(child) for child in value.values())
    if isinstance(value, list):
        return not value or any(_zero_inside(child) for child in value)
    return value is None or value is False or value == "" or (value == 0 and value is not True)


def kind_message(obj: Any, release: ReleaseLike) -> tuple[str, str] | None:
    """(the Go type's message name, the schema's release) of an object's kind; None for a
    kind without Go types."""
    if not isinstance(obj, dict):
        return None
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    minor = schema.release_for(release)
    message = schema.kinds(minor).get(api_version, {}).get(kind)
    return None if message is None else (message, minor)


@cache
def go_fields(message: str, minor: str) -> dict[str, Field] | None:
    """JSON name → field of a message, inline members included; None for a type with its
    own JSON form, or one the schema does not have."""
    found = schema.messages(minor).get(message)
    if found is None or "special" in found:
        return None
    out: dict[str, Field] = {}
    for field in found["fields"]:
        if field.get("inline"):
            out.update(go_fields(field["message"], minor) or {})
        elif field["json"]:
            out[field["json"]] = field
    return out


def _struct(value: dict[str, Any], message: str, minor: str, only: Collection[str] = ()) -> None:
    fields = go_fields(message, minor)
    if fields is None:
        return
    if only:
        fields = {name: field for name, field in fields.items() if name in only}
    for name in list(value):
        field = fields.get(name)
        if field is None:
            continue
        member = _member(value[name], field, minor)
        if member is _DROP:
            del value[name]
        else:
            value[name] = member
    for name, field in fields.items():
        if name in value or field["go"] != "value":
            continue
        nested = field.get("message")
        if nested is None and not field["omitempty"] and field["type"] in _ZERO:
            value[name] = _ZERO[field["type"]]
        elif nested is not None and go_fields(nested, minor) is not None:
            value[name] = {}
            _struct(value[name], nested, minor)


def _member(value: Any, field: Field, minor: str) -> Any:
    """A struct member as it comes out of its Go field, _DROP when it is left out."""
    go, omitempty = field["go"], field["omitempty"]
    nested = field.get("message")
    if nested is not None and go_fields(nested, minor) is None:
        return _DROP if value is None and go != "value" and omitempty else value
    if value is None:
        if go != "value":
            return _DROP if omitempty else None
        value = {} if nested is not None else _ZERO.get(field["type"])
        if value is None:
            return None
    if go == "value" and nested is None:
        zero = _ZERO.get(field["type"], _DROP)
        if omitempty and _same_scalar(value, zero):
            return _DROP
        return value
    if go in ("slice", "map") and omitempty and value in ([], {}, ""):
        return _DROP  # "": []byte, base64
    _nested(value, field, minor)
    return value


def _same_scalar(value: Any, zero: Any) -> bool:
    """`value` is Go's zero value of its field (and of the right JSON type)."""
    if isinstance(zero, bool) or isinstance(value, bool):
        return value is zero
    if isinstance(zero, str):
        return isinstance(value, str) and not value
    return isinstance(value, (int, float)) and value == 0 and zero == 0


def _nested(value: Any, field: Field, minor: str) -> None:
    """Into a member's structs: itself, a slice's items, a map's values."""
    if field["go"] == "map":
        target = field.get("value")
        message = target.get("message") if isinstance(target, dict) else None
        if message is not None and isinstance(value, dict):
            for item in value.values():
                if isinstance(item, dict):
                    _struct(item, message, minor)
        return
    message = field.get("message")
    if message is None:
        return
    if isinstance(value, dict):
        _struct(value, message, minor)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                item.update(field.get("typeMeta") or {})
                _struct(item, message, minor)
