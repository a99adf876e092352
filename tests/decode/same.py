"""Compare decoded objects with the API server's JSON: equal values and equal key order."""

from __future__ import annotations

from typing import Any


def difference(got: Any, want: Any, path: str = "$") -> str | None:
    """Where `got` first differs from `want` (values, types, or the order of keys), or None."""
    if isinstance(got, dict) and isinstance(want, dict):
        if list(got) != list(want):
            return f"{path}: keys {list(got)} != {list(want)}"
        for key in got:
            found = difference(got[key], want[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(got, list) and isinstance(want, list):
        if len(got) != len(want):
            return f"{path}: {len(got)} items != {len(want)}"
        for index, (mine, theirs) in enumerate(zip(got, want, strict=True)):
            found = difference(mine, theirs, f"{path}[{index}]")
            if found:
                return found
        return None
    if isinstance(got, bool) != isinstance(want, bool) or got != want:
        return f"{path}: {got!r} != {want!r}"
    return None


def assert_same(got: Any, want: Any) -> None:
    found = difference(got, want)
    assert found is None, found


def as_served(document: dict[str, Any], api_version: str, kind: str) -> dict[str, Any]:
    """Go's plain JSON of an object → what the API server's handlers send for it.

    The decoder renders the latter; Go fixtures made without a server have the former:
    - an empty list's items are [] (handlers set nil items to an empty slice), except in a
      PartialObjectMetadataList, which handlers build afterwards by appending;
    - a PartialObjectMetadataList's items carry their kind and apiVersion (set by handlers);
    - apps StatefulSet volumeClaimTemplates carry kind and apiVersion (set by conversion).
    """
    items = document.get("items")
    partial_list = kind == "PartialObjectMetadataList"
    if kind.endswith("List") and "items" in document and items is None and not partial_list:
        document["items"] = []
    if kind == "PartialObjectMetadataList" and items:
        type_meta = {"kind": "PartialObjectMetadata", "apiVersion": api_version}
        document["items"] = [{**type_meta, **item} for item in items]
    spec = document.get("spec") or {}
    if (
        kind == "StatefulSet"
        and api_version.startswith("apps/")
        and spec.get("volumeClaimTemplates")
    ):
        type_meta = {"kind": "PersistentVolumeClaim", "apiVersion": "v1"}
        spec["volumeClaimTemplates"] = [{**type_meta, **t} for t in spec["volumeClaimTemplates"]]
    return document
