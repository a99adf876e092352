"""A second Node that stays Ready while the lab's own kubelet stops: `standby(env)`.

The lab has one node. When its kubelet goes silent, no node is left Ready, and the node
lifecycle controller enters its full disruption mode (`handleDisruption`,
pkg/controller/nodelifecycle/node_lifecycle_controller.go): it stops tainting nodes
NoExecute and takes those taints off, so whether the silent node ever gets its
`node.kubernetes.io/unreachable:NoExecute` taint is a race between the tainting pass (every
100 ms) and that mode. A cluster with another node Ready is what the taint is for: this one
is a Node object whose Lease and Ready condition are renewed every 5 s from here (no
kubelet), with a NoSchedule taint of its own that keeps every pod, DaemonSets' too, off it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from k8s_wiretap.workshop.scenarios import kubectl, wait_for

__all__ = ["NAME", "standby"]

NAME = "standby"
TAINT = "example.com/standby"
RENEW_SECONDS = 5.0
OBJECTS = f"""
apiVersion: v1
kind: Node
metadata: {{name: {NAME}}}
spec:
  taints: [{{key: {TAINT}, effect: NoSchedule}}]
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {{name: {NAME}, namespace: kube-node-lease}}
spec: {{holderIdentity: {NAME}, leaseDurationSeconds: 40}}
"""


@contextmanager
def standby(env: dict[str, str], timeout: float = 60.0) -> Iterator[None]:
    """The standby Node, Ready as the node controller sees it, while the block runs (`env`:
    kubectl's environment, its KUBECONFIG the cluster's); its renewals stop after it."""
    kubectl(env, "apply", "-f", "-", stdin=OBJECTS)
    stop = threading.Event()
    renewer = threading.Thread(target=_renew, args=(env, stop), daemon=True)
    renewer.start()
    try:
        _until_seen_ready(env, timeout)
        yield
    finally:
        stop.set()
        renewer.join()


def _renew(env: dict[str, str], stop: threading.Event) -> None:
    while True:
        now = datetime.now(UTC)
        lease = {"spec": {"renewTime": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")}}
        ready = {
            "type": "Ready",
            "status": "True",
            "reason": "Standby",
            "message": "renewed by the workshop, no kubelet",
            "lastHeartbeatTime": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        merge = ("--type=merge", "-p")
        # a renewal may fail while the API server is busy: the next comes 5 s later
        lease_patch = ("patch", "lease", NAME, "-n", "kube-node-lease", *merge, json.dumps(lease))
        kubectl(env, *lease_patch, check=False)
        status = json.dumps({"status": {"conditions": [ready]}})
        kubectl(env, "patch", "node", NAME, "--subresource=status", *merge, status, check=False)
        if stop.wait(RENEW_SECONDS):
            return


def _until_seen_ready(env: dict[str, str], timeout: float) -> None:
    """Until the node controller has taken off the not-ready taint that admission put on
    the new Node (TaintNodesByCondition): it has seen it Ready."""
    query = ("get", "node", NAME, "-o", "jsonpath={.spec.taints[*].key}")
    wait_for(env, query, TAINT, timeout, what="the standby node seen Ready")
