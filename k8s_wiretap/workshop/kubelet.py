"""The kubelet's life (talks 2 and 4), as a session against a lab whose every client talks
through the wiretap, recorded from `lab up` on (`scripts/record_wide.py --story kubelet`,
into recordings/kubelet-life.jsonl.gz):

1. the hollow kubelet registers its Node, renews its Lease, reports the node's status and
   watches the pods bound to it (all from `lab up`, before the first step);
2. Pod `web` is created and runs: the scheduler binds it, the kubelet's watch delivers it,
   the kubelet PATCHes its status as it starts;
3. a static pod: a manifest written into the kubelet's static pod folder, which the kubelet
   runs itself and shows in the API as a mirror pod;
4. Pod `web` deleted gracefully: the API server sets its deletionTimestamp, the kubelet
   stops it and removes it with its own final DELETE;
5. its Lease renewed three times more (every 10 s), so that its heartbeat shows;
6. the kubelet stops, beside a second node that stays Ready (`standby`): after the grace
   period the node controller marks node-1's conditions Unknown, its pods not ready, and
   taints it unreachable, NoSchedule and NoExecute.

The lab's parts (where the static pods go, how the kubelet stops) come from the caller:
the workshop needs nothing but kubectl.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from k8s_wiretap.errors import WiretapError
from k8s_wiretap.workshop.scenarios import Step, Story, environment, kubectl, run_story, wait_for
from k8s_wiretap.workshop.standby import standby

__all__ = ["KUBELET", "MIRROR", "STATIC", "kubelet_life"]

POD = """apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  containers: [{name: web, image: nginx:1.25}]
"""
STATIC = """apiVersion: v1
kind: Pod
metadata: {name: static-web, namespace: default, labels: {app: static-web}}
spec:
  containers: [{name: web, image: nginx:1.25}]
"""
MIRROR = "static-web-node-1"  # a mirror pod is named <static pod>-<node>
PHASE = "{.status.phase}"

KUBELET = Story(
    "kubelet",
    (
        Step(
            "a Pod, bound and started",
            ("apply", "-f", "-"),
            POD,
            until=PHASE,
            until_get=("get", "pod", "web"),
            expect="Running",
        ),
    ),
)


def kubelet_life(
    kubeconfig: str,
    cache: Path,
    static_pods: Path,
    stop_kubelet: Callable[[], None],
    out: TextIO = sys.stderr,
) -> None:
    """The session above: `static_pods` is the kubelet's static pod folder, `stop_kubelet`
    stops its process."""
    env = environment(kubeconfig, cache)
    run_story(KUBELET, kubeconfig, cache, out)
    print("-- a static pod, and its mirror pod", file=out, flush=True)
    (static_pods / "static-web.yaml").write_text(STATIC)
    wait_for(env, ("get", "pod", MIRROR, "-o", f"jsonpath={PHASE}"), "Running", 90)
    print("-- the Pod deleted gracefully: kubectl delete pod web", file=out, flush=True)
    kubectl(env, "delete", "pod", "web", "--wait=true", "--timeout=90s")
    print("-- the kubelet's heartbeat: its Lease renewed three times more", file=out, flush=True)
    _renewals(env, 3)
    print("-- the kubelet stops; a standby node stays Ready", file=out, flush=True)
    with standby(env):
        stop_kubelet()
        taints = ("get", "node", "node-1", "-o", "jsonpath={.spec.taints[*].effect}")
        wait_for(env, taints, "NoExecute", 180, within=True, what="node-1 unreachable")
        time.sleep(3)  # the last status writes reach the recording


def _renewals(env: dict[str, str], count: int, timeout: float = 120.0) -> None:
    """Until the kubelet has renewed its Lease `count` times more than when first seen. A
    Lease not found (the kubelet makes it again at its next renewal, should anything have
    removed it) counts as nothing; it is looked at every 2 s."""
    query = ("get", "lease", "node-1", "-n", "kube-node-lease", "-o", "jsonpath={.spec.renewTime}")
    seen: set[str] = set()
    deadline = time.monotonic() + timeout
    while len(seen) <= count:
        if time.monotonic() > deadline:
            raise WiretapError(
                f"the kubelet renewed its Lease {len(seen) - 1} times in {timeout:.0f} s"
            )
        seen.add(kubectl(env, *query, check=False))
        seen.discard("")
        time.sleep(2)
