"""What the API server serves, as data: the built-in table is the lab's own discovery."""

from __future__ import annotations

import json
from pathlib import Path

from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.kube.client import ApiClient
from k8s_wiretap.kube.refs import ObjectRef
from k8s_wiretap.kube.resources import DISCOVERY_FILE, Resources
from k8s_wiretap.lab.state import LabState
from tests.conftest import load_script
from tests.recorded import story


def admin(lab: LabState) -> ApiClient:
    pki = Path(lab.kubeconfig).parent / "pki"
    return ApiClient(lab.server, pki / "ca.crt", pki / "admin.crt", pki / "admin.key")


def test_the_built_in_table_is_what_the_lab_api_server_serves(lab: LabState) -> None:
    """What the lab serves, less what custom resource definitions other tests made add."""
    client = admin(lab)
    crds = client.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions").json()
    custom = {crd["spec"]["group"] for crd in crds["items"]}
    served = load_script("generate_discovery").discovery(client)
    served["preferred"] = {g: v for g, v in served["preferred"].items() if g not in custom}
    served["resources"] = [r for r in served["resources"] if r["group"] not in custom]
    assert served == json.loads(DISCOVERY_FILE.read_text())


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


def test_a_recorded_discovery_document_teaches_custom_resources() -> None:
    resources = Resources.builtin()
    analysis = Analysis.of(story())
    for exchange in analysis.exchanges:
        if exchange.path.startswith("/apis/workshop.example.com/v1?") and exchange.status == 200:
            assert resources.learn(analysis.response_body(exchange).value)
    greetings = resources.get("workshop.example.com", "greetings")
    assert greetings is not None and greetings.kind == "Greeting" and greetings.namespaced


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
