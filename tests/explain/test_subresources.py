"""Subresources named for what they are, on traffic recorded through the proxy from the lab:
an eviction is an eviction (and one a PodDisruptionBudget refuses says which), a
TokenRequest is a token for a service account, a Namespace has no namespace."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest

from k8s_wiretap.capture.reader import load
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.summaries import Summaries
from k8s_wiretap.lab.state import LabState
from tests.conftest import Kubectl, wait_until
from tests.proxy.conftest import start_wiretap

NS = f"subres-{uuid.uuid4().hex[:6]}"

POD = """
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {ns}, labels: {{app: {app}}}}}
spec:
  serviceAccountName: bot
  containers: [{{name: main, image: registry.k8s.io/pause:3.10}}]
"""

BUDGET = f"""
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: guard, namespace: {NS}}}
spec:
  minAvailable: 1
  selector: {{matchLabels: {{app: guarded}}}}
"""


def _eviction(name: str) -> str:
    meta = {"name": name, "namespace": NS}
    return json.dumps({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": meta})


def _running(kubectl: Kubectl, name: str) -> bool:
    phase = kubectl("get", "pod", name, "-n", NS, "-o", "jsonpath={.status.phase}")
    return phase == "Running"


@pytest.fixture(scope="module")
def summaries(lab: LabState, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Summaries]:
    """The summary of each exchange of a session through the proxy: evictions, tokens,
    a namespace read."""
    folder = tmp_path_factory.mktemp("subresources")
    wiretap = start_wiretap(lab.kubeconfig, folder)
    kubectl = Kubectl(lab.kubeconfig, folder / "cache", server=wiretap.url)
    try:
        kubectl("create", "namespace", NS)
        kubectl("create", "serviceaccount", "bot", "-n", NS)
        for name, app in (("guarded", "guarded"), ("free", "free")):
            kubectl("apply", "-f", "-", stdin=POD.format(name=name, ns=NS, app=app))
        kubectl("apply", "-f", "-", stdin=BUDGET)
        wait_until(lambda: _running(kubectl, "guarded"), 60, "pod guarded to run")
        wait_until(lambda: _running(kubectl, "free"), 60, "pod free to run")
        base = f"/api/v1/namespaces/{NS}/pods"
        refused = kubectl.run(
            "create", "--raw", f"{base}/guarded/eviction", "-f", "-",
            stdin=_eviction("guarded"), check=False,
        )  # fmt: skip
        assert refused.returncode != 0 and "disruption budget" in refused.stderr
        kubectl("create", "--raw", f"{base}/free/eviction", "-f", "-", stdin=_eviction("free"))
        kubectl("create", "token", "bot", "-n", NS, "--audience", "vault", "--duration", "10m")
        kubectl(
            "create", "token", "bot", "-n", NS,
            "--bound-object-kind", "Pod", "--bound-object-name", "guarded",
        )  # fmt: skip
        kubectl("get", "namespace", NS)
        wiretap.wait_for(
            "the namespace read",
            lambda r: any(e.path == f"/api/v1/namespaces/{NS}" for e in r.exchanges),
        )
    finally:
        wiretap.server.stop()
    yield Summaries(Analysis.of(load(wiretap.record)))


def said(summaries: Summaries, path: str, method: str = "POST") -> list[str]:
    """The summaries of the exchanges of `method` on `path`."""
    return [
        summaries.explain(e).summary
        for e in summaries.analysis.exchanges
        if e.path.split("?")[0] == path and e.method == method
    ]


def test_an_eviction_is_an_eviction(summaries: Summaries) -> None:
    assert said(summaries, f"/api/v1/namespaces/{NS}/pods/free/eviction") == [
        f"kubectl create: eviction of Pod {NS}/free"
    ]


def test_an_eviction_a_budget_refuses_names_the_budget(summaries: Summaries) -> None:
    (summary,) = said(summaries, f"/api/v1/namespaces/{NS}/pods/guarded/eviction")
    assert summary.startswith(
        f"kubectl create: eviction of Pod {NS}/guarded refused (429) by PodDisruptionBudget guard ("
    ), summary


def test_create_token_is_a_token_request(summaries: Summaries) -> None:
    path = f"/api/v1/namespaces/{NS}/serviceaccounts/bot/token"
    assert said(summaries, path) == [
        f"kubectl create token: TokenRequest for service account {NS}/bot"
        " (audience vault; expires in 600 s)",
        f"kubectl create token: TokenRequest for service account {NS}/bot (bound to Pod guarded)",
    ]


def test_a_namespace_has_no_namespace(summaries: Summaries) -> None:
    read = said(summaries, f"/api/v1/namespaces/{NS}", "GET")
    assert read[-1] == f"kubectl get: get Namespace {NS}"
    assert not [s for s in read if f"{NS}/{NS}" in s], read
