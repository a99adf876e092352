"""On the lab, through the wiretap, with the release's own kubectl: the wire changes of the
last two releases that the lab can show (docs/decoding.md#what-137-and-138-changed-on-the-wire).

- KEP-4006: `kubectl exec` and `kubectl port-forward` ask for a WebSocket first (a GET,
  `Sec-WebSocket-Protocol: v5.channel.k8s.io`, `SPDY/3.1+portforward.k8s.io`), then fall
  back to SPDY (a POST with `X-Stream-Protocol-Version`s). The API server cannot reach the
  lab's hollow node (it has no address), so both answers are 500s, which say so; each is
  explained as the exec or port-forward it is, with the upgrade its client offered.
- KEP-5958: a read asking `Accept: ...;drop=metadata.managedFields` of a server whose
  ManagedFieldsOptOut gate is off (every release before 1.38, and 1.38 by default) gets
  managedFields all the same, and the explanation says the server ignored the ask.
"""

from __future__ import annotations

import json
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.reader import Recording
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.summaries import Summaries
from k8s_wiretap.lab.state import LabState
from tests.conftest import Kubectl, wait_until
from tests.proxy.conftest import start_wiretap

NS = "wire-changes"
POD = f"""
apiVersion: v1
kind: Pod
metadata: {{name: shell, namespace: {NS}}}
spec:
  nodeName: node-1
  containers: [{{name: main, image: busybox:1.36, command: [sleep, "3600"]}}]
"""
DROP = "application/json;drop=metadata.managedFields"


@pytest.fixture(scope="module")
def streamed(lab: LabState, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recording]:
    """kubectl exec and port-forward against a Running pod, and a GET asking for its
    ConfigMap without managedFields, all through a wiretap; the recording."""
    folder = tmp_path_factory.mktemp("wire-changes")
    wiretap = start_wiretap(lab.kubeconfig, folder)
    own = str(Path(lab.kubeconfig).parent / "bin" / "kubectl")  # the release's own
    kubectl = Kubectl(lab.kubeconfig, folder / "cache", server=wiretap.url, binary=own)
    try:
        kubectl("create", "namespace", NS)
        kubectl("create", "configmap", "menu", "-n", NS, "--from-literal=soup=leek")
        kubectl("apply", "-f", "-", stdin=POD)
        wait_until(lambda: _phase(kubectl) == "Running", 60, "the pod to run")
        ran = kubectl.run("exec", "shell", "-n", NS, "--", "true", check=False)
        assert ran.returncode != 0 and "error dialing backend" in ran.stderr
        forwarding = kubectl.popen("port-forward", "-n", NS, "pod/shell", ":80")
        try:
            _, said = forwarding.communicate(timeout=60)  # it cannot upgrade: it stops
        finally:
            if forwarding.poll() is None:
                forwarding.kill()
        assert forwarding.returncode != 0 and "error upgrading connection" in said
        request = urllib.request.Request(
            f"{wiretap.url}/api/v1/namespaces/{NS}/configmaps/menu", headers={"Accept": DROP}
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert "managedFields" in json.loads(answer.read())["metadata"]
        yield wiretap.wait_for(
            "the configmap read", lambda r: any(_is_drop(e) and e.end for e in r.exchanges)
        )
    finally:
        wiretap.server.stop()
        subprocess.run(
            ["kubectl", "delete", "namespace", NS, "--wait=false"],
            env=kubectl.env,
            capture_output=True,
            check=False,
        )


def _phase(kubectl: Kubectl) -> str:
    return kubectl("get", "pod", "shell", "-n", NS, "-o", "jsonpath={.status.phase}")


def _is_drop(exchange: Exchange) -> bool:
    return exchange.info.resource == "configmaps" and "drop=" in exchange.request_header("accept")


def _tries(recording: Recording, subresource: str) -> list[Exchange]:
    return [
        e
        for e in recording.exchanges
        if e.info.resource == "pods"
        and e.info.subresource == subresource
        and e.info.name == "shell"
    ]


def _failure(summaries: Summaries, exchange: Exchange) -> str:
    status = summaries.analysis.response_body(exchange).value
    assert isinstance(status, dict) and status["kind"] == "Status"
    return str(status["message"])


def test_kubectl_exec_offers_a_websocket_then_spdy_and_each_is_explained(
    streamed: Recording,
) -> None:
    summaries = Summaries(Analysis.of(streamed))
    websocket, spdy = _tries(streamed, "exec")
    assert (websocket.method, websocket.info.verb, websocket.status) == ("GET", "get", 500)
    assert websocket.request_header("upgrade").lower() == "websocket"
    assert websocket.request_header("sec-websocket-protocol") == "v5.channel.k8s.io"
    assert (spdy.method, spdy.info.verb, spdy.status) == ("POST", "create", 500)
    assert spdy.request_header("upgrade") == "SPDY/3.1"
    offered = [v for k, v in spdy.request.headers if k.lower() == "x-stream-protocol-version"]
    assert offered == [f"{v}channel.k8s.io" for v in ("v5.", "v4.", "v3.", "v2.", "")]
    for exchange, verb, upgrade in (
        (websocket, "get", "a WebSocket upgrade offering v5.channel.k8s.io"),
        (spdy, "create", "a SPDY upgrade offering " + ", ".join(offered)),
    ):
        said = summaries.explain(exchange)
        assert (said.rule, said.summary) == (
            "server-error",
            f"kubectl exec: {verb} Pod {NS}/shell's exec: server error (500),"
            f" {_failure(summaries, exchange)} ({upgrade})",
        )


def test_kubectl_port_forward_tunnels_spdy_in_a_websocket_then_falls_back(
    streamed: Recording,
) -> None:
    summaries = Summaries(Analysis.of(streamed))
    websocket, spdy = _tries(streamed, "portforward")
    assert (websocket.method, websocket.status) == ("GET", 500)
    offered = websocket.request_header("sec-websocket-protocol")
    assert offered == "SPDY/3.1+portforward.k8s.io"
    assert (spdy.method, spdy.status, spdy.request_header("x-stream-protocol-version")) == (
        "POST",
        500,
        "portforward.k8s.io",
    )
    for exchange, verb, upgrade in (
        (websocket, "get", f"a WebSocket upgrade offering {offered}"),
        (spdy, "create", "a SPDY upgrade offering portforward.k8s.io"),
    ):
        said = summaries.explain(exchange)
        assert (said.rule, said.summary) == (
            "server-error",
            f"kubectl port-forward: {verb} Pod {NS}/shell's portforward: server error (500),"
            f" {_failure(summaries, exchange)} ({upgrade})",
        )


def test_a_server_without_the_managed_fields_opt_out_ignores_the_ask(
    streamed: Recording,
) -> None:
    summaries = Summaries(Analysis.of(streamed))
    (read,) = [e for e in streamed.exchanges if _is_drop(e)]
    assert read.request_header("accept") == DROP and read.status == 200
    answer = summaries.analysis.response_body(read).value
    assert answer["metadata"]["managedFields"][0]["manager"] == "kubectl-create"
    said = summaries.explain(read)
    assert said.summary == (
        f"Python-urllib gets ConfigMap {NS}/menu (asked without managedFields, Accept"
        " drop=metadata.managedFields: the server ignored it and sent them, as one without"
        " the ManagedFieldsOptOut gate does)"
    )
