"""The clients table (kube/data/controllers.yaml) against what the lab's clients really do."""

from __future__ import annotations

from pathlib import Path

import pytest

from k8s_wiretap.capture.reader import load
from k8s_wiretap.kube.controllers import Operation, client, clients, third_party
from k8s_wiretap.kube.verbs import WRITES
from tests.recorded import STORY, STORY_1_20


@pytest.fixture(
    params=[
        "committed",
        "committed-1.20",
        pytest.param("live", marks=[pytest.mark.lab, pytest.mark.xdist_group("story")]),
    ],
    scope="module",
)
def recording_path(request: pytest.FixtureRequest) -> Path:
    if request.param == "live":
        return Path(request.getfixturevalue("story"))
    return STORY if request.param == "committed" else STORY_1_20


def test_every_write_of_the_control_plane_is_declared(recording_path: Path) -> None:
    undeclared = set()
    for exchange in load(recording_path).exchanges:
        info, known = exchange.info, client(exchange.component)
        if exchange.component.startswith(("kubectl", "k8s-wiretap")):
            continue
        assert known is not None, f"no entry for {exchange.component}"
        declared = known.writes_to(info.verb, info.group, info.resource, info.subresource)
        if info.verb in WRITES and info.is_resource_request and not declared:
            undeclared.add((exchange.component, info.verb, info.group, info.resource))
    assert not undeclared


def test_every_watch_is_one_its_client_declares(recording_path: Path) -> None:
    undeclared = set()
    for exchange in load(recording_path).exchanges:
        info, known = exchange.info, client(exchange.component)
        if info.verb != "watch" or known is None:
            continue
        if not known.watches_resource(info.group, info.resource):
            undeclared.add((exchange.component, info.group, info.resource))
    assert not undeclared


def test_what_the_shared_informers_watch_is_what_some_controller_needs() -> None:
    story = load(STORY)
    watched = {
        (e.info.group, e.info.resource)
        for e in story.exchanges
        if e.component == "controller-manager/shared-informers" and e.info.verb == "watch"
    }
    controllers = [c for c in clients().values() if c.component == "controller-manager"]
    needed = {w for c in controllers if c.name != "shared-informers" for w in c.watches}
    assert ("apps", "deployments") in watched and ("", "pods") in watched
    # the informers the deployment, replicaset and scheduler chain reads from are all there
    for resource in (("apps", "replicasets"), ("", "pods"), ("apps", "deployments")):
        assert resource in needed and resource in watched


def test_operations_parse_groups_from_the_discovery_table() -> None:
    assert Operation.parse("update apps/deployments/status") == Operation(
        "update", "apps", "deployments", "status"
    )
    assert Operation.parse("patch nodes/status") == Operation("patch", "", "nodes", "status")
    assert Operation.parse("create pods") == Operation("create", "", "pods")
    assert Operation.parse("update */scale").covers("update", "apps", "deployments", "scale")
    deployment = client("controller-manager/deployment-controller")
    assert deployment is not None and deployment.watches_resource("apps", "replicasets")
    assert not deployment.writes_to("create", "", "pods")
    assert client("kubelet") is not None and client("scheduler/leader-election") is not None


def test_clients_the_older_release_lacks_say_since_when() -> None:
    """Every client the 1.20 recording shows is in the table without a `since`; the ones
    only the default release has say which release added them."""
    old = {e.component for e in load(STORY_1_20).exchanges}
    new = {e.component for e in load(STORY).exchanges} - old
    for name in new:
        known = client(name)
        if known is not None:
            assert known.since, name
    for name in old:
        known = client(name)
        assert known is None or not known.since, name


def test_a_third_party_is_neither_a_persons_tool_nor_kubernetes() -> None:
    assert third_party("greeter-operator")
    assert third_party("argocd/application-controller")
    assert third_party("flux/kustomize-controller")
    for own in [
        "kubectl",
        "helm",
        "k8s-wiretap",
        "unknown",
        "controller-manager/deployment-controller",
    ]:
        assert not third_party(own), own
    for kubernetes in ["apiserver", "kube-proxy", "cloud-controller-manager/service-controller"]:
        assert not third_party(kubernetes), kubernetes
