"""Strategic merge patch, lists: merging by merge key, deleting, and the order of the result.

A port of the list half of apimachinery's strategicpatch/patch.go (Kubernetes 1.20):
`mergeSlice`, `mergeSliceWithSpecialElements`, `mergeSliceWithoutSpecialElements`,
`deleteFromSlice`, `normalizeElementOrder`, `mergeSortedSlice`, `partition*` and their errors.
Go's `==` on interface values (and its panics) is `go_eq`; its `sort.SliceStable` is
`slice_stable`, because the ordering comparison is not a strict weak order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from k8s_wiretap.patch.errors import REJECTED, PatchError
from k8s_wiretap.patch.gosemantics import MAP, bad_arg_type, go_eq, go_s, go_type, go_v, hash_key
from k8s_wiretap.patch.gosort import slice_stable
from k8s_wiretap.patch.meta import Node

__all__ = [
    "DIRECTIVE",
    "MergeMap",
    "bad_patch_type",
    "element_kind",
    "find_by_key",
    "merge_key_equal",
    "merge_slice",
    "no_merge_key",
    "node_name",
    "normalize_element_order",
    "partition",
]

DIRECTIVE = "$patch"
NIL_DEREFERENCE = "invalid memory address or nil pointer dereference"
MergeMap = Callable[[dict[str, Any], dict[str, Any], Node | None], dict[str, Any]]


def no_merge_key(item: dict[str, Any], key: str) -> PatchError:
    return PatchError(f"map: {go_v(item)} does not contain declared merge key: {key}")


def node_name(node: Node | None) -> str:
    """LookupPatchMeta.Name() of a list's element type (Go: the reflect.Kind)."""
    return node.go_kind if node is not None else "<nil>"


def element_kind(*lists: list[Any]) -> str:
    """sliceElementType: the Go type all items share; errors for lists and mixed types."""
    found: str | None = None
    seen = False
    for items in lists:
        for item in items:
            kind = go_type(item)
            if not seen:
                if kind is None:  # Go calls Kind() on a nil reflect.Type
                    raise PatchError(f"runtime error: {NIL_DEREFERENCE}")
                seen, found = True, kind
                if kind == "[]interface {}":
                    raise PatchError("lists of lists are not supported", 422, REJECTED)
            elif kind != found:
                text = "[" + " ".join(go_v(list(items)) for items in lists) + "]"
                raise PatchError(f"list element types are not identical: {text}")
    if not seen:
        raise PatchError("no elements in any of the given slices")
    return "nil" if found is None else found


def find_by_key(items: list[Any], key: str, value: Any) -> tuple[dict[str, Any], int] | None:
    """findMapInSliceBasedOnKeyValue: the first map whose `key` == `value`."""
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise PatchError(f"value for key {index} is not a map")
        if key in item and go_eq(item[key], value):
            return item, index
    return None


def merge_key_equal(left: Any, right: Any, key: str) -> bool:
    if not key:
        return go_eq(left, right)
    if not isinstance(left, dict):
        raise bad_arg_type(MAP, left)
    if not isinstance(right, dict):
        raise bad_arg_type(MAP, right)
    if key not in left:
        raise no_merge_key(left, key)
    if key not in right:
        raise no_merge_key(right, key)
    return go_eq(left[key], right[key])


def merge_slice(
    original: list[Any],
    patch: list[Any],
    node: Node | None,
    merge_key: str,
    delete_list: bool,
    merge_map: MergeMap,
) -> list[Any]:
    """mergeSlice (server side: parallel lists are merged, unmatched nulls ignored).

    Go slices share their backing array: deleting an item shifts the caller's `original` in
    place and appends fill the freed slots, and the caller (a `$setElementOrder` merge) then
    orders the result by what it sees there. `original` is mutated the same way here (never
    resized, since the server's lists have no spare capacity), so the order comes out as the
    server's does.
    """
    if not original and not patch:
        return original
    kind = element_kind(original, patch)
    if kind != MAP:
        if delete_list:
            return _delete_from_slice(original, patch)
        both = original if not patch else original + patch  # append() reuses a full array
        merged = both[: _dedup_scalars(both)]
        server_order = original
    else:
        if not merge_key:
            raise PatchError(f"cannot merge lists without merge key for {node_name(node)}")
        array, length, patch = _special_elements(original, patch, merge_key)
        server_order = array[:length]
        merged = _merge_items(array, length, patch, merge_key, node, merge_map)
    patch_items, server_only = partition(merged, patch, merge_key)
    return normalize_element_order(patch_items, server_only, patch, server_order, merge_key, kind)


def _delete_from_slice(current: list[Any], delete: list[Any]) -> list[Any]:
    doomed = {hash_key(v) for v in delete}
    return [v for v in current if hash_key(v) not in doomed]


def _dedup_scalars(items: list[Any]) -> int:
    """deduplicateScalars in place (s[j] = s[last], as Go does); returns the new length."""
    length = len(items) - 1
    i = 0
    while i < length:
        j = i + 1
        while j <= length:
            if go_eq(items[i], items[j]):
                items[j] = items[length]
                length -= 1
                j -= 1
            j += 1
        i += 1
    return length + 1


def _special_elements(
    original: list[Any], patch: list[Any], key: str
) -> tuple[list[Any], int, list[Any]]:
    """mergeSliceWithSpecialElements on the shared array: (array, length, plain patch)."""
    plain: list[Any] = []
    replace = False
    length = len(original)
    for item in patch:
        if DIRECTIVE not in item:
            plain.append(item)
            continue
        directive = item[DIRECTIVE]
        if go_eq(directive, "delete"):
            if key not in item:
                raise no_merge_key(item, key)
            length = _delete_matching(original, length, key, item[key])
        elif go_eq(directive, "replace"):
            replace = True
        elif go_eq(directive, "merge"):
            raise PatchError("merging lists cannot yet be specified in the patch")
        else:
            raise bad_patch_type(directive, item)
    return (plain, len(plain), []) if replace else (original, length, plain)


def bad_patch_type(directive: Any, item: dict[str, Any]) -> PatchError:
    return PatchError(f"unknown patch type: {go_s(directive)} in map: {go_v(item)}")


def _delete_matching(array: list[Any], length: int, key: str, value: Any) -> int:
    """deleteMatchingEntries: `append(s[:i], s[i+1:]...)` shifts the shared array left."""
    while (found := find_by_key(array[:length], key, value)) is not None:
        index = found[1]
        array[index : length - 1] = array[index + 1 : length]
        length -= 1
    return length


def _merge_items(
    array: list[Any],
    length: int,
    patch: list[Any],
    key: str,
    node: Node | None,
    merge_map: MergeMap,
) -> list[Any]:
    """mergeSliceWithoutSpecialElements: merge items with the same key, append the rest."""
    for item in patch:
        if key not in item:
            raise no_merge_key(item, key)
        found = find_by_key(array[:length], key, item[key])
        if found is not None:
            array[found[1]] = merge_map(found[0], item, node)
        elif length < len(array):  # the slot a deletion freed: written in place
            array[length] = item
            length += 1
        else:
            array = [*array[:length], item]
            length += 1
    return array[:length]


def partition(items: list[Any], by: list[Any], key: str) -> tuple[list[Any], list[Any]]:
    """partition{Primitives,Maps}ByPresentInList: (items present in `by`, the others)."""
    present: list[Any] = []
    others: list[Any] = []
    if not key:
        wanted = {hash_key(v) for v in by}
        for item in items:
            (present if hash_key(item) in wanted else others).append(item)
        return present, others
    for item in items:
        if not isinstance(item, dict):
            raise bad_arg_type(MAP, item)
        if key not in item:
            raise no_merge_key(item, key)
        (present if find_by_key(by, key, item[key]) is not None else others).append(item)
    return present, others


def _index(items: list[Any], value: Any, key: str, kind: str) -> int:
    """index(): where `value` is in `items` (by merge key for maps), -1 when absent."""
    if kind == MAP:
        wanted = value.get(key) if isinstance(value, dict) else None
        for position, item in enumerate(items):
            if go_eq(wanted, item.get(key) if isinstance(item, dict) else None):
                return position
        return -1
    for position, item in enumerate(items):
        if go_eq(value, item):
            return position
    return -1


def _validate_keys(key: str, *lists: list[Any]) -> None:
    for items in lists:
        for item in items:
            if not isinstance(item, dict):
                raise bad_arg_type(MAP, item)
            if key not in item:
                raise no_merge_key(item, key)


def _normalize_slice_order(items: list[Any], order: list[Any], key: str, kind: str) -> list[Any]:
    """normalizeSliceOrder: sort by position in `order`, `$patch: delete` items last."""
    doomed: list[Any] = []
    if kind == MAP:
        _validate_keys(key, items, order)
        kept = [i for i in items if not go_eq(i.get(DIRECTIVE), "delete")]
        doomed = [i for i in items if go_eq(i.get(DIRECTIVE), "delete")]
        items = kept
    decorated = [(_index(order, item, key, kind), item) for item in items]

    def less(left: tuple[int, Any], right: tuple[int, Any]) -> bool:
        return left[0] < right[0] if left[0] >= 0 and right[0] >= 0 else True

    slice_stable(decorated, less)
    return [item for _, item in decorated] + doomed


def normalize_element_order(
    patch: list[Any],
    server_only: list[Any],
    patch_order: list[Any],
    server_order: list[Any],
    key: str,
    kind: str,
) -> list[Any]:
    """normalizeElementOrder: patch items in patch order, interleaved with the server's."""
    patch = _normalize_slice_order(patch, patch_order, key, kind)
    server_only = _normalize_slice_order(server_only, server_order, key, kind)
    return _merge_sorted(server_only, patch, server_order, key, kind)


def _merge_sorted(
    left: list[Any], right: list[Any], order: list[Any], key: str, kind: str
) -> list[Any]:
    """mergeSortedSlice: take from `left` only when both are in `order` and left is first."""
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if i >= len(left):
            out.append(right[j])
            j += 1
        elif j >= len(right):
            out.append(left[i])
            i += 1
        else:
            li = _index(order, left[i], key, kind)
            ri = _index(order, right[j], key, kind)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out
