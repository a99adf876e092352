"""The schema of server-side apply: meta.py's nodes as structured-merge-diff v4.0.2 sees them.

The schema is the patch metadata of meta.py, read as kube-openapi's schemaconv reads OpenAPI:
structs are maps with declared fields (atomic with `x-kubernetes-map-type: atomic`), lists are
`atomic`, `set` or `map` by `x-kubernetes-list-type`/`-list-map-keys`, else by the patch strategy
(`merge` with a merge key is a map keyed by it, `merge` without one is a set), else atomic;
RawExtension and schemaless values are "untyped" (atomic). `resolve(t)` gives the atom of a
type (map, list or scalar, or all three for untyped values), `item_element` the path element
of a list item (its keys, with the schema's defaults for missing keys, its value, or its
index), and `validate` the checks `ObjectToTyped` makes (undeclared fields, scalar types, list
keys) with SMD's messages. typed.py walks values with them.

A missing value is `ABSENT`; `None` is a JSON null.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from k8s_wiretap.patch.fieldpath import (
    PathElement,
    element_text,
    key_element,
    value_element,
)
from k8s_wiretap.patch.gosemantics import go_json
from k8s_wiretap.patch.meta import Node, PatchSchema

__all__ = [
    "ABSENT",
    "DEDUCED",
    "UNTYPED",
    "Atom",
    "ListAtom",
    "MapAtom",
    "TypeRef",
    "deduce",
    "errors_text",
    "item_element",
    "list_semantics",
    "resolve",
    "scalar_error",
    "validate",
]

UNTYPED = "untyped"
DEDUCED = "deduced"
RAW_EXTENSION = "io.k8s.apimachinery.pkg.runtime.RawExtension"
TypeRef = Node | str


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


@dataclass(frozen=True)
class ListAtom:
    relationship: str  # "atomic" or "associative"
    keys: tuple[str, ...]
    item: TypeRef


@dataclass(frozen=True)
class MapAtom:
    node: Node | None  # a struct: its declared fields
    element: TypeRef | None  # the type of other members; None: none allowed
    atomic: bool

    def field_type(self, name: str) -> TypeRef | None:
        if self.node is not None and self.node.has_field(name):
            return self.node.field(name)
        return self.element


@dataclass(frozen=True)
class Atom:
    scalar: str | None = None
    lst: ListAtom | None = None
    mp: MapAtom | None = None


_UNTYPED_ATOM = Atom("untyped", ListAtom("atomic", (), UNTYPED), MapAtom(None, UNTYPED, True))
_DEDUCED_ATOM = Atom("untyped", ListAtom("atomic", (), UNTYPED), MapAtom(None, DEDUCED, False))


def list_semantics(node: Node) -> tuple[str, tuple[str, ...]]:
    """("atomic" | "associative", keys) as schemaconv derives them from the extensions."""
    if node.list_type is not None:
        if node.list_type == "set":
            return "associative", ()
        if node.list_type == "map":
            return "associative", node.map_keys
        return "atomic", ()
    strategy = node.extensions.get("x-kubernetes-patch-strategy")
    if strategy in ("merge", "merge,retainKeys"):
        return "associative", (node.merge_key,) if node.merge_key else ()
    return "atomic", ()


def _scalar_kind(node: Node) -> str:
    if node.scalar_type in ("integer", "number"):
        return "numeric"
    if node.scalar_type == "boolean":
        return "boolean"
    if node.scalar_type == "string" and node.format in ("", "byte"):
        return "string"
    return "untyped"


def _node_atom(node: Node) -> Atom:
    if node.definition == RAW_EXTENSION:
        return _UNTYPED_ATOM
    if node.kind == "struct":
        element = DEDUCED if node.preserve_unknown else None
        return Atom(mp=MapAtom(node, element, node.map_type == "atomic"))
    if node.kind == "map":
        return Atom(mp=MapAtom(None, node.item() or UNTYPED, node.map_type == "atomic"))
    if node.kind == "list":
        relationship, keys = list_semantics(node)
        return Atom(lst=ListAtom(relationship, keys, node.item() or UNTYPED))
    if node.kind == "scalar":
        return Atom(scalar=_scalar_kind(node))
    return _DEDUCED_ATOM if node.preserve_unknown else _UNTYPED_ATOM


def resolve(t: TypeRef) -> Atom:
    if isinstance(t, str):
        return _UNTYPED_ATOM if t == UNTYPED else _DEDUCED_ATOM
    atom = t.memo.get("atom")
    if atom is None:
        atom = t.memo["atom"] = _node_atom(t)
    assert isinstance(atom, Atom)
    return atom


def deduce(atom: Atom, value: Any) -> Atom:
    """deduceAtom: the part of a multi-kind atom that fits the value."""
    if isinstance(value, dict):
        return Atom(mp=atom.mp) if atom.mp is not None and atom.scalar is not None else atom
    if isinstance(value, list):
        return Atom(lst=atom.lst) if atom.lst is not None and atom.scalar is not None else atom
    if value is not ABSENT and value is not None and atom.scalar is not None and atom.mp:
        return Atom(scalar=atom.scalar)
    return atom


def errors_text(errors: list[str]) -> str:
    """ValidationErrors.Error(): one error as it is, several under `errors:`."""
    if len(errors) == 1:
        return errors[0]
    return "\n".join(["errors:", *("  " + e for e in errors)])


def _error(path: str, message: str) -> str:
    return f"{path}: {message}" if path else message


def _go_type(value: Any) -> str:
    return "*value.valueUnstructured" if value is not None else "<nil>"


def scalar_error(kind: str, value: Any) -> str | None:
    if value is None or value is ABSENT:
        return None
    if kind == "numeric" and (isinstance(value, bool) or not isinstance(value, (int, float))):
        return f"expected numeric (int or float), got {_go_type(value)}"
    if kind == "string" and not isinstance(value, str):
        return f"expected string, got &value.valueUnstructured{{Value:{go_json(value)}}}"
    if kind == "boolean" and not isinstance(value, bool):
        return f"expected boolean, got &{{{go_json(value)}}}"
    return None


def item_element(lst: ListAtom, index: int, child: Any) -> PathElement:
    """listItemToPathElement; raises ValueError with SMD's message."""
    if lst.relationship != "associative":
        return ("i", index)
    if lst.keys:
        return _keyed_element(lst, child)
    if isinstance(child, dict):
        raise ValueError("associative list without keys has an element that's a map type")
    if isinstance(child, list):
        raise ValueError("not supported: associative list with lists as elements")
    if child is None:
        raise ValueError("associative list without keys has an element that's an explicit null")
    return value_element(child)


def _keyed_element(lst: ListAtom, child: Any) -> PathElement:
    if child is None:
        raise ValueError("associative list with keys may not have a null element")
    if not isinstance(child, dict):
        raise ValueError("associative list with keys may not have non-map elements")
    keys: list[tuple[str, Any]] = []
    for name in lst.keys:
        if name in child:
            keys.append((name, child[name]))
            continue
        default = _key_default(lst, name)
        if default is None:
            message = f'associative list with keys has an element that omits key field "{name}"'
            raise ValueError(message + " (and doesn't have default value)")
        keys.append((name, default))
    return key_element(keys)


def _key_default(lst: ListAtom, name: str) -> Any:
    """getAssociativeKeyDefault. The server's generated definitions have defaults that
    /openapi/v2 leaves out; a schema read from /openapi/v2 borrows them from the built-in
    table (which has them) for the same definition."""
    mp = resolve(lst.item).mp
    if mp is None:
        message = "associative list may not have non-map types"
        raise ValueError(f"couldn't find default value for {name}: {message}")
    node = mp.node
    field = node.field(name) if node is not None and node.has_field(name) else None
    if field is not None and field.default is not None:
        return field.default
    builtin = PatchSchema.builtin()
    if node is None or node.owner is builtin or not node.definition:
        return None
    twin = builtin.definition(node.definition)
    twin_field = twin.field(name) if twin is not None and twin.has_field(name) else None
    return twin_field.default if twin_field is not None else None


def validate(value: Any, t: TypeRef) -> list[str]:
    """The validation errors `AsTyped` reports for `value` (empty when valid)."""
    errors: list[str] = []
    _validate(value, t, "", errors)
    return errors


def _validate(value: Any, t: TypeRef, path: str, errors: list[str]) -> None:
    atom = deduce(resolve(t), value)
    if atom.mp is not None:
        _validate_map(value, atom.mp, path, errors)
    elif atom.scalar is not None:
        message = scalar_error(atom.scalar, value)
        if message:
            errors.append(_error(path, message))
    elif atom.lst is not None:
        _validate_list(value, atom.lst, path, errors)


def _validate_map(value: Any, mp: MapAtom, path: str, errors: list[str]) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        errors.append(_error(path, f"expected map, got {go_json(value)}"))
        return
    for key, child in value.items():
        child_type = mp.field_type(key)
        if child_type is None:
            errors.append(_error(f"{path}.{key}", "field not declared in schema"))
            return
        _validate(child, child_type, f"{path}.{key}", errors)


def _validate_list(value: Any, lst: ListAtom, path: str, errors: list[str]) -> None:
    if value is None:
        return
    if not isinstance(value, list):
        errors.append(_error(path, f"expected list, got {go_json(value)}"))
        return
    seen: set[PathElement] = set()
    for index, child in enumerate(value):
        try:
            element = item_element(lst, index, child)
        except ValueError as error:
            errors.append(_error(path, f"element {index}: {error}"))
            return
        if element in seen:
            errors.append(_error(path, f"duplicate entries for key {element_text(element)}"))
        seen.add(element)
        _validate(child, lst.item, path + element_text(element), errors)
