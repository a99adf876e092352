"""Server-side apply (`application/apply-patch+yaml`) as the Kubernetes API server does it.

`apply_config(live, config, manager, node)` follows the API server's field manager chain
(fieldmanager.go, structuredmerge.go, stripmeta.go, managedfieldsupdater.go,
lastappliedupdater.go) around structured-merge-diff's `Updater.Apply` (v4.0.2 of 1.20, with
what later releases changed where a replay of the default release's lab showed it:
subresource managers, reset fields, the merged lists' order):

1. the live object's `metadata.managedFields` are decoded into one field set per manager
   (a manager is its name, operation, for updates its apiVersion, and from 1.22 the
   subresource it wrote through: `kubectl scale` owns `.spec.replicas` as "kubectl" with
   subresource "scale", which a conflict names);
2. the configuration is validated and merged into the live object: structs and granular maps
   field by field, list-type `map` lists by their keys, `set` lists by value, atomic lists
   and maps replaced whole (see typed.py for where these come from);
3. the manager now owns the configuration's fields; fields it owned before and no longer
   applies are removed, unless another manager owns them too (prune, with SMD's "add back
   owned" and "add back dangling" passes);
4. fields that changed and that other managers own are conflicts: without `force` a
   `ConflictError` (409, the server's message), with `force` they move to this manager;
   fields the change removed are taken from every other manager;
5. `apiVersion`, `kind` and the server-maintained metadata are stripped from the new set,
   the entry's time is set (to `now`) when anything changed, and `metadata.managedFields` is
   written back sorted as the server sorts it;
6. for manager "kubectl", a `kubectl.kubernetes.io/last-applied-configuration` annotation
   present on the object is rewritten from the configuration.

From 1.21 (SMD v4.0.3) the prune of step 3 makes each struct field on a path a member of
the sets (typed.ensure_named_fields): a struct emptied of what the manager owned goes whole,
with what defaulting put there (`strategy.rollingUpdate` when the manager that set `maxSurge`
switches to `type: Recreate`), and a null or empty member is a field of its own (an apply of
`strategy: null` owns `strategy`). From 1.22 the strategy's reset fields (kube/resetfields.py:
`status` for the resource itself, `spec` for `/status`, ...) are neither owned by the apply
nor conflicts.

A changed object then goes, as structuredmerge.go sends it, through the kind's Go type
(roundtrip.py: omitempty zero values such as `paused: false` are left out, though owned) and
its defaulting (defaulting.py, kube/data/defaults-MINOR.yaml: a field the prune removed and
the server defaults comes back, `progressDeadlineSeconds: 600`; a custom resource from its
schema's defaults); kinds the defaulting table does not have are not defaulted.

Not covered: conversion of field sets owned at another apiVersion (they are used as they
are), unions, the cap of ten update managers, and the upgrade path that lets `kubectl` take
over fields a client-side apply owned without a conflict (lastappliedmanager.go).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from k8s_wiretap.kube.fields import APPLY_UNTRACKED_METADATA, LAST_APPLIED
from k8s_wiretap.kube.release import Release, ReleaseLike
from k8s_wiretap.patch.defaulting import apply_defaults
from k8s_wiretap.patch.errors import ConflictError, PatchError
from k8s_wiretap.patch.fieldpath import FieldSet, path_text
from k8s_wiretap.patch.gosemantics import copy_json, go_json
from k8s_wiretap.patch.meta import DEFAULT_RELEASE, Node
from k8s_wiretap.patch.roundtrip import through_go_types, zero_object
from k8s_wiretap.patch.smd_schema import ABSENT, DEDUCED, TypeRef, errors_text, validate
from k8s_wiretap.patch.typed import (
    FieldChanges,
    compare_fields,
    ensure_named_fields,
    merge,
    remove_items,
    to_field_set,
)

__all__ = ["ManagerEntry", "apply_config", "decode_managed_fields"]

STRIPPED = FieldSet.of(
    (("f", "apiVersion"),),
    (("f", "kind"),),
    (("f", "metadata"),),
    *((("f", "metadata"), ("f", name)) for name in APPLY_UNTRACKED_METADATA),
)

# (manager, operation, apiVersion of an Update, subresource)
ManagerId = tuple[str, str, str, str]


@dataclass
class ManagerEntry:
    """One manager's field set (fieldpath.VersionedSet) and the time of its last change."""

    fields: FieldSet
    api_version: str
    time: str | None = None


def _identifier(manager: ManagerId) -> str:
    """BuildManagerIdentifier: the JSON the server keys managers by (and sorts conflicts by)."""
    name, operation, api_version, subresource = manager
    entry = {"manager": name, "operation": operation}
    if api_version:
        entry["apiVersion"] = api_version
    if subresource:
        entry["subresource"] = subresource
    return json.dumps(entry, separators=(",", ":"))


def decode_managed_fields(entries: Any) -> dict[ManagerId, ManagerEntry]:
    """metadata.managedFields → manager → entry; PatchError when they can not be decoded."""
    managers: dict[ManagerId, ManagerEntry] = {}
    for index, entry in enumerate(entries or []):
        if not isinstance(entry, dict):
            raise PatchError(f"failed to decode managed fields: entry {index} is not an object")
        kind = entry.get("fieldsType", "")
        if kind != "FieldsV1":
            problem = f"invalid fieldsType {kind!r}" if kind else "missing fieldsType"
            raise PatchError(f"failed to decode managed fields: {problem} in entry {index}")
        operation = str(entry.get("operation", ""))
        version = str(entry.get("apiVersion", ""))
        name, subresource = str(entry.get("manager", "")), str(entry.get("subresource", ""))
        key = (name, operation, "" if operation == "Apply" else version, subresource)
        try:
            fields = FieldSet.from_fields_v1(entry.get("fieldsV1") or {})
        except (ValueError, TypeError) as error:
            raise PatchError(f"failed to decode managed fields: {error}") from error
        managers[key] = ManagerEntry(fields, version, entry.get("time"))
    return managers


def _encode(managers: dict[ManagerId, ManagerEntry]) -> list[dict[str, Any]]:
    entries = []
    for (name, operation, _, subresource), entry in managers.items():
        out: dict[str, Any] = {"manager": name, "operation": operation}
        out["apiVersion"] = entry.api_version
        if entry.time is not None:
            out["time"] = entry.time
        out["fieldsType"] = "FieldsV1"
        out["fieldsV1"] = entry.fields.to_fields_v1()
        if subresource:
            out["subresource"] = subresource
        entries.append(out)

    def order(entry: dict[str, Any]) -> tuple[str, int, str, str, str]:
        seconds = _seconds(entry.get("time"))
        keys = (entry["manager"], entry["apiVersion"], entry.get("subresource", ""))
        return (entry["operation"], seconds, *keys)

    return sorted(entries, key=order)


def _seconds(time: Any) -> int:
    if not isinstance(time, str):
        return 0
    try:
        return int(datetime.fromisoformat(time.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return 0


def _check_config(live: dict[str, Any], config: Any) -> None:
    if not isinstance(config, dict):
        raise PatchError("error decoding YAML: the configuration is not an object", 400)
    version = config.get("apiVersion", "")
    expected = live.get("apiVersion") or version  # an apply that creates: a new, empty object
    if version != expected:
        raise PatchError(
            "Incorrect version specified in apply patch. "
            f"Specified patch version: {version}, expected: {expected}",
            400,
        )
    metadata = config.get("metadata")
    if isinstance(metadata, dict) and metadata.get("managedFields") is not None:
        raise PatchError("metadata.managedFields must be nil", 400)


def _annotations(obj: Any) -> dict[str, Any] | None:
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    return annotations if isinstance(annotations, dict) else None


def _typed(value: Any, t: TypeRef, what: str) -> None:
    errors = validate(value, t)
    if errors:
        raise PatchError(f"failed to create typed {what} object: {errors_text(errors)}")


def apply_config(
    live: dict[str, Any],
    config: dict[str, Any],
    manager: str,
    node: Node | None,
    *,
    force: bool = False,
    now: str | None = None,
    subresource: str = "",
    reset: FieldSet | None = None,
    ordered: bool = False,
    release: ReleaseLike = None,
) -> dict[str, Any]:
    """`live` after the server-side apply of `config` by `manager` through `subresource`
    ("" or "status"), whose strategy resets the fields `reset`; `ordered`: merged lists in
    the configuration's order (1.23+, see typed.merge); `release`: the API server's ("v1.30.2",
    "1.20"), whose Go types and defaulting the result goes through (None: neither; the module
    docstring says the rest)."""
    reset = reset or FieldSet()
    metadata = live.get("metadata")
    managed = metadata.get("managedFields") if isinstance(metadata, dict) else None
    managers = decode_managed_fields(managed)
    _check_config(live, config)
    if not live.get("apiVersion"):
        live = {**live, "apiVersion": config["apiVersion"], "kind": config.get("kind")}
    t: TypeRef = node if node is not None else DEDUCED
    live_obj = copy_json(live)
    if isinstance(live_obj.get("metadata"), dict):
        live_obj["metadata"].pop("managedFields", None)
    _typed(config, t, "patch")
    _typed(live_obj, t, "live")
    stamp = now or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if not managers:
        managers = _before_first_apply(live_obj, t, stamp, reset, release)
    me: ManagerId = (manager or "unknown", "Apply", "", subresource)
    former = {k: v.fields for k, v in managers.items()}
    smd_403 = Release.of(release, DEFAULT_RELEASE) >= Release(1, 21)  # SMD v4.0.3+
    applied = copy_json(config)
    merged, same = _apply(live_obj, applied, t, managers, me, force, reset, ordered, smd_403)
    result = live_obj if same or not isinstance(merged, dict) else merged
    if result is merged and release is not None:
        through_go_types(result, release)
        apply_defaults(result, release, node=node)
    _strip(managers, me)
    changed = {k: v.fields for k, v in managers.items()} != former
    if me in managers and (not same or changed):
        managers[me].time = stamp
    annotations = _annotations(result)
    if me[0] == "kubectl" and annotations is not None and LAST_APPLIED in annotations:
        annotations[LAST_APPLIED] = _last_applied(config)
    return _with_managed_fields(result, managers)


def _apply(
    live: dict[str, Any],
    config: dict[str, Any],
    t: TypeRef,
    managers: dict[ManagerId, ManagerEntry],
    me: ManagerId,
    force: bool,
    reset: FieldSet,
    ordered: bool,
    smd_403: bool,
) -> tuple[Any, bool]:
    """merge.Updater.Apply: (the new object, whether it is the same as the live one). The
    reset fields are filtered out of the applied set and of the comparison (IgnoreFilter)."""
    merged = merge(live, config, t, ordered)
    last = managers.get(me)
    version = str(config.get("apiVersion", ""))
    fields = to_field_set(config, t, smd_403).recursive_difference(reset)
    managers[me] = ManagerEntry(fields, version, last.time if last else None)
    if last is not None and not last.fields.empty():
        merged = _prune(merged, t, managers, last.fields, smd_403)
    comparison = _update(live, merged, t, managers, me, force, reset)
    return (ABSENT if merged is ABSENT else merged), comparison.is_same()


def _prune(
    merged: Any,
    t: TypeRef,
    managers: dict[ManagerId, ManagerEntry],
    last: FieldSet,
    smd_403: bool,
) -> Any:
    """Remove what the manager applied last time (`last`) and no longer applies, unless
    someone owns it (Updater.prune, addBackOwnedItems, addBackDanglingItems); `smd_403` (SMD
    v4.0.3+, 1.21+): every set with its struct fields as members (a struct emptied of what
    the manager owned goes), and null or empty members as leaves."""

    def sets(value: FieldSet) -> FieldSet:
        return ensure_named_fields(value, t) if smd_403 else value

    pruned = remove_items(merged, sets(last), t)
    managed = FieldSet()
    for entry in managers.values():
        managed = managed.union(entry.fields)
    merged_set = sets(to_field_set(merged, t, smd_403))
    kept = sets(to_field_set(pruned, t, smd_403)).union(sets(managed))
    pruned = remove_items(merged, merged_set.difference(kept), t)
    pruned_set = sets(to_field_set(pruned, t, smd_403))
    dangling = merged_set.difference(pruned_set).intersection(sets(last))
    return remove_items(merged, dangling, t)


def _update(
    live: Any,
    new: Any,
    t: TypeRef,
    managers: dict[ManagerId, ManagerEntry],
    me: ManagerId,
    force: bool,
    reset: FieldSet,
) -> FieldChanges:
    """Updater.update: conflicts with other managers, and their removed fields dropped
    (what the strategy resets is neither)."""
    comparison = compare_fields(live, new, t)
    changed = comparison.modified.union(comparison.added).recursive_difference(reset)
    removed = comparison.removed.recursive_difference(reset)
    conflicts: dict[ManagerId, FieldSet] = {}
    for manager, entry in managers.items():
        if manager != me:
            overlap = entry.fields.intersection(changed)
            if not overlap.empty():
                conflicts[manager] = overlap
    if conflicts and not force:
        raise _conflict_error(conflicts)
    for manager, entry in managers.items():
        if manager in conflicts:
            entry.fields = entry.fields.difference(conflicts[manager])
        if manager != me and not removed.empty():
            entry.fields = entry.fields.difference(removed)
    for manager in [m for m, e in managers.items() if e.fields.empty()]:
        del managers[manager]
    return comparison


def _printed(manager: ManagerId) -> str:
    """printManager: `"kubectl" with subresource "scale" using apps/v1`."""
    name, operation, version, subresource = manager
    quoted = json.dumps(name)
    if subresource:
        quoted += f" with subresource {json.dumps(subresource)}"
    return f"{quoted} using {version}" if operation == "Update" else quoted


def _conflict_error(conflicts: dict[ManagerId, FieldSet]) -> ConflictError:
    pairs = [(m, p) for m, fields in conflicts.items() for p in fields.paths()]
    listed = [(_printed(m), path_text(p)) for m, p in pairs]
    if len(pairs) == 1:
        message = f"Apply failed with 1 conflict: conflict with {listed[0][0]}: {listed[0][1]}"
        return ConflictError(message, listed)
    lines = []
    for manager in sorted(conflicts, key=_identifier):
        lines.append(f"conflicts with {_printed(manager)}:")
        lines += [f"- {path_text(p)}" for p in conflicts[manager].paths()]
    message = f"Apply failed with {len(pairs)} conflicts: " + "\n".join(lines)
    return ConflictError(message, listed)


def _strip(managers: dict[ManagerId, ManagerEntry], me: ManagerId) -> None:
    entry = managers.get(me)
    if entry is not None:
        entry.fields = entry.fields.difference(STRIPPED)
        if entry.fields.empty():
            del managers[me]


def _before_first_apply(
    live: dict[str, Any], t: TypeRef, stamp: str, reset: FieldSet, release: ReleaseLike
) -> dict[ManagerId, ManagerEntry]:
    """skipNonAppliedManager: an object nobody manages is first owned by an update from the
    kind's Go zero value (roundtrip.zero_object; without a release: an object with only
    apiVersion, kind and metadata) to it, of everything but the reset fields."""
    if release is not None:
        empty = zero_object(str(live.get("apiVersion")), str(live.get("kind")), release)
    else:
        empty = {k: live[k] for k in ("apiVersion", "kind") if k in live}
        empty["metadata"] = {"creationTimestamp": None}
    comparison = compare_fields(empty, live, t)
    fields = comparison.modified.union(comparison.added).difference(comparison.removed)
    fields = fields.difference(STRIPPED).recursive_difference(reset)
    if fields.empty():
        return {}
    version = str(live.get("apiVersion", ""))
    first = ("before-first-apply", "Update", version, "")
    return {first: ManagerEntry(fields, version, stamp)}


def _last_applied(config: dict[str, Any]) -> str:
    """buildLastApplied: the configuration without the annotation, as Go encodes it."""
    copy = copy_json(config)
    metadata = copy.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("annotations"), dict):
        metadata["annotations"].pop(LAST_APPLIED, None)
    return go_json(copy) + "\n"


def _with_managed_fields(
    result: dict[str, Any], managers: dict[ManagerId, ManagerEntry]
) -> dict[str, Any]:
    metadata = result.setdefault("metadata", {})
    if not isinstance(metadata, dict):
        return result
    entries = _encode({k: v for k, v in managers.items() if not v.fields.empty()})
    if entries:
        metadata["managedFields"] = entries
    else:
        metadata.pop("managedFields", None)
    return result
