"""Which kind a resource holds (`pods` → `Pod`), for events that only carry partial metadata
(`kubectl get -w` watches Tables whose rows hold PartialObjectMetadata).

The recording's own discovery documents (APIResourceList) say it exactly, custom resources
included; otherwise the built-in kinds of Kubernetes 1.20 are pluralized the way the API
server's RESTMapper guesses (apimachinery pkg/api/meta/restmapper.go,
UnsafeGuessKindToResource).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from k8s_wiretap.kube.schema import kinds

__all__ = ["discovered_kinds", "guess_resource", "kind_of"]

UNPLURALIZED_SUFFIXES = ("endpoints",)


def guess_resource(kind: str) -> str:
    singular = kind.lower()
    if singular.endswith(UNPLURALIZED_SUFFIXES):
        return singular
    if singular.endswith("s"):
        return singular + "es"
    if singular.endswith("y"):
        return singular[:-1] + "ies"
    return singular + "s"


@cache
def _builtin() -> dict[tuple[str, str], str]:
    table: dict[tuple[str, str], str] = {}
    for api_version, by_kind in kinds().items():
        group = api_version.rpartition("/")[0]
        for kind in by_kind:
            if not kind.endswith(("List", "Options")):
                table.setdefault((group, guess_resource(kind)), kind)
    return table


def discovered_kinds(resource_list: Any) -> dict[tuple[str, str], str]:
    """(group, resource) → kind from one APIResourceList."""
    if not isinstance(resource_list, dict) or resource_list.get("kind") != "APIResourceList":
        return {}
    group = str(resource_list.get("groupVersion", "")).rpartition("/")[0]
    return {
        (group, str(r["name"])): str(r["kind"])
        for r in resource_list.get("resources") or []
        if isinstance(r, dict) and "/" not in str(r.get("name", "/")) and r.get("kind")
    }


def kind_of(
    group: str, resource: str, discovered: dict[tuple[str, str], str] | None = None
) -> str | None:
    return (discovered or {}).get((group, resource)) or _builtin().get((group, resource))
