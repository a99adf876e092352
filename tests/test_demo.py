"""`make demo` runs `k8s-wiretap demo`: the apply story must be told, on real traffic."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import cli, lab_processes


def test_demo_tells_the_apply_story(tmp_path: Path) -> None:
    result = cli("demo", "--dir", str(tmp_path / "demo"), timeout=300)
    assert result.returncode == 0, result.stderr
    story = result.stdout.split("for that second apply")[1]
    expected = [
        "kubectl                          get              GET /apis/apps/v1/namespaces/default/deployments/web 200",
        "PATCH /apis/apps/v1/namespaces/default/deployments/web?fieldManager=kubectl-client-side-apply",
        'application/strategic-merge-patch+json: {"metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "<the new file>"}}, "spec": {"replicas": 3}}',
        "replace the kubectl.kubernetes.io/last-applied-configuration annotation: the whole new file",
        'replace /spec/replicas: {"from": 2, "to": 3}',
        "replayed on the object as ",
        "controller-manager/deployment-controller update           PUT /apis/apps/v1/namespaces/default/replicasets/web-",
        "controller-manager/replicaset-controller create           POST /api/v1/namespaces/default/pods 201",
        "scheduler                        create           POST /api/v1/namespaces/default/pods/web-",
        "kubelet                          patch            PATCH /api/v1/namespaces/default/pods/web-",
    ]
    for line in expected:
        assert line in story, line
    positions = [story.index(line) for line in expected]
    assert positions == sorted(positions)  # in the order it happened
    # what the replay started from: kubectl's GET, or a watch event of a write after it
    verdict = re.search(
        r"replayed on the object as (\S+)'s (\w+) saw it (\d+) ms before: (.*)", story
    )
    assert verdict, story
    assert verdict.group(4) == "matches the server's result"
    assert (verdict.group(1), verdict.group(2)) in (
        ("kubectl", "get"),
        ("controller-manager/shared-informers", "watch"),
    )
    assert lab_processes(tmp_path) == []
