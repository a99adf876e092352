"""Failures say so in the summary line, with what the API server's Status says: on traffic
recorded through the proxy from the lab (a 404, a 409 of a name taken and one of a stale
resourceVersion, a 422 with its field and rule, a 403 with its user and verb)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest

from k8s_wiretap.capture.reader import load
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.summaries import Summaries
from k8s_wiretap.lab.state import LabState
from tests.conftest import Kubectl
from tests.proxy.conftest import start_wiretap

NS = f"fail-{uuid.uuid4().hex[:6]}"


@pytest.fixture(scope="module")
def summaries(lab: LabState, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Summaries]:
    """The summary of each exchange of a session through the proxy where requests fail."""
    folder = tmp_path_factory.mktemp("failures")
    wiretap = start_wiretap(lab.kubeconfig, folder)
    kubectl = Kubectl(lab.kubeconfig, folder / "cache", server=wiretap.url)
    try:
        kubectl("create", "namespace", NS)
        assert kubectl.run("get", "configmap", "nope", "-n", NS, check=False).returncode
        kubectl("create", "configmap", "twice", "-n", NS)
        assert kubectl.run("create", "configmap", "twice", "-n", NS, check=False).returncode
        stale = kubectl("get", "configmap", "twice", "-n", NS, "-o", "json")
        kubectl("label", "configmap", "twice", "-n", NS, "changed=yes")
        old = json.loads(stale)
        old["data"] = {"late": "yes"}
        replaced = kubectl.run("replace", "-f", "-", stdin=json.dumps(old), check=False)
        assert "the object has been modified" in replaced.stderr
        assert kubectl.run("create", "configmap", "Bad_Name", "-n", NS, check=False).returncode
        assert kubectl.run("--as", "nobody", "get", "secrets", "-n", NS, check=False).returncode
        wiretap.wait_for(
            "the forbidden list",
            lambda r: any(e.status == 403 and e.info.resource == "secrets" for e in r.exchanges),
        )
    finally:
        wiretap.server.stop()
    yield Summaries(Analysis.of(load(wiretap.record)))


def failed(summaries: Summaries, status: int, resource: str = "configmaps") -> list[str]:
    """The summaries of the exchanges on `resource` in the test's namespace that got `status`."""
    return [
        summaries.explain(e).summary
        for e in summaries.analysis.exchanges
        if e.status == status and e.info.resource == resource and e.info.namespace == NS
    ]


def test_a_404_says_not_found(summaries: Summaries) -> None:
    assert failed(summaries, 404) == [f"kubectl get: get ConfigMap {NS}/nope: not found (404)"]


def test_a_409_says_which_conflict(summaries: Summaries) -> None:
    assert failed(summaries, 409) == [
        f"kubectl create configmap: create ConfigMap {NS}/twice: conflict (409), it already exists",
        f"kubectl replace: update ConfigMap {NS}/twice: conflict (409), the resourceVersion it"
        " sent is stale (the object changed since it read it); it must read again and retry",
    ]


def test_a_422_says_which_field_broke_which_rule(summaries: Summaries) -> None:
    (summary,) = failed(summaries, 422)
    assert summary.startswith(
        f"kubectl create configmap: create ConfigMap {NS}/Bad_Name: invalid (422),"
        ' metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain'
    ), summary


def test_a_403_says_who_may_not_do_what(summaries: Summaries) -> None:
    """kubectl get --as=nobody: the admin acting as nobody, refused as nobody."""
    assert failed(summaries, 403, "secrets") == [
        f"kubectl get: list secrets in {NS}: forbidden (403),"
        f' User "nobody" cannot list resource "secrets" in API group "" in the namespace "{NS}",'
        " acting as nobody (impersonated by kubernetes-admin: the API server authorized it as"
        " nobody)"
    ]
