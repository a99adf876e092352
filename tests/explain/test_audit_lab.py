"""Refusals, checks, impersonation and kubectl apply as a real API server's audit log tells
them: a lab at RequestResponse, where kubectl runs a privileged pod into a namespace that
enforces the restricted Pod Security Standard, a pod past a ResourceQuota, a client-side
apply twice, and `auth can-i` as a service account; the log imported, with its User-Agents
and without them (as older logs and exports keep them)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.explain_coverage import Said, contradiction, coverage, explain
from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.lab.state import LabState
from tests.conftest import Kubectl, cli, wait_until

pytestmark = pytest.mark.lab

PRIVILEGED = """
apiVersion: v1
kind: Pod
metadata: {name: root, namespace: guarded}
spec:
  containers:
  - name: root
    image: busybox:1.36
    securityContext: {privileged: true}
"""
QUOTA = """
apiVersion: v1
kind: ResourceQuota
metadata: {name: no-pods, namespace: quota}
spec: {hard: {pods: "0"}}
"""
POD = """
apiVersion: v1
kind: Pod
metadata: {name: extra, namespace: quota}
spec:
  containers: [{name: extra, image: busybox:1.36}]
"""
DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: applied}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:IMAGE"}]
"""
AS = "system:serviceaccount:guarded:default"


def audit_log(state: LabState) -> Path:
    return Path(state.kubeconfig).parent / "logs" / "audit.log"


def events(log: Path) -> list[dict[str, Any]]:
    text = log.read_bytes()
    return [json.loads(line) for line in text[: text.rfind(b"\n") + 1].split(b"\n") if line]


@pytest.fixture(scope="module")
def acted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[dict[str, Any]]]:
    """The lab's audit log once kubectl has done what the module's docstring says."""
    lab = Lab(tmp_path_factory.mktemp("explained") / "lab")
    state = lab.up(UpOptions(build=False, audit_level="RequestResponse"))
    try:
        kubectl = Kubectl(state.kubeconfig, tmp_path_factory.mktemp("kubecache"))
        kubectl("create", "namespace", "guarded")
        kubectl("label", "namespace", "guarded", "pod-security.kubernetes.io/enforce=restricted")
        refused = kubectl.run("apply", "-f", "-", stdin=PRIVILEGED, check=False)
        assert "violates PodSecurity" in refused.stderr
        kubectl("create", "namespace", "quota")
        kubectl("apply", "-f", "-", stdin=QUOTA)
        wait_until(
            lambda: (
                "pods"
                in kubectl.run(
                    "get",
                    "resourcequota",
                    "-n",
                    "quota",
                    "no-pods",
                    "-o",
                    "jsonpath={.status.hard}",
                ).stdout
            ),
            30,
            "the quota's status",
        )
        over = kubectl.run("create", "-f", "-", stdin=POD, check=False)
        assert "exceeded quota" in over.stderr
        kubectl("create", "namespace", "applied")
        kubectl("apply", "-f", "-", stdin=DEPLOYMENT.replace("IMAGE", "1.25"))
        kubectl("apply", "-f", "-", stdin=DEPLOYMENT.replace("IMAGE", "1.27"))
        kubectl.run("auth", "can-i", "list", "pods", "-n", "guarded", f"--as={AS}", check=False)
        log = audit_log(state)
        wait_until(lambda: "selfsubjectaccessreviews" in log.read_text(), 30, "the review logged")
        yield events(log)
    finally:
        lab.down()


def imported(tmp_path: Path, logged: list[dict[str, Any]], *, agents: bool) -> list[Said]:
    log = tmp_path / "audit.log"
    lines = []
    for event in logged:
        copy = dict(event)
        if not agents:
            copy.pop("userAgent", None)
        lines.append(json.dumps(copy) + "\n")
    log.write_text("".join(lines))
    out = tmp_path / "rec.jsonl"
    result = cli("import", "audit", str(log), "-o", str(out))
    assert result.returncode == 0, result.stderr
    return explain(out)


@pytest.mark.parametrize("agents", [True, False])
def test_the_real_refusals_checks_and_applies(
    acted: list[dict[str, Any]], tmp_path: Path, agents: bool
) -> None:
    said = imported(tmp_path, acted, agents=agents)
    by_id = {e["auditID"]: e for e in acted}

    def of(resource: str, namespace: str, code: int) -> list[Said]:
        return [
            s
            for s in said
            if s.resource == resource and s.namespace == namespace and s.status == code
        ]

    (podsecurity,) = [s for s in of("pods", "guarded", 403) if s.verb == "create"]
    event = by_id[podsecurity.id]
    assert event["annotations"]["authorization.k8s.io/decision"] == "allow"
    assert podsecurity.rule == "refused-podsecurity", podsecurity.summary
    assert "PodSecurity" in podsecurity.summary and "not by RBAC" in podsecurity.summary
    assert "restricted" in podsecurity.summary
    (quota,) = [s for s in of("pods", "quota", 403) if s.verb == "create"]
    assert quota.rule == "refused-quota", quota.summary
    assert "ResourceQuota no-pods" in quota.summary
    applies = [s for s in said if s.resource == "deployments" and s.namespace == "applied"]
    patch = [s for s in applies if s.verb == "patch"]
    assert [s.rule for s in patch] == ["apply-patch-seen"]
    assert "kubectl apply's three-way patch" in patch[0].summary
    assert "nginx:1.27" in patch[0].summary
    created = [s for s in applies if s.verb == "create"]
    assert [s.rule for s in created] == ["apply-create-seen"]
    (review,) = [s for s in said if s.resource == "selfsubjectaccessreviews"]
    assert review.rule == "access-review"
    assert review.summary.startswith(("kubectl asks", "kubernetes-admin asks"))
    assert f"asks whether {AS} may list pods" in review.summary  # for whom it asked
    c = coverage(said)
    assert (c.unattributed, c.unknown_actors, c.contradictions) == (0, 0, [])
    assert not [s for s in said if contradiction(s)]
