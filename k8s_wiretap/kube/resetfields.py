"""The fields a write through a resource or subresource resets (its strategy's GetResetFields).

From 1.22 on, a kind with a status subresource keeps writes of the main resource away from
`status` and writes of `/status` away from `spec` (and from `metadata`, or parts of it: each
kind says). The API server's field manager leaves these fields out of what a server-side
apply owns and of what it conflicts on, and the strategy restores them from the stored
object. `reset_fields(release, api_version, kind, subresource)` gives them as paths of field
names, from the newest `data/reset-fields-MINOR.json` (scripts/generate_reset_fields.py,
from the default release's registry strategies; releases from 1.22 on are read with it
too); none before 1.22.

A custom resource (a kind without Go types, kube/schema) resets what its definition's
status subresource makes it reset (apiextensions-apiserver pkg/registry/customresource
strategy.go and status_strategy.go GetResetFields): `status` for the resource itself,
`metadata` and `spec` for `/status`; without the subresource, nothing. That it has one is
known when the write goes through `/status`, or when the `live` object's managedFields
record a write through it; otherwise the resource itself is taken to have none.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from k8s_wiretap.kube import datafiles, schema
from k8s_wiretap.kube.release import Release, ReleaseLike

__all__ = ["RESET_DATA", "reset_fields"]

RESET_DATA = datafiles.newest("reset-fields", ".json")
FIRST = Release(1, 22)  # the release that introduced reset fields

Paths = tuple[tuple[str, ...], ...]


@cache
def _table() -> dict[tuple[str, str, str], Paths]:
    table: dict[tuple[str, str, str], Paths] = {}
    for row in datafiles.load(RESET_DATA)["resets"]:
        key = (row["group_version"], row["kind"], row["subresource"])
        table[key] = table.get(key, ()) + tuple(tuple(path) for path in row["reset"])
    return table


def reset_fields(
    release: ReleaseLike, api_version: str, kind: str, subresource: str, live: Any = None
) -> Paths:
    """The reset paths (`(("status",),)`) of a write of `kind` through `subresource` ("" for
    the resource itself) on `release`'s API server ("v1.30.2"; None: 1.20, none); `live`:
    the object written to, which may show that a custom resource has a status
    subresource."""
    server = Release.of(release)
    if server is None or server < FIRST:
        return ()
    if schema.lookup_kind(api_version, kind, release) is None:
        return _custom(subresource, live)
    return _table().get((api_version, kind, subresource), ())


def _custom(subresource: str, live: Any) -> Paths:
    if subresource == "status":
        return (("metadata",), ("spec",))
    if subresource == "" and _written_through_status(live):
        return (("status",),)
    return ()


def _written_through_status(live: Any) -> bool:
    metadata = live.get("metadata") if isinstance(live, dict) else None
    entries = metadata.get("managedFields") if isinstance(metadata, dict) else None
    if not isinstance(entries, list):
        return False
    return any(isinstance(e, dict) and e.get("subresource") == "status" for e in entries)
