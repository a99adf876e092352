"""What a patch touches: the places whose result a replay can be checked at.

A `Touch` tree mirrors the object: `Fields` (members of an object), `Items` (items of a list,
identified by a key, a value or a position) and `WHOLE` (compare the whole value here). One
builder per patch kind turns a patch into the tree of "fields the patch sets or removes":

- strategic merge patch: every key of the patch (directives excluded) down to scalars, nulls
  (removals), `$patch: replace|delete` maps and non-merging lists (whole), merge lists item by
  item (by merge key or by value, with their order), `$deleteFromPrimitiveList` values,
  `$setElementOrder` (the order of the list), and the members `$retainKeys` drops;
- JSON merge patch: every key, down to non-object values and nulls;
- JSON patch: the `path` (and `from` of `move`) of every operation except `test`, down to the
  first list on the way, which is compared whole (indices shift as operations apply);
- server-side apply: every field the configuration sets (its field set: leaves, list items by
  key or value, atomic lists whole) and every field the manager owned before and no longer
  applies (they must be gone unless another manager keeps them).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from k8s_wiretap.patch.apply import decode_managed_fields
from k8s_wiretap.patch.errors import PatchError
from k8s_wiretap.patch.fieldpath import FieldSet, key_element, value_element
from k8s_wiretap.patch.gosemantics import go_json
from k8s_wiretap.patch.meta import Node
from k8s_wiretap.patch.smd_schema import DEDUCED, TypeRef, item_element, resolve
from k8s_wiretap.patch.typed import to_field_set

__all__ = [
    "WHOLE",
    "Fields",
    "Identity",
    "Items",
    "Touch",
    "apply_touch",
    "json_patch_touch",
    "merge_touch",
    "strategic_touch",
    "union",
]

Identity = Callable[[Any, int], Hashable]


class _Whole:
    def __repr__(self) -> str:
        return "WHOLE"


WHOLE = _Whole()


@dataclass
class Fields:
    children: dict[str, Touch] = field(default_factory=dict)


@dataclass
class Items:
    identity: Identity
    children: dict[Hashable, Touch] = field(default_factory=dict)
    order: bool = False


Touch = Fields | Items | _Whole


def union(left: Touch | None, right: Touch) -> Touch:
    if left is None:
        return right
    if left is WHOLE or right is WHOLE:
        return WHOLE
    if isinstance(left, Fields) and isinstance(right, Fields):
        for name, child in right.children.items():
            left.children[name] = union(left.children.get(name), child)
        return left
    if isinstance(left, Items) and isinstance(right, Items):
        for key, child in right.children.items():
            left.children[key] = union(left.children.get(key), child)
        left.order = left.order or right.order
        return left
    return WHOLE


def by_value(item: Any, index: int) -> Hashable:
    return value_element(item)


def by_index(item: Any, index: int) -> Hashable:
    return ("i", index)


def by_keys(keys: tuple[str, ...]) -> Identity:
    def identity(item: Any, index: int) -> Hashable:
        if not isinstance(item, dict):
            return ("i", index)
        return key_element([(k, item.get(k)) for k in keys])

    return identity


def _child(node: Node | None, key: str) -> Node | None:
    return node.field(key) if node is not None and node.kind == "struct" else None


def _strategy(node: Node | None) -> str:
    if node is None:
        return ""
    others = [s for s in node.strategies if s != "retainKeys"]
    return others[0] if others else ""


def strategic_touch(patch: Any, node: Node | None, before: Any) -> Touch:
    """The tree of a strategic merge patch (an object) against the object `before`."""
    if not isinstance(patch, dict) or "$patch" in patch:
        return WHOLE
    before_map = before if isinstance(before, dict) else {}
    out = Fields()
    retained = patch.get("$retainKeys")
    if isinstance(retained, list):
        for name in before_map:
            if name not in retained:
                out.children[name] = WHOLE
    for key, value in patch.items():
        prefix, _, name = key.partition("/")
        touch: Touch
        if prefix == "$setElementOrder":
            child = _child(node, name)
            touch = Items(_identity(child), order=True)
        elif prefix == "$deleteFromPrimitiveList":
            items = value if isinstance(value, list) else []
            touch = Items(by_value, {by_value(v, 0): WHOLE for v in items})
        elif key.startswith("$"):
            continue
        else:
            name = key
            touch = _strategic_value(value, _child(node, key), before_map.get(key))
        out.children[name] = union(out.children.get(name), touch)
    return out


def _identity(node: Node | None) -> Identity:
    if node is not None and node.merge_key:
        return by_keys((node.merge_key,))
    item = node.item() if node is not None else None
    return by_index if item is not None and item.kind == "struct" else by_value


def _strategic_value(value: Any, node: Node | None, before: Any) -> Touch:
    if isinstance(value, dict):
        return WHOLE if _strategy(node) == "replace" else strategic_touch(value, node, before)
    if isinstance(value, list) and _strategy(node) == "merge":
        return _merge_list(value, node, before)
    return WHOLE


def _merge_list(value: list[Any], node: Node | None, before: Any) -> Touch:
    key = node.merge_key if node is not None else ""
    identity = _identity(node)
    out = Items(identity, order=True)
    item_node = node.item() if node is not None else None
    previous = {identity(b, i): b for i, b in enumerate(before or []) if isinstance(before, list)}
    for index, item in enumerate(value):
        if isinstance(item, dict) and "$patch" in item:
            if item["$patch"] != "delete":
                return WHOLE
            out.children[identity(item, index)] = WHOLE
        elif isinstance(item, dict) and key:
            ident = identity(item, index)
            touch = strategic_touch(item, item_node, previous.get(ident))
            out.children[ident] = union(out.children.get(ident), touch)
        else:
            out.children[identity(item, index)] = WHOLE
    return out


def merge_touch(patch: Any) -> Touch:
    """The tree of a JSON merge patch."""
    if not isinstance(patch, dict):
        return WHOLE
    return Fields({k: merge_touch(v) if isinstance(v, dict) else WHOLE for k, v in patch.items()})


def _pointer(path: Any) -> list[str] | None:
    if not isinstance(path, str):
        return None
    parts = path.split("/")
    if len(parts) < 2:
        return None
    return [p.replace("~1", "/").replace("~0", "~") for p in parts[1:]]


def _path_touch(parts: list[str], before: Any) -> Touch:
    if not parts or isinstance(before, list):
        return WHOLE
    value = before.get(parts[0]) if isinstance(before, dict) else None
    return Fields({parts[0]: _path_touch(parts[1:], value)})


def json_patch_touch(patch: Any, before: Any, after: Any) -> Touch:
    """The tree of a JSON patch: each operation's target, down to the first list."""
    out: Touch | None = None
    for operation in patch if isinstance(patch, list) else []:
        if not isinstance(operation, dict) or operation.get("op") == "test":
            continue
        targets = [operation.get("path")]
        if operation.get("op") == "move":
            targets.append(operation.get("from"))
        for target in targets:
            parts = _pointer(target)
            if parts is None:
                continue
            for document in (before, after):
                out = union(out, _path_touch(parts, document))
    return out if out is not None else Fields()


def typed_identity(node: Node | None) -> Identity | None:
    """Items as server-side apply tells them apart: list-map keys (with their schema
    defaults, so a port without `protocol` is the "TCP" one), set values, else positions."""
    lst = resolve(node).lst if node is not None else None
    if lst is None:
        return None
    atom = lst

    def identity(item: Any, index: int) -> Hashable:
        try:
            return item_element(atom, index, item)
        except ValueError:
            return ("i", index)

    return identity


def _set_touch(fields: FieldSet, node: Node | None) -> Touch:
    """A field set as a tree: members compared whole, subsets walked."""
    out = Fields()
    items: Items | None = None
    for element in fields.members | set(fields.children):
        below = fields.children.get(element)
        if element[0] == "f":
            child = _child(node, element[1])
            touch: Touch = _set_touch(below, child) if below is not None else WHOLE
            out.children[element[1]] = union(out.children.get(element[1]), touch)
            continue
        if element[0] == "i":
            return WHOLE
        item_node = node.item() if node is not None else None
        fallback = by_value if element[0] == "v" else by_index
        items = items or Items(typed_identity(node) or fallback)
        ident = element
        touch = _set_touch(below, item_node) if below is not None else WHOLE
        items.children[ident] = union(items.children.get(ident), touch)
    return items if items is not None else out


def apply_touch(
    config: Any, node: Node | None, before: Any, manager: str | None, subresource: str = ""
) -> Touch:
    """The tree of a server-side apply (by `manager`, through `subresource`): the
    configuration's fields and those it dropped."""
    if not isinstance(config, dict):
        return WHOLE
    t: TypeRef = node if node is not None else DEDUCED
    fields = to_field_set(config, t)
    if manager is not None and isinstance(before, dict):
        metadata = before.get("metadata")
        managed = metadata.get("managedFields") if isinstance(metadata, dict) else None
        try:
            managers = decode_managed_fields(managed)
        except PatchError:
            managers = {}
        entry = managers.get((manager, "Apply", "", subresource))
        if entry is not None:
            fields = fields.union(entry.fields)
    return _set_touch(fields, node)


def list_identity(node: Node | None) -> Identity:
    """How items of the list at `node` are told apart: the merge key (which the server never
    defaults, unlike list-map keys such as a port's protocol), the list-map keys, the value
    in a set, else the position."""
    if node is None:
        return by_index
    if node.merge_key:
        return by_keys((node.merge_key,))
    return typed_identity(node) or by_index


def identity_text(identity: Hashable) -> str:
    if isinstance(identity, tuple) and identity and identity[0] == "k":
        return "[" + ",".join(f"{k}={v}" for k, v in identity[1]) + "]"
    if isinstance(identity, tuple) and identity and identity[0] == "v":
        return f"[={identity[1]}]"
    if isinstance(identity, tuple) and identity and identity[0] == "i":
        return f"[{identity[1]}]"
    return f"[{go_json(identity)}]"
