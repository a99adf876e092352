"""Strategic merge patch, applied as the API server of a given release applies it.

`apply_strategic(original, patch, node, release)` is apimachinery's `StrategicMergeMapPatch`
with the server's options (parallel lists merged, unmatched nulls ignored), ported line by line
from strategicpatch/patch.go: `mergeMap`, the `$patch: replace|merge|delete` directives,
`$retainKeys`, `$deleteFromPrimitiveList/<field>`, `$setElementOrder/<field>`, null deletes,
merge keys and primitive lists with the merge strategy. Patch metadata comes from `node` (see
meta.py) with the semantics of the server's Go-struct lookup: a field missing from a struct,
or a lookup below a map, is an error. `node=None` means no schema: maps merge, lists are
replaced.

Quirks of the server are kept, because the point is to predict what it stores. They changed
between releases (`SmpRules.of(release)`; `release=None` is 1.20, the oldest the lab runs):

- 1.20-1.21: a patch value for a key the original lacks is stored as sent, directives and
  all (the server's decoder then drops unknown keys such as `$setElementOrder/...`, see
  `prune`), nulls included; `$deleteFromPrimitiveList/x` for a missing `x` stores the
  deletion list as `x`; a `$deleteFromPrimitiveList` of a list that is not merged replaces it.
- 1.22: a deletion list for a missing (or differently typed) `x` is dropped.
- 1.24: nulls inside such a new value are dropped (`discardNullValuesFromPatch`).
- 1.28: directives are removed from such a new value (`removeDirectives`: a map with `$patch`
  goes, a list loses its `$patch` items) and from a list `$setElementOrder` adds; a deletion
  list deletes from any list, merged or not.

Items a merge adds come before the ones the object had, unless `$setElementOrder` says
otherwise, and the order such a list gets after `$patch: delete` items depends on Go slices
sharing their backing array (reproduced in smp_lists.py). Go iterates patch maps in random
order; here keys are processed in the patch's order (the server's result can differ only for
patches whose outcome depends on it, such as a primitive added and deleted in the same patch).

Errors are `PatchError`s with the server's message and HTTP status (400 for malformed
directives, 422 for lists of lists, 500 for everything the server does not classify).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from k8s_wiretap.kube.release import Release, ReleaseLike
from k8s_wiretap.patch.errors import PatchError
from k8s_wiretap.patch.gosemantics import SLICE, bad_arg_type, copy_json, go_eq, go_v, hash_key
from k8s_wiretap.patch.meta import DEFAULT_RELEASE, Node
from k8s_wiretap.patch.smp_lists import (
    DIRECTIVE,
    bad_patch_type,
    element_kind,
    merge_key_equal,
    merge_slice,
    normalize_element_order,
    partition,
)

__all__ = [
    "SmpRules",
    "apply_strategic",
    "lookup_slice",
    "lookup_struct",
    "retain_keys_strategy",
]

RETAIN_KEYS = "$retainKeys"
DELETE_PREFIX = "$deleteFromPrimitiveList"
ORDER_PREFIX = "$setElementOrder"

BAD_PRIMITIVE_LIST = "invalid patch format of primitive list"
BAD_RETAIN_KEYS = "invalid patch format of retainKeys"
BAD_ORDER_LIST = "invalid patch format of setElementOrder list"

Meta = tuple[Node | None, tuple[str, ...], str]


@dataclass(frozen=True)
class SmpRules:
    """What a release's mergeMap does with a patch value the original has no match for."""

    skip_unmatched_delete_lists: bool = False  # 1.22
    discard_new_nulls: bool = False  # 1.24
    remove_directives: bool = False  # 1.28, with deletion lists deleting from any list

    @classmethod
    def of(cls, release: ReleaseLike) -> SmpRules:
        """The rules of `release` ("v1.30.2", "1.28"); 1.20's for None or an unknown one."""
        server = Release.of(release, DEFAULT_RELEASE)
        return cls(server >= Release(1, 22), server >= Release(1, 24), server >= Release(1, 28))


def apply_strategic(
    original: dict[str, Any], patch: Any, node: Node | None, release: ReleaseLike = None
) -> dict[str, Any]:
    """`original` with the strategic merge `patch` applied as `release`'s API server does
    (inputs are not modified)."""
    if not isinstance(patch, dict):
        kind = "array" if isinstance(patch, list) else "value"
        message = f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
        raise PatchError(message, 400)
    return _merge_map(copy_json(original), copy_json(patch), node, SmpRules.of(release))


def lookup_struct(node: Node | None, key: str) -> Meta:
    """LookupPatchMetadataForStruct: the field's node, patch strategies and merge key."""
    if node is None:
        return None, (), ""
    if node.go_kind != "struct":
        message = "merging an object in json but data type is not struct, instead is: "
        raise PatchError(message + node.go_kind)
    child = node.lookup(key) if node.kind == "struct" else None
    if child is None:
        message = f'unable to find api field in struct {node.name} for the json field "{key}"'
        raise PatchError(message)
    return child, child.strategies, child.merge_key


def lookup_slice(node: Node | None, key: str) -> Meta:
    """LookupPatchMetadataForSlice: like lookup_struct, but the node of the list's items."""
    child, strategies, merge_key = lookup_struct(node, key)
    if child is None:
        return None, strategies, merge_key
    if child.kind == "list":
        item = child.item()
        if item is not None and item.kind == "list":
            raise PatchError("unexpected slice of slice")
        return item, strategies, merge_key
    if child.go_kind == "struct":  # a pointer field: Go takes the pointed-to type
        return child, strategies, merge_key
    raise PatchError("expected slice or array type, but got: struct")


def retain_keys_strategy(strategies: tuple[str, ...]) -> tuple[bool, str]:
    """extractRetainKeysPatchStrategy: (has retainKeys, the other strategy)."""
    if len(strategies) == 0:
        return False, ""
    if len(strategies) == 1:
        only = strategies[0]
        return (True, "") if only == "retainKeys" else (False, only)
    if len(strategies) == 2 and "retainKeys" in strategies:
        return True, strategies[1] if strategies[0] == "retainKeys" else strategies[0]
    raise PatchError(f"unexpected patch strategy: {go_v(list(strategies))}")


def _merge_map(
    original: dict[str, Any], patch: dict[str, Any], node: Node | None, rules: SmpRules
) -> dict[str, Any]:
    if DIRECTIVE in patch:
        return _map_directive(patch[DIRECTIVE], patch)
    _apply_retain_keys(original, patch)
    _merge_ordered_lists(original, patch, node, rules)
    for key, value in list(patch.items()):
        delete_list = key.startswith(DELETE_PREFIX)
        if delete_list:
            key = _extract_key(key, DELETE_PREFIX, BAD_PRIMITIVE_LIST)
        if value is None:
            original.pop(key, None)
        elif key not in original or type(original[key]) is not type(value):
            if not (delete_list and rules.skip_unmatched_delete_lists):
                _store_new(original, key, value, rules)
        elif isinstance(value, dict):
            original[key] = _merge_child_map(original[key], value, node, key, rules)
        elif isinstance(value, list):
            original[key] = _merge_child_list(original[key], value, node, key, delete_list, rules)
        else:
            original[key] = value
    return original


def _store_new(original: dict[str, Any], key: str, value: Any, rules: SmpRules) -> None:
    """A patch value with nothing to merge into: stored as the release stores it."""
    if rules.discard_new_nulls:
        _discard_nulls(value)
    if rules.remove_directives:
        value, keep = _remove_directives(value)
        if not keep:
            original.pop(key, None)
            return
    original[key] = value


def _discard_nulls(value: Any) -> None:
    """discardNullValuesFromPatch: drop null members of maps, at every depth."""
    if isinstance(value, dict):
        for key in [k for k, v in value.items() if v is None]:
            del value[key]
        for child in value.values():
            _discard_nulls(child)
    elif isinstance(value, list):
        for child in value:
            _discard_nulls(child)


def _remove_directives(value: Any) -> tuple[Any, bool]:
    """removeDirectives: (the value without `$patch` maps, whether to keep it at all)."""
    if isinstance(value, dict):
        if DIRECTIVE in value:
            return None, False
        for key in list(value):
            value[key], keep = _remove_directives(value[key])
            if not keep:
                del value[key]
        return value, True
    if isinstance(value, list):
        kept = [_remove_directives(item) for item in value]
        return [item for item, keep in kept if keep], True
    return value, True


def _merge_child_map(
    original: Any, patch: dict[str, Any], node: Node | None, key: str, rules: SmpRules
) -> Any:
    child, strategies, _ = lookup_struct(node, key)
    _, strategy = retain_keys_strategy(strategies)
    return patch if strategy == "replace" else _merge_map(original, patch, child, rules)


def _merge_child_list(
    original: Any,
    patch: list[Any],
    node: Node | None,
    key: str,
    delete_list: bool,
    rules: SmpRules,
) -> list[Any]:
    item, strategies, merge_key = lookup_slice(node, key)
    _, strategy = retain_keys_strategy(strategies)
    if strategy != "merge" and not (delete_list and rules.remove_directives):
        return patch
    merge = partial(_merge_map, rules=rules)
    return merge_slice(original, patch, item, merge_key, delete_list, merge)


def _map_directive(directive: Any, patch: dict[str, Any]) -> dict[str, Any]:
    """handleDirectiveInMergeMap: `$patch: replace` keeps the patch, `delete` empties."""
    if go_eq(directive, "replace"):
        del patch[DIRECTIVE]
        return patch
    if go_eq(directive, "delete"):
        return {}
    raise bad_patch_type(directive, patch)


def _extract_key(key: str, prefix: str, error: str) -> str:
    head, sep, rest = key.partition("/")
    if not sep or head != prefix:
        raise PatchError(error, 400)
    return rest


def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    """applyRetainKeysDirective: drop what `$retainKeys` does not list; check the patch."""
    if RETAIN_KEYS not in patch:
        return
    listed = patch.pop(RETAIN_KEYS)
    if not isinstance(listed, list):
        raise PatchError(BAD_RETAIN_KEYS, 400)
    keep = {hash_key(v) for v in listed}
    for key, value in patch.items():
        if value is None or key.startswith((DELETE_PREFIX, ORDER_PREFIX)):
            continue
        if (str, key) not in keep:
            raise PatchError(BAD_RETAIN_KEYS, 400)
    for key in [k for k in original if (str, k) not in keep]:
        del original[key]


def _merge_ordered_lists(
    original: dict[str, Any], patch: dict[str, Any], node: Node | None, rules: SmpRules
) -> None:
    """mergePatchIntoOriginal: merge each `$setElementOrder/x` list with `x`, in order."""
    for key in [k for k in patch if k.startswith(ORDER_PREFIX)]:
        if key in patch:
            order = patch.pop(key)
            _merge_ordered_list(original, patch, node, key, order, rules)


def _list_value(holder: dict[str, Any], key: str) -> list[Any] | None:
    if key not in holder:
        return None
    value = holder[key]
    if not isinstance(value, list):
        raise bad_arg_type(SLICE, value)
    return value


def _merge_ordered_list(
    original: dict[str, Any],
    patch: dict[str, Any],
    node: Node | None,
    key: str,
    order: Any,
    rules: SmpRules,
) -> None:
    if not isinstance(order, list):
        raise bad_arg_type(SLICE, order)
    field = _extract_key(key, ORDER_PREFIX, BAD_ORDER_LIST)
    current = _list_value(original, field)
    patch_list = _list_value(patch, field)
    item, strategies, merge_key = lookup_slice(node, field)
    _, strategy = retain_keys_strategy(strategies)
    _validate_order(patch_list or [], order, merge_key)
    if current is None and patch_list is None:
        return
    if patch_list is None:
        merged: list[Any] = current or []
    elif current is None:
        merged = _remove_directives(patch_list)[0] if rules.remove_directives else patch_list
    elif strategy == "merge":
        merge = partial(_merge_map, rules=rules)
        merged = merge_slice(current, patch_list, item, merge_key, False, merge)
    else:
        merged = patch_list
    in_order, server_only = partition(merged, order, merge_key)
    kind = element_kind(current or [], patch_list or [])
    original[field] = normalize_element_order(
        in_order, server_only, order, current or [], merge_key, kind
    )
    patch.pop(field, None)


def _validate_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    """validatePatchWithSetOrderList: patch items must appear in `order`, in its order."""
    if not order or not patch_list:
        return
    items = patch_list
    if merge_key:
        for item in patch_list:
            if not isinstance(item, dict):
                raise bad_arg_type("map[string]interface {}", item)
        items = [i for i in patch_list if not go_eq(i.get(DIRECTIVE), "delete")]
    position = at = 0
    while position < len(items) and at < len(order):
        item = items[position]
        if isinstance(item, dict) and DIRECTIVE in item:
            position += 1
            continue
        if merge_key_equal(item, order[at], merge_key):
            position += 1
        at += 1
    if position < len(items) and at >= len(order):
        raise PatchError(
            f"The order in patch list:\n{go_v(patch_list)}\n doesn't match "
            f"{ORDER_PREFIX} list:\n{go_v(order)}\n"
        )
