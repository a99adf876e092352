"""What the API server serves, as data: the built-in table is the lab's own discovery."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.capture.reader import load
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.kube.client import ApiClient
from k8s_wiretap.kube.refs import ObjectRef
from k8s_wiretap.kube.release import Release
from k8s_wiretap.kube.resources import Resources, discovery_file
from k8s_wiretap.lab.state import LabState
from tests.conftest import load_script
from tests.recorded import STORY, STORY_1_20


def admin(lab: LabState) -> ApiClient:
    pki = Path(lab.kubeconfig).parent / "pki"
    return ApiClient(lab.server, pki / "ca.crt", pki / "admin.crt", pki / "admin.key")


def test_the_built_in_table_is_what_the_lab_api_server_serves(lab: LabState) -> None:
    """What the lab serves (its release's own file), less what custom resource definitions
    other tests made add."""
    client = admin(lab)
    crds = client.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions").json()
    custom = {crd["spec"]["group"] for crd in crds["items"]}
    served = load_script("generate_discovery").discovery(client)
    served["preferred"] = {g: v for g, v in served["preferred"].items() if g not in custom}
    served["resources"] = [r for r in served["resources"] if r["group"] not in custom]
    minor = Release.parse(lab.kube_version).minor_version
    assert served == json.loads(discovery_file(minor).read_text())


def test_kinds_and_scopes_come_from_discovery_not_from_guessing() -> None:
    resources = Resources.builtin()
    assert resources.kind_of("", "endpoints") == "Endpoints"
    assert resources.kind_of("networking.k8s.io", "ingresses") == "Ingress"
    assert resources.kind_of("", "podsecuritypolicies") is None  # not a core resource
    assert resources.kind_of("workshop.example.com", "greetings") is None  # not built in
    deployments = resources.get("apps", "deployments")
    assert deployments is not None and deployments.version == "v1" and deployments.scalable
    assert deployments.namespaced and "patch" in deployments.verbs
    nodes = resources.get("", "nodes")
    assert nodes is not None and not nodes.namespaced and not nodes.scalable


@pytest.mark.parametrize(
    ("recording", "documents"),
    [(STORY, ("/apis",)), (STORY_1_20, ("/apis/workshop.example.com/v1",))],
    ids=["aggregated-default", "resource-list-1.20"],
)
def test_a_recorded_discovery_document_teaches_custom_resources(
    recording: Path, documents: tuple[str, ...]
) -> None:
    """The default release's kubectl reads aggregated discovery (`/apis` as
    APIGroupDiscoveryList); 1.20's kubectl one APIResourceList per group version."""
    resources = Resources.builtin()
    analysis = Analysis.of(load(recording))
    learned = [
        resources.learn(analysis.response_body(exchange).value)
        for exchange in analysis.exchanges
        if exchange.path.split("?")[0] in documents and exchange.status == 200
    ]
    assert learned and all(learned)
    greetings = resources.get("workshop.example.com", "greetings")
    assert greetings is not None and greetings.kind == "Greeting" and greetings.namespaced
    assert greetings.version == "v1" and "patch" in greetings.verbs


def test_aggregated_discovery_keeps_each_groups_preferred_version() -> None:
    resources = Resources()
    resources.learn(aggregated_apis())
    hpa = resources.get("autoscaling", "horizontalpodautoscalers")
    assert hpa is not None and hpa.version == "v2" and hpa.subresources == ("status",)
    scale = resources.get("apps", "deployments")
    assert scale is not None and scale.scalable and scale.kind == "Deployment"
    nodes = resources.get("", "nodes")
    assert nodes is None  # core lives in `/api`, not `/apis`


def aggregated_apis() -> dict[str, Any]:
    analysis = Analysis.of(load(STORY))
    for exchange in analysis.exchanges:
        if exchange.path.split("?")[0] == "/apis" and exchange.status == 200:
            document: dict[str, Any] = analysis.response_body(exchange).value
            assert document["kind"] == "APIGroupDiscoveryList"
            return document
    raise AssertionError("no /apis in the story")


def test_one_reference_however_the_object_was_seen() -> None:
    resources = Resources.builtin()
    namespace = {"kind": "Namespace", "metadata": {"name": "default"}}
    # GET /api/v1/namespaces/default: RequestInfo names it in the namespace field too
    by_path = resources.ref("", "namespaces", "default", "default")
    by_object = resources.ref("", "namespaces", "", "", namespace)
    assert by_path == by_object == ObjectRef("", "namespaces", "", "default")
    pod = {"metadata": {"name": "web-1", "namespace": "default"}}
    assert resources.ref("", "pods", "", "", pod) == resources.ref("", "pods", "default", "web-1")
    assert str(resources.ref("apps", "deployments", "default", "web")) == (
        "deployments.apps default/web"
    )


def test_a_type_is_named_by_plural_kind_short_name_or_with_its_group() -> None:
    """As kubectl resolves a type: short names come from discovery (`shortNames`)."""
    resources = Resources.builtin()
    for word in ("deployments", "deployment", "Deployment", "deploy", "deployments.apps"):
        assert [(r.group, r.resource) for r in resources.named(word)] == [("apps", "deployments")]
    assert [r.resource for r in resources.named("no")] == ["nodes"]
    assert [r.group for r in resources.named("events")] == ["", "events.k8s.io"]  # core first
    assert resources.named("ev")[0].group == ""
    assert resources.named("gadget") == []


def widgets(version: str) -> dict[str, Any]:
    """An APIResourceList of a custom group (no preferred version known) serving widgets."""
    return {
        "kind": "APIResourceList",
        "groupVersion": f"example.com/{version}",
        "resources": [{"name": "widgets", "kind": "Widget", "namespaced": True, "verbs": []}],
    }


def test_a_document_learned_again_is_learned_again_once_another_changed_the_table() -> None:
    """Learning a document twice in a row learns nothing more (a discovery poll repeats
    it), but after another document changed what it had put in the table, it wins again."""
    resources = Resources()
    v1, v2 = widgets("v1"), widgets("v2")
    for document, version in ((v1, "v1"), (v1, "v1"), (v2, "v2"), (v1, "v1"), (v2, "v2")):
        assert resources.learn(document)
        learned = resources.get("example.com", "widgets")
        assert learned is not None and learned.version == version
        assert resources.resource_of(f"example.com/{version}", "Widget") == learned
