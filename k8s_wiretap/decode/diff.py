"""What changed between two JSON documents, as a list of `{path, op, from, to}`.

Paths are JSON pointers. Lists of equal length are compared item by item; a list that
changed length is reported as replaced whole (the reader sees both versions).
"""

from __future__ import annotations

from typing import Any

__all__ = ["diff", "pointer"]

_MISSING = object()


def pointer(parts: list[str | int]) -> str:
    return "".join(["/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts])


def diff(before: Any, after: Any) -> list[dict[str, Any]]:
    changes: list[dict[str, Any]] = []
    if before != after:
        _walk(before, after, [], changes)
    return changes


def _walk(before: Any, after: Any, path: list[str | int], out: list[dict[str, Any]]) -> None:
    """The changes between `before` and `after`, which differ; equal members are skipped
    before recursing (most of an object is unchanged)."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key, old in before.items():
            new = after.get(key, _MISSING)
            if old != new:
                _walk(old, new, [*path, key], out)
        for key, new in after.items():
            if key not in before:
                _walk(_MISSING, new, [*path, key], out)
    elif isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for index, (old, new) in enumerate(zip(before, after, strict=True)):
            if old != new:
                _walk(old, new, [*path, index], out)
    elif before is _MISSING:
        out.append({"path": pointer(path), "op": "add", "to": after})
    elif after is _MISSING:
        out.append({"path": pointer(path), "op": "remove", "from": before})
    else:
        out.append({"path": pointer(path), "op": "replace", "from": before, "to": after})
