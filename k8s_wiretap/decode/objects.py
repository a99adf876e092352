"""Which object an exchange or event is about, and what it looked like when it was seen.

Every observation of an object in a recording — a GET or LIST response, a watch event, a
write's response — is kept in time order per object (group, resource, namespace, name), so
that a PATCH can be replayed on the object as it was just before. The scale subresource is
derived from its parent's observations the way the API server derives it (replicas,
selector, status), since `kubectl scale` PATCHes a Scale it never fetched.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SCALABLE", "History", "ObjectKey", "Observation", "resource_version"]

ObjectKey = tuple[str, str, str, str]  # group, resource, namespace, name

# Resources whose scale subresource the API server derives from .spec.replicas and
# .status.replicas (pkg/registry/apps/*/storage, pkg/registry/core/replicationcontroller).
SCALABLE = frozenset(
    {
        ("apps", "deployments"),
        ("apps", "replicasets"),
        ("apps", "statefulsets"),
        ("", "replicationcontrollers"),
        ("extensions", "deployments"),
        ("extensions", "replicasets"),
    }
)


def resource_version(obj: Any) -> int | None:
    """The numeric resourceVersion of an object (etcd's revision), or None."""
    if not isinstance(obj, dict):
        return None
    value = (obj.get("metadata") or {}).get("resourceVersion")
    try:
        return int(str(value))
    except ValueError:
        return None


@dataclass(frozen=True)
class Observation:
    time: float
    object: dict[str, Any]
    source: str  # "get", "list", "watch", "create", "update", "patch", ...
    exchange: str

    @property
    def resource_version(self) -> int | None:
        return resource_version(self.object)


@dataclass
class History:
    """Observations per object, in time order."""

    _seen: dict[ObjectKey, list[Observation]] = field(default_factory=lambda: defaultdict(list))

    def add(self, key: ObjectKey, observation: Observation) -> None:
        timeline = self._seen[key]
        times = [o.time for o in timeline]
        timeline.insert(bisect.bisect_right(times, observation.time), observation)

    def objects(self) -> list[ObjectKey]:
        return sorted(self._seen)

    def timeline(self, key: ObjectKey) -> list[Observation]:
        return self._seen.get(key, [])

    def before(self, key: ObjectKey, time: float) -> Observation | None:
        """The latest observation strictly before `time`."""
        timeline = self.timeline(key)
        index = bisect.bisect_left([o.time for o in timeline], time)
        return timeline[index - 1] if index else None

    def stale(self, key: ObjectKey, before: Observation, after_version: int | None) -> bool:
        """True if some observation proves a write happened between `before` and the write
        that produced `after_version` (so `before` is not what the server patched)."""
        seen = before.resource_version
        if seen is None or after_version is None:
            return False
        if seen > after_version:
            return True
        return any(seen < (o.resource_version or 0) < after_version for o in self.timeline(key))


def scale_of(parent: dict[str, Any], api_version: str = "autoscaling/v1") -> dict[str, Any]:
    """The Scale the API server derives from a scalable object."""
    meta = parent.get("metadata") or {}
    spec, status = parent.get("spec") or {}, parent.get("status") or {}
    scale: dict[str, Any] = {
        "kind": "Scale",
        "apiVersion": api_version,
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": spec.get("replicas", 1)},
        "status": {"replicas": status.get("replicas", 0)},
    }
    selector = (spec.get("selector") or {}).get("matchLabels")
    if isinstance(selector, dict) and selector:
        scale["status"]["selector"] = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    return scale
