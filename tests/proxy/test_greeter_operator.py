"""The wide session's third-party operator (scripts/greeter_operator.py) runs against the real
lab through the wiretap: for a Greeting it creates its ConfigMap, owned by the Greeting, and
updates it when the Greeting changes; the wiretap records its requests under its own
User-Agent. (recordings/wide-session.jsonl.gz holds the same through `lab up --via-proxy`.)"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from k8s_wiretap.capture.reader import Recording
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.workshop import manifest
from tests.conftest import Kubectl, wait_until
from tests.proxy.conftest import Wiretap

OPERATOR = Path(__file__).resolve().parents[2] / "scripts" / "greeter_operator.py"
AGENT = "greeter-operator/1.0 (python kubernetes client)"
GREETING = """apiVersion: workshop.example.com/v1
kind: Greeting
metadata: {name: operated}
spec: {message: hello, times: 1}
"""
CONFIGMAPS = "/api/v1/namespaces/shop/configmaps"


def proxy_kubeconfig(wiretap: Wiretap, path: Path) -> Path:
    """A kubeconfig whose server is the wiretap, without credentials (the proxy adds them)."""
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "wiretap", "cluster": {"server": wiretap.url}}],
        "users": [{"name": "nobody", "user": {}}],
        "contexts": [{"name": "wiretap", "context": {"cluster": "wiretap", "user": "nobody"}}],
        "current-context": "wiretap",
    }
    path.write_text(yaml.safe_dump(document))
    return path


@pytest.fixture(scope="module")
def operator(
    lab: LabState, kubectl: Kubectl, wiretap: Wiretap, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[subprocess.Popen[str]]:
    """The greeter running through the wiretap, with namespace shop and the Greeting CRD."""
    folder = tmp_path_factory.mktemp("greeter")
    kubectl("apply", "-f", "-", stdin=manifest("crd"))
    kubectl("wait", "--for=condition=Established", "crd/greetings.workshop.example.com")
    kubectl("create", "namespace", "shop")
    kubeconfig = proxy_kubeconfig(wiretap, folder / "kubeconfig")
    with (folder / "greeter.log").open("w") as log:
        process = subprocess.Popen(
            [sys.executable, str(OPERATOR), str(kubeconfig)],
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )
    try:
        yield process
    finally:
        process.terminate()
        process.wait(30)
        kubectl("delete", "namespace", "shop", "--wait=false")


def message(kubectl: Kubectl) -> str:
    got = kubectl.run(
        "get",
        "configmap",
        "greeting-operated",
        "-n",
        "shop",
        "-o",
        "jsonpath={.data.message}",
        check=False,
    )
    return got.stdout


def test_it_writes_and_updates_the_greetings_configmap(
    operator: subprocess.Popen[str], kubectl: Kubectl, wiretap: Wiretap
) -> None:
    kubectl("apply", "-n", "shop", "-f", "-", stdin=GREETING)
    wait_until(lambda: message(kubectl) == "hello", 30, "the greeter's ConfigMap")
    uid = kubectl("get", "greeting", "operated", "-n", "shop", "-o", "jsonpath={.metadata.uid}")
    owner = kubectl(
        "get",
        "configmap",
        "greeting-operated",
        "-n",
        "shop",
        "-o",
        "jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].uid}",
    )
    assert owner == f"Greeting/{uid}"
    kubectl(
        "patch",
        "greeting",
        "operated",
        "-n",
        "shop",
        "--type",
        "merge",
        "-p",
        '{"spec": {"message": "bonjour"}}',
    )
    wait_until(lambda: message(kubectl) == "bonjour", 30, "the greeter's update")
    assert operator.poll() is None  # it runs until killed

    def written(recording: Recording) -> bool:
        return any(
            e.method == "PATCH" and e.path.startswith(f"{CONFIGMAPS}/greeting-operated") and e.end
            for e in recording.exchanges
        )

    recording = wiretap.wait_for("the greeter's PATCH", written)
    ours = [e for e in recording.exchanges if e.request_header("user-agent") == AGENT]
    seen = {(e.method, e.path.split("?")[0], e.status) for e in ours}
    assert ("POST", CONFIGMAPS, 201) in seen
    assert ("PATCH", f"{CONFIGMAPS}/greeting-operated", 200) in seen
    watches = [e for e in ours if "/greetings?" in e.path and "watch=true" in e.path]
    assert any(e.status == 200 for e in watches)  # the watch its writes follow
