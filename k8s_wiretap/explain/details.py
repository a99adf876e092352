"""What a control-plane write changed, in words, from its request body: the template
values of the controller, scheduler and kubelet rules (`Summaries.VALUES` names each).

Each function takes the decoded request body (a patch, or the whole object of a create or
update; None when it could not be decoded) and returns a phrase; a body that lacks what
the function looks for gives a phrase that says only what the request is, never a guess.
"""

from __future__ import annotations

from typing import Any

from k8s_wiretap.wire.words import counted

__all__ = [
    "aggregated",
    "annotated",
    "conditions",
    "disruptions",
    "finalizers",
    "owners",
    "phase",
    "pinned",
    "replicas",
    "scheduling",
    "taints",
]


def _dict(value: Any, *keys: str) -> dict[str, Any]:
    """`value[keys[0]][keys[1]]...` when each step is a mapping, else {}."""
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def taints(body: Any) -> str:
    """A node taint patch (the node lifecycle controller's PatchNodeTaints sends the whole
    new list): `K:Effect, ...`, `none (all removed)` for null or [], `unchanged` without."""
    spec = _dict(body, "spec")
    if "taints" not in spec:
        return "unchanged"
    said = [
        f"{t.get('key')}{'=' + str(t['value']) if t.get('value') else ''}:{t.get('effect')}"
        for t in _list(spec["taints"])
        if isinstance(t, dict)
    ]
    return ", ".join(said) if said else "none (all removed)"


def _first_sentence(message: str) -> str:
    """The scheduler's message without its preemption half (`... preemption: 0/1 ...`)."""
    head, _, _ = message.partition(" preemption: ")
    return head.strip()


def conditions(body: Any) -> str:
    """The conditions a status write sets: `Type=Status (Reason): message` (the message up
    to a scheduler's ` preemption: ` half)."""
    said = []
    for condition in _list(_dict(body, "status").get("conditions")):
        if not isinstance(condition, dict):
            continue
        kind = str(condition.get("type") or "a condition")
        value = f"={condition['status']}" if condition.get("status") else ""
        reason = f" ({condition['reason']})" if condition.get("reason") else ""
        message = _first_sentence(str(condition.get("message") or ""))
        said.append(f"{kind}{value}{reason}" + (f": {message}" if message else ""))
    return "; ".join(said) or "no condition"


def scheduling(body: Any) -> str:
    """The scheduler's pod status patch: the nominated node (preemption), and the
    PodScheduled or DisruptionTarget condition it sets, with its reason and message."""
    status = _dict(body, "status")
    said = []
    if status.get("nominatedNodeName"):
        said.append(f"nominates node {status['nominatedNodeName']} (preemption)")
    elif "nominatedNodeName" in status:
        said.append("clears its nominated node")
    if status.get("conditions"):
        said.append(conditions(body))
    return "; ".join(said) or "a status patch"


def finalizers(body: Any) -> str:
    """What a write does to metadata.finalizers: a strategic patch's removal
    (`$deleteFromPrimitiveList`), a patch's additions, or an object's list as written."""
    meta = _dict(body, "metadata")
    whole = bool(_dict(body).get("kind"))  # an object written whole, not a patch
    removed = [str(f) for f in _list(meta.get("$deleteFromPrimitiveList/finalizers"))]
    if removed:
        return f"removes finalizer {', '.join(removed)}"
    if "finalizers" not in meta:
        return "no finalizer left" if whole else "leaves its finalizers"
    named = [str(f) for f in _list(meta["finalizers"])]
    if not whole:  # a patch: a strategic merge adds to the list
        return f"adds finalizer {', '.join(named)}" if named else "removes its finalizers"
    return f"finalizers left: {', '.join(named)}" if named else "no finalizer left"


def owners(body: Any) -> str:
    """A garbage collector's patch: the finalizers it removes (orphan, foregroundDeletion)
    and what it does to ownerReferences (removes one to a deleted owner, so the object is
    orphaned; or unblocks the owner's foreground deletion)."""
    meta = _dict(body, "metadata")
    said = []
    if "finalizers" in meta or "$deleteFromPrimitiveList/finalizers" in meta:
        said.append(finalizers(body))
    refs = [r for r in _list(meta.get("ownerReferences")) if isinstance(r, dict)]
    if any(r.get("$patch") == "delete" for r in refs):
        said.append("removes its ownerReference to a deleted owner (orphans it)")
    elif any(r.get("blockOwnerDeletion") is False for r in refs):
        said.append("unblocks its owner's foreground deletion")
    elif "ownerReferences" in meta:
        said.append("rewrites its ownerReferences")
    return "; ".join(said) or "a patch"


def aggregated(body: Any) -> str:
    """An aggregated ClusterRole as applied: how many rules, over how many resources."""
    rules = [r for r in _list(_dict(body).get("rules")) if isinstance(r, dict)]
    resources = {str(x) for r in rules for x in _list(r.get("resources"))}
    return f"{counted(len(rules), 'rule')} over {counted(len(resources), 'resource')}"


def annotated(body: Any) -> str:
    """The annotations a patch sets (`key=value`, `key removed` for a null)."""
    said = [
        f"{key}={value}" if value is not None else f"{key} removed"
        for key, value in _dict(body, "metadata", "annotations").items()
    ]
    return ", ".join(said) or "no annotation"


def phase(body: Any) -> str:
    """A kubelet's pod status patch that ends the pod: `: Failed, Evicted (message)` for an
    eviction by the kubelet, `: Succeeded`; nothing for the other phases."""
    status = _dict(body, "status")
    if status.get("phase") not in ("Failed", "Succeeded"):
        return ""
    reason = f", {status['reason']}" if status.get("reason") else ""
    message = f" ({status['message']})" if status.get("message") else ""
    return f": {status['phase']}{reason}{message}"


def replicas(body: Any) -> str:
    """The replicas a Scale (or an object) is set to."""
    wanted = _dict(body, "spec").get("replicas")
    return f"{wanted} replicas" if wanted is not None else "its replicas"


def disruptions(body: Any) -> str:
    """A PodDisruptionBudget's status as written: how many disruptions it allows, of how
    many healthy pods against how many wanted."""
    status = _dict(body, "status")
    if "disruptionsAllowed" not in status:
        return "its disruptions allowed"
    allowed = status["disruptionsAllowed"]
    return (
        f"{counted(allowed, 'disruption')} allowed"
        f" ({status.get('currentHealthy', 0)} healthy, {status.get('desiredHealthy', 0)} wanted)"
    )


def pinned(body: Any) -> str:
    """The node a DaemonSet's pod is pinned to: its required node affinity's
    `metadata.name` field (the daemon set controller's, since 1.12)."""
    required = _dict(body, "spec", "affinity", "nodeAffinity")
    terms = _dict(required, "requiredDuringSchedulingIgnoredDuringExecution")
    for term in _list(terms.get("nodeSelectorTerms")):
        for field in _list(term.get("matchFields") if isinstance(term, dict) else None):
            if isinstance(field, dict) and field.get("key") == "metadata.name":
                values = _list(field.get("values"))
                if values:
                    return f"node {values[0]}"
    return "its node"
