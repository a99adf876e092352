"""Did the replay predict what the server stored? `compare(...)` → `Comparison`.

The rule: `matches` is true when every field the patch sets has, in `server`, the value the
replay produced (`after_local`), and every field the patch removes is gone there too. "The
fields the patch sets" are the patch's own, not the difference between before and after (so
whatever else happened to the object does not count); per patch kind (touched.py):

- strategic merge patch: its keys down to scalars, nulls (removals), maps under
  `$patch: replace|delete` and lists that are not merged (whole values), merge lists item by
  item (by merge key, or value for primitives) and their order, the values of
  `$deleteFromPrimitiveList`, the order of `$setElementOrder` lists, and the members a
  `$retainKeys` leaves out;
- JSON merge patch: its keys down to non-object values and nulls;
- JSON patch: each operation's `path` (and a `move`'s `from`), `test` excluded, down to the
  first list on the way, which is compared whole since indices shift as operations apply;
- server-side apply: the configuration's field set (leaves, list-map items by key, set items
  by value, atomic lists whole) plus the fields the manager owned before (pruned unless
  someone else owns them).

Within a set value, members only the server has are defaults it filled in (a container's
`imagePullPolicy`, a new port's `protocol`) and do not count; nor does a struct field the replay
removed that the server has with the value it had before (defaulting put it back, as after a
strategic merge patch's null of `progressDeadlineSeconds`). Not so for a server-side apply,
whose replay defaults the object as the server does where kube/data/defaults-MINOR.yaml covers
the kind: there such a field is a mismatch, and for other kinds (custom resources too) the
replay cannot know, and says so: `matches` is None, `mismatches` tells where. Fields the
server maintains itself never count: `metadata.resourceVersion`, `generation`,
`creationTimestamp`, `uid`, `selfLink`, the time and operation of `metadata.managedFields`
entries, and `status` (unless the patch went to the status subresource: then only `status`
counts, as the server keeps the rest as it was).

Values compare as JSON (1 equals 1.0, not true); quantities (`"0.5"` and `"500m"`) by value,
as Go's ParseQuantity reads them (kube/quantity.py);
a null, an empty list and a missing member are the same, as are an empty object and a missing
member the server omitted; keys starting with `$` in `after_local` (patch directives a replay
kept, which the server's decoder drops) are ignored.

`matches` is None when there is nothing to compare against (the server answered with a
Status, the patch kind is unknown, or the body can not be decoded); `mismatches` says why.
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from k8s_wiretap.kube.defaults import covered
from k8s_wiretap.kube.fields import SERVER_METADATA
from k8s_wiretap.kube.quantity import same_value
from k8s_wiretap.patch.bodies import decode_patch_body, patch_kind
from k8s_wiretap.patch.errors import PatchError
from k8s_wiretap.patch.fieldpath import FieldSet, path_text
from k8s_wiretap.patch.gosemantics import go_json
from k8s_wiretap.patch.meta import Node, PatchSchema
from k8s_wiretap.patch.touched import (
    WHOLE,
    Fields,
    Items,
    Touch,
    apply_touch,
    identity_text,
    json_patch_touch,
    list_identity,
    merge_touch,
    strategic_touch,
)

__all__ = ["Comparison", "compare"]

QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_MISSING: Any = object()


@dataclass(frozen=True)
class Comparison:
    matches: bool | None
    mismatches: list[str] = field(default_factory=list)


def compare(
    kind: str,
    patch_body: Any,
    before: dict[str, Any],
    after_local: dict[str, Any],
    server: dict[str, Any],
    *,
    schema: PatchSchema | None = None,
    manager: str | None = None,
    subresource: str = "",
    everything: bool = False,
) -> Comparison:
    """Check `after_local` (the replay) against `server` on what the patch touched.

    `manager`: the field manager of a server-side apply (its previously owned fields count as
    touched). `everything`: check the whole object instead (still allowing defaults, and
    without `metadata.managedFields` unless the patch is an apply), for tests.
    """
    short = patch_kind(kind)
    if short is None:
        return Comparison(None, [f"unknown patch kind {kind!r}"])
    if not isinstance(server, dict) or server.get("kind") == "Status":
        return Comparison(None, ["the server stored nothing (it answered with a Status)"])
    node = _root(schema or PatchSchema.builtin(), server)
    try:
        body = decode_patch_body(short, patch_body)
    except PatchError as error:
        return Comparison(None, [f"the patch can not be decoded: {error.message}"])
    touch = (
        WHOLE
        if everything
        else _touch(short, body, node, before, after_local, manager, subresource)
    )
    skip_managed = everything and short != "apply"
    checker = _Checker(subresource, skip_managed, _put_back(short, server))
    checker.check("", after_local, server, before, touch, node)
    if checker.unknown and not checker.mismatches:
        return Comparison(None, checker.unknown)
    return Comparison(not checker.mismatches, checker.mismatches)


def _put_back(kind: str, server: dict[str, Any]) -> str:
    """What a field the replay removed and the server has as before means: "allowed" (the
    server's defaulting, which the replay of this patch kind leaves out), "strict" (the
    replay defaulted the object; it is a mismatch), "unknown" (defaulting the replay does
    not model)."""
    if kind != "apply":
        return "allowed"
    return (
        "strict" if covered(str(server.get("apiVersion")), str(server.get("kind"))) else "unknown"
    )


def _root(schema: PatchSchema, obj: dict[str, Any]) -> Node | None:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if isinstance(api_version, str) and isinstance(kind, str):
        return schema.for_kind(api_version, kind)
    return None


def _touch(
    kind: str,
    body: Any,
    node: Node | None,
    before: Any,
    after: Any,
    manager: str | None,
    subresource: str,
) -> Touch:
    if kind == "strategic":
        return strategic_touch(body, node, before)
    if kind == "merge":
        return merge_touch(body)
    if kind == "json":
        return json_patch_touch(body, before, after)
    return apply_touch(body, node, before, manager, subresource)


def _is_absent(value: Any) -> bool:
    """Missing, null, or an empty list (the server omits empty lists of omitempty fields)."""
    return value is _MISSING or value is None or (isinstance(value, list) and not value)


def _scalars_equal(local: Any, server: Any, node: Node | None) -> bool:
    if isinstance(local, bool) or isinstance(server, bool):
        return type(local) is type(server) and local == server
    if isinstance(local, (int, float)) and isinstance(server, (int, float)):
        return local == server
    if local == server:
        return True
    quantity = node is not None and node.definition == QUANTITY
    if quantity and isinstance(local, (str, int, float)) and isinstance(server, str):
        return same_value(str(local), server)
    return False


class _Checker:
    def __init__(self, subresource: str, skip_managed: bool, put_back: str) -> None:
        self.subresource = subresource
        self.skip_managed = skip_managed
        self.put_back = put_back
        self.mismatches: list[str] = []
        self.unknown: list[str] = []

    def _skipped(self, path: str) -> bool:
        if self.subresource == "status" and path.count(".") == 1:
            return path != ".status"  # the status subresource keeps the rest as it was
        if path == ".status" and self.subresource != "status":
            return True
        if path == ".metadata.managedFields" and self.skip_managed:
            return True
        return path.startswith(".metadata.") and path[10:] in SERVER_METADATA

    def _missing(self, path: str, local: Any, server: Any, before: Any = _MISSING) -> bool:
        """Presence checks; True when there is nothing more to compare.

        A struct field the replay removed and the server still has with the value it had
        before is taken for one the server's defaulting put back (a pruned
        `progressDeadlineSeconds`); `before` is only passed for struct fields.
        """
        if _is_absent(local) and _is_absent(server):
            return True
        if _is_absent(server):
            if local != {}:  # an empty object the server omitted is no difference
                self.mismatches.append(f"{path}: missing on the server")
            return True
        if _is_absent(local):
            changed = before is _MISSING or go_json(before) != go_json(server)
            if changed or self.put_back == "strict":
                self.mismatches.append(f"{path}: the server kept it, the replay removed it")
            elif self.put_back == "unknown":
                self.unknown.append(
                    f"{path}: the server has it as before, the replay removed it (defaulting "
                    "the replay does not model for this kind may have put it back)"
                )
            return True
        return False

    def check(
        self,
        path: str,
        local: Any,
        server: Any,
        before: Any,
        touch: Touch,
        node: Node | None,
        field: bool = False,
    ) -> None:
        """`field`: the value is a struct field (which the server may default)."""
        if type(local) is type(server) and local == server:
            return  # equal all the way down (== in C): no leaf below can differ
        known = before if field else _MISSING
        if self._skipped(path) or self._missing(path or ".", local, server, known):
            return
        if isinstance(touch, Fields) and isinstance(local, dict) and isinstance(server, dict):
            self._fields(path, local, server, before, touch, node)
        elif isinstance(touch, Items) and isinstance(local, list) and isinstance(server, list):
            self._items(path, local, server, before, touch, node)
        else:
            self.whole(path, local, server, node, before)

    def _fields(
        self,
        path: str,
        local: dict[str, Any],
        server: dict[str, Any],
        before: Any,
        touch: Fields,
        node: Node | None,
    ) -> None:
        earlier = before if isinstance(before, dict) else {}
        for name, child in touch.children.items():
            if name.startswith("$"):
                continue
            child_node = _member(node, name)
            values = local.get(name, _MISSING), server.get(name, _MISSING)
            previous = earlier.get(name, _MISSING)
            self.check(f"{path}.{name}", *values, previous, child, child_node, _struct(node))

    def _items(
        self,
        path: str,
        local: list[Any],
        server: list[Any],
        before: Any,
        touch: Items,
        node: Node | None,
    ) -> None:
        item_node = node.item() if node is not None else None
        local_ids = [touch.identity(v, i) for i, v in enumerate(local)]
        server_ids = [touch.identity(v, i) for i, v in enumerate(server)]
        local_items = dict(zip(local_ids, local, strict=True))
        server_items = dict(zip(server_ids, server, strict=True))
        earlier = before if isinstance(before, list) else []
        before_items = {touch.identity(v, i): v for i, v in enumerate(earlier)}
        for ident, child in touch.children.items():
            values = local_items.get(ident, _MISSING), server_items.get(ident, _MISSING)
            previous = before_items.get(ident, _MISSING)
            self.check(path + identity_text(ident), *values, previous, child, item_node)
        if touch.order and local_ids != server_ids:
            self._order(path, local_ids, server_ids)

    def _order(self, path: str, local: list[Hashable], server: list[Hashable]) -> None:
        def text(ids: list[Hashable]) -> str:
            return " ".join(identity_text(i) for i in ids)

        self.mismatches.append(f"{path}: items {text(local)} here, {text(server)} on the server")

    def whole(
        self, path: str, local: Any, server: Any, node: Node | None, before: Any = _MISSING
    ) -> None:
        """Compare values; members only the server has are defaults and are allowed."""
        if path == ".metadata.managedFields":
            local, server = _without_times(local), _without_times(server)
            if isinstance(local, list) and isinstance(server, list):
                self._owners(path, local, server)
                local, server = _without_fields(local), _without_fields(server)
        if isinstance(local, dict) and isinstance(server, dict):
            self._whole_map(path, local, server, node, before)
        elif isinstance(local, list) and isinstance(server, list):
            self._whole_list(path, local, server, node, before)
        elif not _scalars_equal(local, server, node):
            self.mismatches.append(
                f"{path or '.'}: {_text(local)} here, {_text(server)} on the server"
            )

    def _owners(self, path: str, local: list[Any], server: list[Any]) -> None:
        """Each manager's fields, as sets: no more and no fewer than the server's (as values,
        FieldsV1 leaves are empty objects, which the comparison of values lets go)."""
        theirs = {_entry_key(e): _fields(e) for e in server}
        for entry in local:
            mine, other = _fields(entry), theirs.get(_entry_key(entry))
            if mine is None or other is None or mine == other:
                continue
            name = entry.get("manager") if isinstance(entry, dict) else None
            for where, extra in (
                ("here", mine.difference(other)),
                ("on the server", other.difference(mine)),
            ):
                paths = [path_text(p) for p in extra.paths()]
                if paths:
                    listed = ", ".join(paths[:4]) + (", ..." if len(paths) > 4 else "")
                    self.mismatches.append(f"{path}: {name} owns {listed} only {where}")

    def _whole_map(
        self,
        path: str,
        local: dict[str, Any],
        server: dict[str, Any],
        node: Node | None,
        before: Any,
    ) -> None:
        earlier = before if isinstance(before, dict) else {}
        for name, value in local.items():
            if name.startswith("$"):
                continue
            child = _member(node, name)
            child_path = f"{path}.{name}"
            other, previous = server.get(name, _MISSING), earlier.get(name, _MISSING)
            known = previous if _struct(node) else _MISSING
            if self._skipped(child_path) or self._missing(child_path, value, other, known):
                continue
            self.whole(child_path, value, other, child, previous)

    def _whole_list(
        self, path: str, local: list[Any], server: list[Any], node: Node | None, before: Any
    ) -> None:
        identity = list_identity(node)
        item_node = node.item() if node is not None else None
        local_ids = [identity(v, i) for i, v in enumerate(local)]
        server_ids = [identity(v, i) for i, v in enumerate(server)]
        if local_ids != server_ids:
            self._order(path, local_ids, server_ids)
            return
        earlier = before if isinstance(before, list) else []
        previous = {identity(v, i): v for i, v in enumerate(earlier)}
        for ident, left, right in zip(local_ids, local, server, strict=True):
            item_path = path + identity_text(ident)
            self.whole(item_path, left, right, item_node, previous.get(ident, _MISSING))


def _member(node: Node | None, name: str) -> Node | None:
    """The node of a member: a struct's field or a map's values."""
    if node is None:
        return None
    return node.item() if node.kind == "map" else node.field(name)


def _struct(node: Node | None) -> bool:
    return node is not None and node.kind == "struct"


def _text(value: Any) -> str:
    text = go_json(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _fields(entry: Any) -> FieldSet | None:
    fields = entry.get("fieldsV1") if isinstance(entry, dict) else None
    try:
        return FieldSet.from_fields_v1(fields) if isinstance(fields, dict) else None
    except ValueError:
        return None


def _without_fields(entries: list[Any]) -> list[Any]:
    return [
        {k: v for k, v in e.items() if k != "fieldsV1"} if isinstance(e, dict) else e
        for e in entries
    ]


def _without_times(entries: Any) -> Any:
    """managedFields without what the server's clock decides: each entry's time and, with
    it, the order of the entries (the server sorts them by operation, then time in seconds,
    then manager), and the operation (a migrated client-side manager changes it)."""
    if not isinstance(entries, list):
        return entries
    kept = [
        {k: v for k, v in e.items() if k not in ("time", "operation")} if isinstance(e, dict) else e
        for e in entries
    ]
    return sorted(kept, key=_entry_key)


def _entry_key(entry: Any) -> tuple[str, str, str]:
    if not isinstance(entry, dict):
        return ("", "", json.dumps(entry, sort_keys=True))
    return (str(entry.get("manager")), str(entry.get("apiVersion")), str(entry.get("subresource")))
