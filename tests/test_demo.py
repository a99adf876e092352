"""`make demo` runs `k8s-wiretap demo` (the walkthrough of the bundled recording), `make
demo-live` runs `demo --live`: the apply story must be told, on real traffic."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import cli, lab_processes


@pytest.mark.lab  # starts a lab
def test_demo_tells_the_apply_story(tmp_path: Path) -> None:
    result = cli("demo", "--live", "--dir", str(tmp_path / "demo"), timeout=300)
    assert result.returncode == 0, result.stderr
    story = result.stdout.split("for that second apply")[1]
    expected = [
        "kubectl apply reads the live Deployment default/web (200)",
        "kubectl apply patches Deployment default/web (strategic merge patch, three-way)",
        'application/strategic-merge-patch+json: {"metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "<the new file>"}}, "spec": {"replicas": 3}}',
        "replayed on the object as ",
        "set /spec/replicas 2 → 3",
        "changed by your file",
        "controller-manager/deployment-controller: the deployment controller updates ReplicaSet web-",
        "controller-manager/replicaset-controller: the replicaset controller creates Pod web-",
        "scheduler: the scheduler binds Pod web-",
        "kubelet: the kubelet reports Pod web-",
    ]
    for line in expected:
        assert line in story, line
    positions = [story.index(line) for line in expected]
    assert positions == sorted(positions)  # in the order it happened, each under its cause
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
    assert "exchanges recorded in all" in story
    assert lab_processes(tmp_path) == []


def test_demo_without_a_cluster_is_the_walkthrough() -> None:
    result = cli("demo")  # no terminal here: the walkthrough's narration, printed
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("What happens when you kubectl apply (apply-story.jsonl.gz)")
    assert "== 4/11 A three-way strategic merge patch" in result.stdout
    refused = cli("demo", "--keep")
    assert refused.returncode == 2 and "are for the lab of `demo --live`" in refused.stderr
