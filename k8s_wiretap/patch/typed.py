"""Typed values as structured-merge-diff walks them (server-side apply): v4.0.2 of Kubernetes
1.20, and v4.2.1+'s list order (1.23+, `merge(ordered=True)`).

With the schema of smd_schema.py:

- `merge`: `TypedValue.Merge`, the applied configuration merged into the live object (structs
  and granular maps member by member, list-map items by key, set items by value, atomic
  values replaced);
- `compare`: `TypedValue.Compare`, the added, modified and removed fields;
- `to_field_set`: `TypedValue.ToFieldSet`, the fields a value sets;
- `remove_items`: `TypedValue.RemoveItems` (a map or list left empty becomes null, as in SMD);
- `ensure_named_fields`: `Set.EnsureNamedFieldsAreMembers` (v4.0.3+, Kubernetes 1.21+), which
  the apply's prune runs its sets through.

A missing value is `ABSENT`; `None` is a JSON null, which these walks treat as SMD does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from k8s_wiretap.patch.errors import PatchError
from k8s_wiretap.patch.fieldpath import FieldSet, Path, PathElement, element_text
from k8s_wiretap.patch.gosemantics import same_json
from k8s_wiretap.patch.smd_schema import (
    ABSENT,
    DEDUCED,
    UNTYPED,
    Atom,
    ListAtom,
    MapAtom,
    TypeRef,
    deduce,
    errors_text,
    item_element,
    resolve,
    scalar_error,
)

__all__ = [
    "ABSENT",
    "DEDUCED",
    "UNTYPED",
    "FieldChanges",
    "TypeRef",
    "compare_fields",
    "ensure_named_fields",
    "merge",
    "remove_items",
    "to_field_set",
]


Rule = Callable[[Any, Any, Path], Any]


class _Walk:
    """mergingWalker: `rule` at leaves (its result is the output), `post` after non-leaves."""

    def __init__(
        self, rule: Rule, post: Callable[[Any, Any, Path], None] | None, ordered: bool = False
    ) -> None:
        self.rule = rule
        self.post = post
        self.ordered = ordered  # SMD v4.2.1+ (Kubernetes 1.23+): the config orders lists
        self.errors: list[str] = []

    def walk(self, lhs: Any, rhs: Any, t: TypeRef, path: Path) -> Any:
        atom = resolve(t)
        left, right = deduce(atom, lhs), deduce(atom, rhs)
        if left != right:
            self._handle(left, lhs, rhs, path)
        out, leaf = self._handle(right, lhs, rhs, path)
        if not leaf and self.post is not None:
            self.post(lhs, rhs, path)
        return out

    def _handle(self, atom: Atom, lhs: Any, rhs: Any, path: Path) -> tuple[Any, bool]:
        if atom.mp is not None:
            return self._map(atom.mp, lhs, rhs, path)
        if atom.scalar is not None:
            for side, value in (("lhs: ", lhs), ("rhs: ", rhs)):
                message = scalar_error(atom.scalar, value)
                if message:
                    self.errors.append(side + message)
                    return ABSENT, False
            return self.rule(lhs, rhs, path), True
        if atom.lst is not None:
            return self._list(atom.lst, lhs, rhs, path)
        self.errors.append("schema error: invalid atom")
        return ABSENT, False

    def _map(self, mp: MapAtom, lhs: Any, rhs: Any, path: Path) -> tuple[Any, bool]:
        left = lhs if isinstance(lhs, dict) else None
        right = rhs if isinstance(rhs, dict) else None
        if mp.atomic or (not left and not right):
            return self.rule(lhs, rhs, path), True
        out: dict[str, Any] = {}
        for key in _keys(left, right):
            child_type = mp.field_type(key)
            if child_type is None:
                self.errors.append(f"field not declared in schema: {key}")
                continue
            child_lhs = left.get(key, ABSENT) if left is not None else ABSENT
            child_rhs = right.get(key, ABSENT) if right is not None else ABSENT
            value = self.walk(child_lhs, child_rhs, child_type, (*path, ("f", key)))
            if value is not ABSENT:
                out[key] = value
        return (out if out else ABSENT), False

    def _list(self, lst: ListAtom, lhs: Any, rhs: Any, path: Path) -> tuple[Any, bool]:
        left = lhs if isinstance(lhs, list) else None
        right = rhs if isinstance(rhs, list) else None
        if lst.relationship == "atomic" or (not left and not right):
            return self.rule(lhs, rhs, path), True
        if self.ordered:
            return self._ordered_list(lst, left or [], right or [], path)
        right_items, order = self._elements(lst, right or [], "rhs: ")
        out: list[Any] = []
        seen: set[PathElement] = set()
        for index, child in enumerate(left or []):
            element = self._element(lst, index, child, "lhs: ")
            if element is None or element in seen:
                if element is not None:
                    self.errors.append(f"lhs: duplicate entries for key {element_text(element)}")
                continue
            seen.add(element)
            value = self.walk(child, right_items.get(element, ABSENT), lst.item, (*path, element))
            if value is not ABSENT:
                out.append(value)
        for element in order:
            if element not in seen:
                value = self.walk(ABSENT, right_items[element], lst.item, (*path, element))
                if value is not ABSENT:
                    out.append(value)
        return (out if out else ABSENT), False

    def _ordered_list(
        self, lst: ListAtom, left: list[Any], right: list[Any], path: Path
    ) -> tuple[Any, bool]:
        """visitListItems of SMD v4.2.1+: items both sides have come in the config's order,
        items only the live object has stay where they were among them."""
        right_items, rhs = self._elements(lst, right, "rhs: ")
        left_items, lhs = self._elements(lst, left, "lhs: ")
        if self.errors:
            return ABSENT, False
        shared = [e for e in rhs if e in left_items]
        next_shared = shared.pop(0) if shared else None
        merged: set[PathElement] = set()
        out: list[Any] = []

        def take(element: PathElement, lhs_value: Any, rhs_value: Any) -> None:
            value = self.walk(lhs_value, rhs_value, lst.item, (*path, element))
            if value is not ABSENT:
                out.append(value)

        li = ri = 0
        while li < len(lhs) or ri < len(rhs):
            if li < len(lhs) and ri < len(rhs):
                element = lhs[li]
                if element == rhs[ri]:
                    merged.add(element)
                    take(element, left_items[element], right_items[element])
                    li, ri = li + 1, ri + 1
                    next_shared = shared.pop(0) if shared else None
                    continue
                if element in right_items and next_shared is not None and next_shared != element:
                    li += 1  # a shared item, but not the one due now
                    continue
            if li < len(lhs):
                element = lhs[li]
                if element not in right_items:
                    take(element, left[li], ABSENT)
                    li += 1
                    continue
                if element in merged:
                    li += 1
            if ri < len(rhs):
                element = rhs[ri]
                merged.add(element)
                take(element, left_items.get(element, ABSENT), right_items[element])
                ri += 1
                if next_shared is not None and next_shared == element:
                    next_shared = shared.pop(0) if shared else None
        return (out if out else ABSENT), False

    def _element(self, lst: ListAtom, index: int, child: Any, side: str) -> PathElement | None:
        try:
            return item_element(lst, index, child)
        except ValueError as error:
            self.errors.append(f"{side}element {index}: {error}")
            return None

    def _elements(
        self, lst: ListAtom, items: list[Any], side: str
    ) -> tuple[dict[PathElement, Any], list[PathElement]]:
        found: dict[PathElement, Any] = {}
        order: list[PathElement] = []
        for index, child in enumerate(items):
            element = self._element(lst, index, child, side)
            if element is None:
                continue
            if element in found:
                self.errors.append(f"{side}duplicate entries for key {element_text(element)}")
            found[element] = child
            order.append(element)
        return found, order


def _keys(left: dict[str, Any] | None, right: dict[str, Any] | None) -> list[str]:
    keys = list(left or ())
    keys += [k for k in right or () if left is None or k not in left]
    return keys


def _keep_rhs(lhs: Any, rhs: Any, path: Path) -> Any:
    return rhs if rhs is not ABSENT else lhs


def merge(live: Any, config: Any, t: TypeRef, ordered: bool = False) -> Any:
    """TypedValue.Merge: `config` merged into `live` (PatchError on invalid values);
    `ordered`: lists as SMD v4.2.1+ orders them (Kubernetes 1.23+), else v4.0.2's (live
    items first, new ones after)."""
    walk = _Walk(_keep_rhs, None, ordered)
    out = walk.walk(live, config, t, ())
    if walk.errors:
        raise PatchError(f"failed to merge config: {errors_text(walk.errors)}")
    return out


@dataclass
class FieldChanges:
    added: FieldSet
    modified: FieldSet
    removed: FieldSet

    def is_same(self) -> bool:
        return self.added.empty() and self.modified.empty() and self.removed.empty()


def _equal(left: Any, right: Any) -> bool:
    return same_json(left, right)


def compare_fields(old: Any, new: Any, t: TypeRef) -> FieldChanges:
    """TypedValue.Compare: the leaf and item paths added, modified and removed (not
    `patch.compare`, which judges a replay against the server)."""
    result = FieldChanges(FieldSet(), FieldSet(), FieldSet())

    def at_leaf(lhs: Any, rhs: Any, path: Path) -> Any:
        if lhs is ABSENT:
            result.added.insert(path)
        elif rhs is ABSENT:
            result.removed.insert(path)
        elif not _equal(lhs, rhs):
            result.modified.insert(path)
        return ABSENT

    def after_item(lhs: Any, rhs: Any, path: Path) -> None:
        if lhs is ABSENT:
            result.added.insert(path)
        elif rhs is ABSENT:
            result.removed.insert(path)

    walk = _Walk(at_leaf, after_item)
    walk.walk(old, new, t, ())
    if walk.errors:
        raise PatchError(f"failed to compare objects: {errors_text(walk.errors)}")
    return result


def to_field_set(value: Any, t: TypeRef, empty_leaves: bool = False) -> FieldSet:
    """TypedValue.ToFieldSet: every leaf, list item and undeclared map member of `value`;
    `empty_leaves`: and every member that is null or an empty object (SMD v4.0.3+,
    Kubernetes 1.21+: an apply's `strategy: null` owns `strategy`)."""
    out = FieldSet()
    _field_set(value, t, (), out, empty_leaves)
    return out


def _field_set(value: Any, t: TypeRef, path: Path, out: FieldSet, empty: bool) -> None:
    atom = deduce(resolve(t), value)
    if atom.mp is not None:
        if atom.mp.atomic:
            out.insert(path)
        elif isinstance(value, dict):
            for key, child in value.items():
                declared = atom.mp.node is not None and atom.mp.node.has_field(key)
                child_type = atom.mp.field_type(key) or UNTYPED
                _field_set(child, child_type, (*path, ("f", key)), out, empty)
                if not declared or (empty and (child is None or child == {})):
                    out.insert((*path, ("f", key)))
    elif atom.scalar is not None:
        out.insert(path)
    elif atom.lst is not None:
        if atom.lst.relationship == "atomic":
            out.insert(path)
        elif isinstance(value, list):
            for index, child in enumerate(value):
                element = _element_or_empty(atom.lst, index, child)
                _field_set(child, atom.lst.item, (*path, element), out, empty)
                out.insert((*path, element))


def _element_or_empty(lst: ListAtom, index: int, child: Any) -> PathElement:
    try:
        return item_element(lst, index, child)
    except ValueError:
        return ("i", -1)


def remove_items(value: Any, items: FieldSet, t: TypeRef) -> Any:
    """TypedValue.RemoveItems: `value` without the members of `items` (emptied maps → null)."""
    atom = deduce(resolve(t), value)
    if atom.mp is not None:
        if not isinstance(value, dict) or not value or atom.mp.atomic:
            return None
        out: dict[str, Any] = {}
        for key, child in value.items():
            element = ("f", key)
            if element in items.members:
                continue
            below = items.child(element)
            if below is not None and not below.empty():
                child = remove_items(child, below, atom.mp.field_type(key) or UNTYPED)
            out[key] = child
        return out or None
    if atom.scalar is not None:
        return value
    if atom.lst is None or not isinstance(value, list) or not value:
        return None
    if atom.lst.relationship == "atomic":
        return None
    kept: list[Any] = []
    for index, child in enumerate(value):
        element = _element_or_empty(atom.lst, index, child)
        if element in items.members:
            continue
        below = items.child(element)
        if below is not None and not below.empty():
            child = remove_items(child, below, atom.lst.item)
        kept.append(child)
    return kept or None


def ensure_named_fields(fields: FieldSet, t: TypeRef) -> FieldSet:
    """Set.EnsureNamedFieldsAreMembers: every struct field a path goes through becomes a
    member itself (not a map's keys, not list items), so that removing the set removes a
    struct left behind whole: `spec.strategy.rollingUpdate` goes with its `maxSurge` when
    the applier owned nothing else in it."""
    atom = resolve(t)
    out = FieldSet()
    out.members = set(fields.members)
    for element, child in fields.children.items():
        child_type: TypeRef | None = None
        if element[0] == "f" and atom.mp is not None:
            if atom.mp.node is not None and atom.mp.node.has_field(element[1]):
                out.members.add(element)
            child_type = atom.mp.field_type(element[1])
        elif element[0] == "k" and atom.lst is not None:
            child_type = atom.lst.item
        out.children[element] = (
            ensure_named_fields(child, child_type) if child_type is not None else child.copy()
        )
    return out
