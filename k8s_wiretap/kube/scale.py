"""The scale subresource, derived the way the API server derives it.

pkg/registry/apps/deployment/storage (and replicaset, statefulset, replicationcontroller):
a Scale is the parent's name, namespace, uid, resourceVersion and creationTimestamp, its
`.spec.replicas` (1 when unset), `.status.replicas`, and its label selector as a string.
`kubectl scale` PATCHes a Scale it never fetched, so a replay starts from this.
"""

from __future__ import annotations

from typing import Any

__all__ = ["scale_of"]

SCALE_METADATA = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")


def scale_of(parent: dict[str, Any], api_version: str = "autoscaling/v1") -> dict[str, Any]:
    """The Scale the API server derives from a scalable object."""
    meta = parent.get("metadata") or {}
    spec, status = parent.get("spec") or {}, parent.get("status") or {}
    scale: dict[str, Any] = {
        "kind": "Scale",
        "apiVersion": api_version,
        "metadata": {k: meta[k] for k in SCALE_METADATA if k in meta},
        "spec": {"replicas": spec.get("replicas", 1)},
        "status": {"replicas": status.get("replicas", 0)},
    }
    selector = (spec.get("selector") or {}).get("matchLabels")
    if isinstance(selector, dict) and selector:
        scale["status"]["selector"] = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    return scale
