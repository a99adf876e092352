"""JSON merge patch (RFC 7386), applied as the API server of a given release applies it.

The server runs evanphx/json-patch's `MergePatch` (v4.9.0 in 1.20-1.21, v4.11.0+ from 1.22,
v4.13.0 in the default release) on the JSON form of the object. It follows RFC 7386 for
objects (a null deletes the member, an object merges, anything else replaces) with two
differences kept here:

- a value stored where there was nothing, or where there was no object, has its nulls pruned
  recursively: null members of objects, and up to 1.21 null items of arrays too (`{"args":
  ["a", null]}` stores `["a"]` there, `["a", null]` from 1.22, which Go decodes to `["a",
  ""]`), while a non-object value replacing an object is stored as sent;
- a patch that is an array replaces the whole document with the array (nulls pruned); the
  server then fails to decode it. A patch that is null or a scalar is "Invalid JSON Patch".

Custom resources accept this patch type (and JSON patch), not strategic merge patch.
"""

from __future__ import annotations

from typing import Any

from k8s_wiretap.kube.release import Release, ReleaseLike
from k8s_wiretap.patch.errors import PatchError
from k8s_wiretap.patch.gosemantics import copy_json, go_json
from k8s_wiretap.patch.meta import DEFAULT_RELEASE

__all__ = ["apply_merge", "prune_nulls"]


def apply_merge(
    document: dict[str, Any], patch: Any, release: ReleaseLike = None
) -> dict[str, Any]:
    """`document` with the merge `patch` applied as `release`'s server does (None: 1.20;
    inputs are not modified)."""
    keep = Release.of(release, DEFAULT_RELEASE) >= Release(1, 22)  # json-patch v4.11.0 keeps nulls
    if isinstance(patch, list):
        pruned = prune_nulls(copy_json(patch), keep)
        message = f'"" is invalid: patch: Invalid value: "{go_json(pruned)}": '
        raise PatchError(message + "cannot restore struct from: slice", 422)
    if not isinstance(patch, dict):
        raise PatchError("Invalid JSON Patch")
    result: dict[str, Any] = copy_json(document)
    _merge_docs(result, copy_json(patch), keep)
    return result


def _merge_docs(document: dict[str, Any], patch: dict[str, Any], keep: bool) -> None:
    for key, value in patch.items():
        if value is None:
            document.pop(key, None)
        elif document.get(key) is None:
            document[key] = prune_nulls(value, keep)
        else:
            document[key] = _merge(document[key], value, keep)


def _merge(current: Any, patch: Any, keep: bool) -> Any:
    if not isinstance(current, dict):
        return prune_nulls(patch, keep)
    if not isinstance(patch, dict):
        return patch
    _merge_docs(current, patch, keep)
    return current


def prune_nulls(value: Any, keep_array_nulls: bool = False) -> Any:
    """Drop null members of objects and (unless `keep_array_nulls`) null items of arrays,
    recursively (in place)."""
    if isinstance(value, dict):
        for key in [k for k, v in value.items() if v is None]:
            del value[key]
        for item in value.values():
            prune_nulls(item, keep_array_nulls)
    elif isinstance(value, list):
        kept = value if keep_array_nulls else [item for item in value if item is not None]
        value[:] = [prune_nulls(item, keep_array_nulls) for item in kept]
    return value
