"""Field paths and field sets as server-side apply tracks them (structured-merge-diff v4).

A path element is a struct or map field (`.spec`), a list item by its keys
(`[name="web"]`), a set item by value (`[="a"]`) or an item of an atomic list by index
(`[0]`). Here it is a hashable tuple: ("f", name), ("k", ((key, json), ...)), ("v", json),
("i", index), where `json` is the canonical JSON text of the value (so 80 and 80.0 match, as
they do in structured-merge-diff). A `FieldSet` is a trie: the elements that are members at
this level, and the subsets below elements. `FieldSet.from_fields_v1` and `.to_fields_v1` read
and write `metadata.managedFields[].fieldsV1` (`{"f:spec": {"f:replicas": {}}, ".": {}}`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from k8s_wiretap.patch.gosemantics import go_json

__all__ = ["FieldSet", "Path", "PathElement", "field", "key_element", "path_text", "value_element"]

PathElement = tuple[str, Any]
Path = tuple[PathElement, ...]


def field(name: str) -> PathElement:
    return ("f", name)


def value_element(value: Any) -> PathElement:
    return ("v", go_json(value))


def key_element(keys: list[tuple[str, Any]]) -> PathElement:
    """The element of a list-map item whose key fields have these values."""
    return ("k", tuple(sorted((name, go_json(value)) for name, value in keys)))


def _go_string(value: Any) -> str:
    """value.ToString: strings quoted (%q), numbers and booleans as %v."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ",".join(_go_string(v) for v in value) + "]"
    if isinstance(value, dict):
        return "".join(f"{k}={_go_string(v)}" for k, v in value.items())
    return go_json(value)


def element_text(element: PathElement) -> str:
    """PathElement.String(): `.name`, `[k=v,...]`, `[=v]`, `[i]`."""
    kind, value = element
    if kind == "f":
        return "." + str(value)
    if kind == "k":
        return "[" + ",".join(f"{k}={_go_string(json.loads(v))}" for k, v in value) + "]"
    if kind == "v":
        return f"[={_go_string(json.loads(value))}]"
    return f"[{value}]"


def path_text(path: Path) -> str:
    return "".join(element_text(e) for e in path)


_RANK = {"f": 0, "k": 1, "v": 2, "i": 3}


def _order(element: PathElement) -> tuple[int, Any]:
    return (_RANK[element[0]], element[1])


class FieldSet:
    """A set of field paths, stored as a trie (structured-merge-diff's fieldpath.Set)."""

    __slots__ = ("children", "members")

    def __init__(self) -> None:
        self.members: set[PathElement] = set()
        self.children: dict[PathElement, FieldSet] = {}

    @classmethod
    def of(cls, *paths: Path) -> FieldSet:
        out = cls()
        for path in paths:
            out.insert(path)
        return out

    def insert(self, path: Path) -> None:
        node = self
        for element in path[:-1]:
            node = node.children.setdefault(element, FieldSet())
        if path:
            node.members.add(path[-1])

    def has(self, path: Path) -> bool:
        node: FieldSet | None = self
        for element in path[:-1]:
            node = node.children.get(element) if node is not None else None
        return node is not None and bool(path) and path[-1] in node.members

    def child(self, element: PathElement) -> FieldSet | None:
        return self.children.get(element)

    def empty(self) -> bool:
        return not self.members and all(c.empty() for c in self.children.values())

    def copy(self) -> FieldSet:
        out = FieldSet()
        out.members = set(self.members)
        out.children = {k: v.copy() for k, v in self.children.items()}
        return out

    def union(self, other: FieldSet) -> FieldSet:
        out = self.copy()
        out.members |= other.members
        for element, child in other.children.items():
            mine = out.children.get(element)
            out.children[element] = mine.union(child) if mine is not None else child.copy()
        return out

    def intersection(self, other: FieldSet) -> FieldSet:
        out = FieldSet()
        out.members = self.members & other.members
        for element, child in self.children.items():
            theirs = other.children.get(element)
            if theirs is not None:
                both = child.intersection(theirs)
                if not both.empty():
                    out.children[element] = both
        return out

    def difference(self, other: FieldSet) -> FieldSet:
        """Members of `other` removed at every level; subsets below them are kept."""
        out = FieldSet()
        out.members = self.members - other.members
        for element, child in self.children.items():
            theirs = other.children.get(element)
            rest = child.difference(theirs) if theirs is not None else child.copy()
            if not rest.empty():
                out.children[element] = rest
        return out

    def recursive_difference(self, other: FieldSet) -> FieldSet:
        """Like difference, and everything below a member of `other` goes too."""
        out = FieldSet()
        out.members = self.members - other.members
        for element, child in self.children.items():
            if element in other.members:
                continue
            theirs = other.children.get(element)
            rest = child.recursive_difference(theirs) if theirs is not None else child.copy()
            if not rest.empty():
                out.children[element] = rest
        return out

    def paths(self, prefix: Path = ()) -> Iterator[Path]:
        """Every member path in structured-merge-diff's order (Set.Iterate, which conflict
        messages list): this level's members first, then each child's paths, each sorted."""
        for element in sorted(self.members, key=_order):
            yield (*prefix, element)
        for element in sorted(self.children, key=_order):
            yield from self.children[element].paths((*prefix, element))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FieldSet) and set(self.paths()) == set(other.paths())

    def __hash__(self) -> int:
        return hash(frozenset(self.paths()))

    def __repr__(self) -> str:
        return "FieldSet(" + ", ".join(path_text(p) for p in self.paths()) + ")"

    @classmethod
    def from_fields_v1(cls, fields: Any) -> FieldSet:
        """A FieldsV1 object (`{"f:spec": {"f:replicas": {}}}`); ValueError if malformed."""
        out = cls()
        if not isinstance(fields, dict):
            raise ValueError("FieldsV1 is not an object")
        for key, value in fields.items():
            if key == ".":
                continue
            element = _parse_element(key)
            if not isinstance(value, dict):
                raise ValueError(f"FieldsV1 {key}: not an object")
            if not value or "." in value:
                out.members.add(element)
            child = cls.from_fields_v1(value)
            if not child.empty():
                out.children[element] = child
        return out

    def to_fields_v1(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for element in sorted(self.members | set(self.children), key=_order):
            child = self.children.get(element)
            body = child.to_fields_v1() if child is not None else {}
            if element in self.members and body:
                body = {".": {}, **body}
            out[_element_key(element)] = body
        return out


def _parse_element(key: str) -> PathElement:
    kind, sep, text = key.partition(":")
    if not sep or kind not in _RANK:
        raise ValueError(f"FieldsV1: bad path element {key!r}")
    if kind == "f":
        return ("f", text)
    if kind == "i":
        return ("i", int(text))
    value = json.loads(text)
    if kind == "v":
        return value_element(value)
    if not isinstance(value, dict):
        raise ValueError(f"FieldsV1: bad key {key!r}")
    return key_element(list(value.items()))


def _element_key(element: PathElement) -> str:
    kind, value = element
    if kind == "f":
        return "f:" + str(value)
    if kind == "i":
        return f"i:{value}"
    if kind == "v":
        return "v:" + str(value)
    return "k:{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in value) + "}"
