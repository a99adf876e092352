"""Components as a sentence names them: `controller-manager/deployment-controller` is "the
deployment controller", `scheduler/leader-election` "the scheduler's leader election",
`kubelet` "the kubelet"; kubectl, the wiretap and a third-party client by their own names."""

from __future__ import annotations

from functools import cache

__all__ = ["spoken"]

BINARIES = {"controller-manager": "the controller manager", "scheduler": "the scheduler"}
BINARIES |= {"kubelet": "the kubelet", "kube-apiserver": "the API server"}


@cache
def spoken(component: str) -> str:
    """How a summary names `component` (see the module's docstring)."""
    binary, _, part = component.partition("/")
    if binary not in BINARIES:
        return component
    if not part:
        return BINARIES[binary]
    words = part.replace("-", " ")
    if part in ("leader-election", "shared-informers", "metadata-informers"):
        return f"{BINARIES[binary]}'s {words}"
    return f"the {words}"
