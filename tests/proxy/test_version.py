"""Every recording says which Kubernetes release it came from."""

from __future__ import annotations

from pathlib import Path

from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.lab.state import LabState
from tests.conftest import Kubectl, wait_until
from tests.proxy.conftest import spawn_proxy


def test_the_proxy_asks_the_api_server_its_version_once(lab: LabState, tmp_path: Path) -> None:
    proxy = spawn_proxy(lab.kubeconfig, tmp_path)
    try:
        Kubectl(lab.kubeconfig, tmp_path / "cache", server=proxy.url)("get", "namespaces")
        wait_until(
            lambda: any(e.path == "/version" and e.end for e in proxy.recording().exchanges),
            20,
            "the version check in the recording",
        )
    finally:
        proxy.process.terminate()
        proxy.process.wait(30)
    recording = proxy.recording()
    (asked,) = [e for e in recording.exchanges if e.component == "k8s-wiretap"]
    assert asked.path == "/version" and asked.status == 200
    assert asked.user_agent.endswith("(version check)")
    assert asked.request.identity.credential == "added by proxy"
    assert Analysis.of(recording).server_version == f"v{lab.kube_version}"
