"""Components as a sentence names them: `controller-manager/deployment-controller` is "the
deployment controller", `scheduler/leader-election` "the scheduler's leader election",
`kubelet` "the kubelet"; a user the tables do not know by its name (`user/kubernetes-admin` is
"kubernetes-admin"), a pod's service account as one ("service account shop/app"), a
distribution's component as its ("GKE's vpa-recommender"); kubectl, the wiretap and a
third-party client by their own names."""

from __future__ import annotations

from functools import cache

from k8s_wiretap.kube.controllers import DISTRIBUTIONS

__all__ = ["spoken"]

BINARIES = {"controller-manager": "the controller manager", "scheduler": "the scheduler"}
BINARIES |= {"kubelet": "the kubelet", "kube-apiserver": "the API server"}
BINARIES |= {"apiserver": "the API server"}


@cache
def spoken(component: str) -> str:
    """How a summary names `component` (see the module's docstring)."""
    if component == "unknown":  # no agent, user or listener: said so, never as a name
        return "a client the record does not name"
    binary, _, part = component.partition("/")
    if binary == "user" and part:  # a user the tables do not know: by its name
        return part
    if binary == "serviceaccount" and part:
        return f"service account {part}"
    if binary in DISTRIBUTIONS and part:
        return f"{DISTRIBUTIONS[binary]}'s {part}"
    if binary not in BINARIES:
        return component
    if not part:
        return BINARIES[binary]
    words = part.replace("-", " ")
    if part in ("leader-election", "shared-informers", "metadata-informers"):
        return f"{BINARIES[binary]}'s {words}"
    return f"the {words}"
