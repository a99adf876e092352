"""JSON merge patch (RFC 7386), applied as the Kubernetes 1.20 API server applies it.

The server runs evanphx/json-patch v4.9.0's `MergePatch` on the JSON form of the object. It
follows RFC 7386 for objects (a null deletes the member, an object merges, anything else
replaces) with two differences kept here:

- a value stored where there was nothing, or where there was no object, has its nulls pruned
  recursively, including null items of arrays (`{"args": ["a", null]}` stores `["a"]`), while a
  non-object value replacing an object is stored as sent;
- a patch that is an array replaces the whole document with the array (nulls pruned); the
  server then fails to decode it. A patch that is null or a scalar is "Invalid JSON Patch".

Custom resources accept this patch type (and JSON patch), not strategic merge patch.
"""

from __future__ import annotations

from typing import Any

from k8s_wiretap.patch.errors import PatchError
from k8s_wiretap.patch.gosemantics import copy_json, go_json

__all__ = ["apply_merge", "prune_nulls"]


def apply_merge(document: dict[str, Any], patch: Any) -> dict[str, Any]:
    """`document` with the merge `patch` applied (inputs are not modified)."""
    if isinstance(patch, list):
        pruned = prune_nulls(copy_json(patch))
        message = f'"" is invalid: patch: Invalid value: "{go_json(pruned)}": '
        raise PatchError(message + "cannot restore struct from: slice", 422)
    if not isinstance(patch, dict):
        raise PatchError("Invalid JSON Patch")
    result: dict[str, Any] = copy_json(document)
    _merge_docs(result, copy_json(patch))
    return result


def _merge_docs(document: dict[str, Any], patch: dict[str, Any]) -> None:
    for key, value in patch.items():
        if value is None:
            document.pop(key, None)
        elif document.get(key) is None:
            document[key] = prune_nulls(value)
        else:
            document[key] = _merge(document[key], value)


def _merge(current: Any, patch: Any) -> Any:
    if not isinstance(current, dict):
        return prune_nulls(patch)
    if not isinstance(patch, dict):
        return patch
    _merge_docs(current, patch)
    return current


def prune_nulls(value: Any) -> Any:
    """Drop null members of objects and null items of arrays, recursively (in place)."""
    if isinstance(value, dict):
        for key in [k for k, v in value.items() if v is None]:
            del value[key]
        for item in value.values():
            prune_nulls(item)
    elif isinstance(value, list):
        value[:] = [prune_nulls(item) for item in value if item is not None]
    return value
