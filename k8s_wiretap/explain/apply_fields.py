"""The three-way `kubectl apply`, field by field: what your file changed, what it removed,
and what it left alone.

Client-side apply (kubectl's `apply` without `--server-side`) keeps the file it applied in
the `kubectl.kubernetes.io/last-applied-configuration` annotation and computes its patch from
three documents (staging/src/k8s.io/kubectl/pkg/cmd/apply/patcher.go,
`CreateThreeWayMergePatch(original, modified, current)`): the previous file (`original`,
the annotation on the live object), the new file (`modified`, which the patch carries as the
new annotation) and the live object (`current`). A field of the new file whose value differs
from the live one is set; a field of the previous file that is not in the new one is removed
(even if someone else changed it since); a field in neither file is not the file's
business and is left as it is — whoever set it (the object's managedFields say who).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from k8s_wiretap.kube.fields import LAST_APPLIED
from k8s_wiretap.kube.refs import metadata_of

__all__ = ["FieldChange", "apply_fields", "server_side_fields"]

SKIPPED = ("/status", "/metadata/managedFields", "/metadata/resourceVersion")
CHANGED = "changed by your file"
REMOVED = "removed because it left your file (it was in the last applied configuration)"


@dataclass(frozen=True, slots=True)
class FieldChange:
    path: str  # JSON pointer; list items with a `name` are `[name]`
    change: str  # "set", "removed" or "left alone"
    reason: str
    before: Any = None
    after: Any = None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "change": self.change,
            "reason": self.reason,
            "from": self.before,
            "to": self.after,
        }


def last_applied(obj: Any) -> dict[str, Any] | None:
    """The file a client-side apply stored on `obj` (None if there is none)."""
    if not isinstance(obj, dict):
        return None
    annotations = metadata_of(obj).get("annotations") or {}
    text = annotations.get(LAST_APPLIED) if isinstance(annotations, dict) else None
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def apply_fields(patch: Any, before: Any, after: Any) -> list[FieldChange] | None:
    """The field-by-field story of one client-side apply PATCH (None if it is not one)."""
    new_file = last_applied(patch)
    if new_file is None or not isinstance(before, dict):
        return None
    old_file = last_applied(before) or {}
    live, result = _leaves(before), _leaves(after)
    mine, theirs = _leaves(new_file), _leaves(old_file)
    owners = _owners(before)
    changes: list[FieldChange] = []
    for path, value in mine.items():
        if not _same(value, live.get(path, _ABSENT)):
            changes.append(FieldChange(path, "set", CHANGED, live.get(path), result.get(path)))
    for path, value in theirs.items():
        if path not in mine and not _covered(path, mine):
            changes.append(FieldChange(path, "removed", REMOVED, live.get(path, value), None))
    for path, value in live.items():
        if path in mine or path in theirs or _covered(path, mine) or path.startswith(SKIPPED):
            continue
        owner = _owner_of(path, owners)
        if owner is not None:
            reason = f"left alone: not in your file, set by {owner}"
            changes.append(FieldChange(path, "left alone", reason, value, result.get(path)))
    return changes


_ABSENT = object()


def _leaves(document: Any, prefix: str = "") -> dict[str, Any]:
    """Every scalar (and every list that is not keyed by name) at its path."""
    found: dict[str, Any] = {}
    if isinstance(document, dict):
        for key, value in document.items():
            if prefix == "/metadata/annotations" and key == LAST_APPLIED:
                continue
            found.update(_leaves(value, f"{prefix}/{_escape(str(key))}"))
    elif isinstance(document, list) and document and all(_named(i) for i in document):
        for item in document:
            found.update(_leaves(item, f"{prefix}[{item['name']}]"))
    elif not (isinstance(document, dict | list) and not document):
        found[prefix] = document
    return found


def _same(mine: Any, live: Any) -> bool:
    """Does the live value already say what the file says? Members only the live value has
    are the server's defaults (a port's `protocol: TCP`), not a difference."""
    if isinstance(mine, dict) and isinstance(live, dict):
        return all(_same(v, live.get(k, _ABSENT)) for k, v in mine.items())
    if isinstance(mine, list) and isinstance(live, list):
        return len(mine) == len(live) and all(map(_same, mine, live))
    return bool(mine == live)


def _named(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("name"), str)


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _covered(path: str, leaves: dict[str, Any]) -> bool:
    """A path inside a value the file sets whole (a list without names)."""
    return any(path.startswith(p + "/") or path.startswith(p + "[") for p in leaves)


def _owners(obj: dict[str, Any]) -> list[tuple[str, str]]:
    """(path prefix, manager) for every leaf the live object's managedFields list."""
    owners: list[tuple[str, str]] = []
    for entry in metadata_of(obj).get("managedFields") or []:
        if isinstance(entry, dict) and isinstance(entry.get("fieldsV1"), dict):
            manager = str(entry.get("manager", ""))
            for path in _field_paths(entry["fieldsV1"], ""):
                owners.append((path, manager))
    return owners


def _field_paths(fields: dict[str, Any], prefix: str) -> list[str]:
    """Paths of a fieldsV1 set: `f:name` members, `k:{"name":"web"}` keyed list items."""
    paths = []
    for key, inner in fields.items():
        if key.startswith("f:"):
            path = f"{prefix}/{_escape(key[2:])}"
        elif key.startswith("k:"):
            try:
                item = json.loads(key[2:])
            except ValueError:
                continue
            if not isinstance(item, dict) or "name" not in item:
                continue
            path = f"{prefix}[{item['name']}]"
        else:
            continue
        children = inner if isinstance(inner, dict) else {}
        paths += _field_paths(children, path) if any(k != "." for k in children) else [path]
    return paths


def _owner_of(path: str, owners: list[tuple[str, str]]) -> str | None:
    """The manager that owns `path`, unless it is kubectl's own client-side apply."""
    for owned, manager in owners:
        if (path == owned or path.startswith(owned + "/")) and not manager.startswith(
            ("kubectl-client-side-apply", "before-first-apply")
        ):
            return manager
    return None


def server_side_fields(
    config: Any, before: Any, after: Any, manager: str, *, forced: bool = False
) -> list[FieldChange] | None:
    """Server-side apply, field by field: what `manager`'s configuration set, took over from
    another manager, or gave up — or, refused with 409, which manager holds which field.

    The API server tracks who owns each field (`metadata.managedFields`,
    staging/src/k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager); an apply that
    changes a field another manager owns is a conflict unless forced, and then the field
    changes hands."""
    if isinstance(after, dict) and after.get("kind") == "Status":
        return _conflicts(after)
    if not isinstance(config, dict) or not isinstance(after, dict):
        return None
    was, now = _owners(before) if isinstance(before, dict) else [], _owners(after)
    old, new = _leaves(before or {}), _leaves(after)
    changes: list[FieldChange] = []
    for path, value in _leaves(config).items():
        if path in IDENTITY:
            continue
        others = [m for m in _managers(path, was) if m != manager]
        if others and manager in _managers(path, now):
            how = "forced" if forced else "shared"
            reason = f"taken over from {', '.join(others)} ({how}): {manager} owns it now"
            changes.append(FieldChange(path, "taken over", reason, old.get(path), new.get(path)))
        elif not _same(value, old.get(path, _ABSENT)):
            reason = f"set by your configuration: {manager} owns it"
            changes.append(FieldChange(path, "set", reason, old.get(path), new.get(path)))
    for path in old:
        if manager in _managers(path, was) and manager not in _managers(path, now):
            keepers = _managers(path, now)
            if keepers:
                reason = f"given up: no longer in your configuration, still {', '.join(keepers)}'s"
                changes.append(FieldChange(path, "released", reason, old[path], new.get(path)))
            else:
                reason = "removed: no longer in your configuration, and no one else owns it"
                changes.append(FieldChange(path, "removed", reason, old[path], new.get(path)))
    return changes


IDENTITY = frozenset({"/apiVersion", "/kind", "/metadata/name", "/metadata/namespace"})


def _conflicts(status: dict[str, Any]) -> list[FieldChange]:
    """A 409's causes: `conflict with "kubectl"` at `.data.colour`."""
    found = []
    for cause in (status.get("details") or {}).get("causes") or []:
        if not isinstance(cause, dict) or cause.get("reason") != "FieldManagerConflict":
            continue
        path = "/" + str(cause.get("field", "")).lstrip(".").replace(".", "/")
        holder = str(cause.get("message", "")).removeprefix("conflict with ").strip('"')
        reason = f"conflict: {holder} owns it (apply with force to take it over)"
        found.append(FieldChange(path, "conflict", reason))
    return found


def _managers(path: str, owners: list[tuple[str, str]]) -> list[str]:
    """Every manager that owns `path` (or a field that contains it)."""
    found: list[str] = []
    for owned, manager in owners:
        if (path == owned or path.startswith((owned + "/", owned + "["))) and manager not in found:
            found.append(manager)
    return found
