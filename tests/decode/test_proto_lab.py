"""Against the real API server: each protobuf response decodes to the JSON response it gives.

Objects of many kinds are created with kubectl (fixtures/lab-objects.yaml), then the same
request is made twice, once accepting JSON and once protobuf, and the decoded protobuf must
equal the JSON, key order included: LISTs and GETs, partial object metadata, discovery,
errors (Status), and watch streams replayed from one resourceVersion. Bodies are decoded with
the schema of the lab's release, as its `/version` names it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.decode.protobuf import decode_object, decode_watch_event
from k8s_wiretap.kube.client import ApiClient, Response
from k8s_wiretap.lab.components import NODE_NAME
from k8s_wiretap.lab.layout import Layout
from k8s_wiretap.lab.readiness import admin_client
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.wire.framing import JsonFramer, LengthPrefixFramer
from tests.conftest import Kubectl, wait_until
from tests.decode.same import assert_same, difference

FIXTURES = Path(__file__).parent / "fixtures"
JSON = "application/json"
PROTOBUF = "application/vnd.kubernetes.protobuf"
NS = "decode-lab"
ATTEMPTS = 20  # objects change between two requests (leases, status): retry until both agree


@dataclass(frozen=True)
class Lab:
    client: ApiClient
    kubectl: Kubectl
    start: str  # a resourceVersion from before the objects were created
    release: str  # the API server's gitVersion ("v1.20.2")


def resource_version(document: Any) -> str | None:
    metadata = document.get("metadata") if isinstance(document, dict) else None
    return metadata.get("resourceVersion") if isinstance(metadata, dict) else None


def first_name(client: ApiClient, path: str) -> str:
    items = client.get(path).json()["items"]
    assert items, f"nothing at {path}"
    return str(items[0]["metadata"]["name"])


@pytest.fixture(scope="module")
def setup(lab: LabState, kubectl: Kubectl) -> Iterator[Lab]:
    client = admin_client(Layout(Path(lab.kubeconfig).parent, lab.ports))
    start = client.get("/api/v1/configmaps?limit=1").json()["metadata"]["resourceVersion"]
    kubectl("apply", "-f", str(FIXTURES / "lab-objects.yaml"))
    kubectl("wait", "--for", "condition=established", "crd/widgets.decode.wiretap.example")
    kubectl("apply", "-f", str(FIXTURES / "lab-widget.yaml"))
    kubectl("-n", NS, "create", "configmap", "changing", "--from-literal=step=1")
    kubectl("-n", NS, "patch", "configmap", "changing", "-p", '{"data": {"step": "2"}}')
    kubectl("-n", NS, "delete", "configmap", "changing")

    def running() -> bool:
        pods = client.get(f"/api/v1/namespaces/{NS}/pods").json()["items"]
        phases = [p.get("status", {}).get("phase") for p in pods]
        return len(pods) >= 5 and phases.count("Running") >= 3

    wait_until(running, 60, "the lab's pods to run")
    release = str(client.get("/version").json()["gitVersion"])
    yield Lab(client, kubectl, start, release)
    kubectl("delete", "--wait=false", "-f", str(FIXTURES / "lab-objects.yaml"))


def fetch(client: ApiClient, path: str, accept: str) -> Response:
    return client.get(path, accept=accept, timeout=30)


def compare(setup: Lab, path: str, json_accept: str = JSON, pb_accept: str = PROTOBUF) -> Any:
    """Decode the protobuf response and check it against the JSON one; return the JSON."""
    client = setup.client
    for _ in range(ATTEMPTS):
        as_json, as_protobuf = fetch(client, path, json_accept), fetch(client, path, pb_accept)
        assert as_json.status == as_protobuf.status
        assert as_protobuf.headers["Content-Type"].startswith(PROTOBUF), as_protobuf.headers
        want = as_json.json()
        got = decode_object(as_protobuf.body, release=setup.release)
        if resource_version(want) == resource_version(got):
            assert_same(got, want)
            return want
    raise AssertionError(f"{path}: the object kept changing")


LISTS = [
    "/api/v1/namespaces",
    "/api/v1/nodes",
    "/api/v1/pods",
    "/api/v1/services",
    "/api/v1/endpoints",
    "/api/v1/configmaps",
    "/api/v1/secrets",
    "/api/v1/serviceaccounts",
    "/api/v1/events",
    "/api/v1/limitranges",
    "/api/v1/resourcequotas",
    "/api/v1/persistentvolumes",
    "/api/v1/persistentvolumeclaims",
    "/api/v1/replicationcontrollers",
    "/api/v1/podtemplates",
    "/apis/events.k8s.io/v1/events",
    "/apis/events.k8s.io/v1beta1/events",
    "/apis/coordination.k8s.io/v1/leases",
    "/apis/apps/v1/deployments",
    "/apis/apps/v1/replicasets",
    "/apis/apps/v1/daemonsets",
    "/apis/apps/v1/statefulsets",
    "/apis/apps/v1/controllerrevisions",
    "/apis/batch/v1/jobs",
    "/apis/batch/v1beta1/cronjobs",
    "/apis/rbac.authorization.k8s.io/v1/roles",
    "/apis/rbac.authorization.k8s.io/v1/rolebindings",
    "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "/apis/rbac.authorization.k8s.io/v1beta1/clusterroles",
    "/apis/apiregistration.k8s.io/v1/apiservices",
    "/apis/apiregistration.k8s.io/v1beta1/apiservices",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    "/apis/apiextensions.k8s.io/v1beta1/customresourcedefinitions",
    "/apis/networking.k8s.io/v1/ingresses",
    "/apis/networking.k8s.io/v1/ingressclasses",
    "/apis/networking.k8s.io/v1/networkpolicies",
    "/apis/extensions/v1beta1/ingresses",
    "/apis/policy/v1beta1/poddisruptionbudgets",
    "/apis/autoscaling/v1/horizontalpodautoscalers",
    "/apis/autoscaling/v2beta1/horizontalpodautoscalers",
    "/apis/autoscaling/v2beta2/horizontalpodautoscalers",
    "/apis/storage.k8s.io/v1/storageclasses",
    "/apis/storage.k8s.io/v1/csinodes",
    "/apis/storage.k8s.io/v1/volumeattachments",
    "/apis/scheduling.k8s.io/v1/priorityclasses",
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
    "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
    "/apis/node.k8s.io/v1/runtimeclasses",
    "/apis/discovery.k8s.io/v1beta1/endpointslices",
    "/apis/flowcontrol.apiserver.k8s.io/v1beta1/flowschemas",
    "/apis/flowcontrol.apiserver.k8s.io/v1beta1/prioritylevelconfigurations",
    "/apis/certificates.k8s.io/v1/certificatesigningrequests",
    f"/api/v1/namespaces/{NS}/pods?labelSelector=nothing%3Dmatches",
]


@pytest.mark.parametrize("path", LISTS)
def test_list(setup: Lab, path: str) -> None:
    compare(setup, path)


GETS = [
    "/api/v1/namespaces/decode-lab",
    f"/api/v1/nodes/{NODE_NAME}",
    f"/api/v1/namespaces/{NS}/pods/rich",
    f"/api/v1/namespaces/{NS}/pods/<first>",
    f"/api/v1/namespaces/{NS}/services/web",
    f"/api/v1/namespaces/{NS}/services/headless",
    f"/api/v1/namespaces/{NS}/services/external",
    f"/api/v1/namespaces/{NS}/endpoints/web",
    f"/api/v1/namespaces/{NS}/configmaps/settings",
    f"/api/v1/namespaces/{NS}/configmaps/empty",
    f"/api/v1/namespaces/{NS}/secrets/token",
    f"/api/v1/namespaces/{NS}/serviceaccounts/robot",
    f"/api/v1/namespaces/{NS}/events/hello.2",
    f"/api/v1/namespaces/{NS}/limitranges/limits",
    f"/api/v1/namespaces/{NS}/resourcequotas/quota",
    f"/api/v1/namespaces/{NS}/persistentvolumeclaims/claim",
    "/api/v1/persistentvolumes/decode-pv1",
    f"/apis/events.k8s.io/v1/namespaces/{NS}/events/hello.1",
    f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases/lock",
    f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{NODE_NAME}",
    f"/apis/apps/v1/namespaces/{NS}/deployments/web",
    f"/apis/apps/v1/namespaces/{NS}/deployments/web/scale",
    f"/apis/apps/v1/namespaces/{NS}/replicasets/<first>",
    f"/apis/apps/v1/namespaces/{NS}/daemonsets/agent",
    f"/apis/apps/v1/namespaces/{NS}/statefulsets/db",
    f"/apis/apps/v1/namespaces/{NS}/controllerrevisions/<first>",
    f"/apis/batch/v1/namespaces/{NS}/jobs/once",
    f"/apis/batch/v1beta1/namespaces/{NS}/cronjobs/nightly",
    f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/roles/reader",
    f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/rolebindings/reader",
    "/apis/rbac.authorization.k8s.io/v1/clusterroles/decode-aggregate",
    "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/decode-part",
    "/apis/apiregistration.k8s.io/v1/apiservices/v1.apps",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.decode.wiretap.example",
    f"/apis/networking.k8s.io/v1/namespaces/{NS}/ingresses/web",
    f"/apis/networking.k8s.io/v1/namespaces/{NS}/networkpolicies/deny",
    f"/apis/policy/v1beta1/namespaces/{NS}/poddisruptionbudgets/web",
    f"/apis/autoscaling/v1/namespaces/{NS}/horizontalpodautoscalers/web",
    f"/apis/autoscaling/v2beta2/namespaces/{NS}/horizontalpodautoscalers/web2",
    "/apis/storage.k8s.io/v1/storageclasses/decode-slow",
    "/apis/scheduling.k8s.io/v1/priorityclasses/decode-low",
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/decode-hook",
    "/apis/node.k8s.io/v1/runtimeclasses/decode-gvisor",
]


@pytest.mark.parametrize("path", GETS)
def test_get(setup: Lab, path: str) -> None:
    if path.endswith("/<first>"):
        collection = path.removesuffix("/<first>")
        path = f"{collection}/{first_name(setup.client, collection)}"
    compare(setup, path)


def test_the_objects_show_what_json_rules_are_about(setup: Lab) -> None:
    configmap = compare(setup, f"/api/v1/namespaces/{NS}/configmaps/settings")
    assert configmap["data"]["empty"] == "" and configmap["binaryData"]["blob"] == "AAEC/w=="
    pod = compare(setup, f"/api/v1/namespaces/{NS}/pods/rich")
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "10m", "memory": "16Mi"}
    assert pod["spec"]["securityContext"]["supplementalGroups"] == [3000, 0]
    statefulset = compare(setup, f"/apis/apps/v1/namespaces/{NS}/statefulsets/db")
    template = statefulset["spec"]["volumeClaimTemplates"][0]
    assert list(template)[:2] == ["kind", "apiVersion"]  # set by the server's conversion
    empty = compare(setup, f"/api/v1/namespaces/{NS}/pods?labelSelector=nothing%3Dmatches")
    assert empty["items"] == []


def partial(kind: str, version: str) -> tuple[str, str]:
    params = f";as={kind};g=meta.k8s.io;v={version}"
    return JSON + params, PROTOBUF + params


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
def test_partial_object_metadata(setup: Lab, version: str) -> None:
    listed = compare(
        setup,
        f"/api/v1/namespaces/{NS}/configmaps",
        *partial("PartialObjectMetadataList", version),
    )
    assert listed["items"][0]["kind"] == "PartialObjectMetadata"
    empty = compare(
        setup,
        "/api/v1/namespaces/nothing-here/configmaps",
        *partial("PartialObjectMetadataList", version),
    )
    assert empty["items"] is None  # built after the handler's nil → [] rule
    one = compare(
        setup,
        f"/apis/apps/v1/namespaces/{NS}/deployments/web",
        *partial("PartialObjectMetadata", version),
    )
    assert one["apiVersion"] == f"meta.k8s.io/{version}"


@pytest.mark.parametrize(
    "path",
    [
        "/api",
        "/apis",
        "/api/v1",
        "/apis/apps/v1",
        "/apis/apiextensions.k8s.io/v1",
        "/apis/decode.wiretap.example/v1",
    ],
)
def test_discovery(setup: Lab, path: str) -> None:
    compare(setup, path)


@pytest.mark.parametrize(
    ("path", "code"),
    [
        (f"/api/v1/namespaces/{NS}/pods/missing", 404),
        ("/apis/apps/v1/namespaces/x/nothings", 404),
        ("/api/v1/pods?labelSelector=a%20b%20c", 400),
        (f"/api/v1/namespaces/{NS}/pods?fieldSelector=spec.nothing%3Dx", 400),
    ],
)
def test_errors_are_statuses(setup: Lab, path: str, code: int) -> None:
    status = compare(setup, path)
    assert (status["kind"], status["apiVersion"], status["code"]) == ("Status", "v1", code)


def test_protobuf_refused_is_a_protobuf_status(setup: Lab) -> None:
    for path in [f"/apis/decode.wiretap.example/v1/namespaces/{NS}/widgets/w1", "/version"]:
        response = fetch(setup.client, path, PROTOBUF)  # custom resources and /version: JSON only
        assert response.status == 406
        status = decode_object(response.body, release=setup.release)
        assert (status["kind"], status["reason"], status["code"]) == (
            "Status",
            "NotAcceptable",
            406,
        )
    assert (
        fetch(
            setup.client, f"/apis/decode.wiretap.example/v1/namespaces/{NS}/widgets/w1", JSON
        ).status
        == 200
    )


def watch(client: ApiClient, path: str, accept: str, decode: Callable[[bytes], Any]) -> list[Any]:
    response = client.get(path, accept=accept, timeout=30)
    assert response.status == 200, response.body[:300]
    framer = JsonFramer() if accept.startswith(JSON) else LengthPrefixFramer()
    frames = framer.feed(response.body)
    assert not framer.flush()
    return [decode(frame) for frame in frames]


def both_watches(
    setup: Lab, path: str, json_accept: str, pb_accept: str
) -> tuple[list[Any], list[Any]]:
    """The JSON and the protobuf watch of `path`, run at the same time."""
    results: dict[str, list[Any]] = {}

    def run(name: str, accept: str, decode: Callable[[bytes], Any]) -> None:
        results[name] = watch(setup.client, path, accept, decode)

    def from_protobuf(frame: bytes) -> Any:
        return decode_watch_event(frame, release=setup.release)

    threads = [
        threading.Thread(target=run, args=("json", json_accept, json.loads)),
        threading.Thread(target=run, args=("protobuf", pb_accept, from_protobuf)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results["json"], results["protobuf"]


WATCHES = [
    f"/api/v1/namespaces/{NS}/configmaps",
    f"/api/v1/namespaces/{NS}/pods",
    f"/apis/apps/v1/namespaces/{NS}/deployments",
    f"/apis/apps/v1/namespaces/{NS}/statefulsets",
    f"/api/v1/namespaces/{NS}/events",
    "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
]


@pytest.mark.parametrize("path", WATCHES)
@pytest.mark.parametrize("as_partial", [False, True], ids=["objects", "partial"])
def test_watch_stream(setup: Lab, path: str, as_partial: bool) -> None:
    accepts = partial("PartialObjectMetadata", "v1") if as_partial else (JSON, PROTOBUF)
    query = f"{path}?watch=1&resourceVersion={setup.start}&timeoutSeconds=2"
    from_json, from_protobuf = both_watches(setup, query, *accepts)
    common = min(len(from_json), len(from_protobuf))  # an event may land in one stream only
    assert common >= 1, (len(from_json), len(from_protobuf))
    for got, want in zip(from_protobuf[:common], from_json[:common], strict=True):
        found = difference(got, want)
        assert found is None, f"{want['type']} {resource_version(want['object'])}: {found}"
    types = {event["type"] for event in from_json[:common]}
    if path.endswith("/configmaps"):
        assert {"ADDED", "MODIFIED", "DELETED"} <= types
    if path.endswith("/pods"):
        assert "MODIFIED" in types  # the scheduler's binding, the kubelet's status
