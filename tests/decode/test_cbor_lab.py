"""Against a real lab of the default release with CBOR on (`lab up --cbor`): CBOR decodes to the
server's JSON.

The lab runs with CBORServingAndStorage on the API server and ClientsAllowCBOR /
ClientsPreferCBOR in its clients, every client through the wiretap, recording. Objects of many
kinds are created (fixtures/lab-objects.yaml, its 1.20 API versions moved to the ones the
default release serves, and a custom resource); then every resource the lab serves is listed,
and its first object fetched, once as JSON and once as CBOR (`Accept: application/cbor`), and
the decoded CBOR must equal the JSON, key order included. Watch streams (`application/cbor-seq`)
are compared event by event with the JSON watch of the same resourceVersion, watch lists too.
The recording shows which components really speak CBOR, that their informers start with watch
lists, and that no Secret value reached it.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from k8s_wiretap.capture.reader import Recording, load
from k8s_wiretap.capture.redact import Redactor
from k8s_wiretap.decode.body import decode_body
from k8s_wiretap.decode.cbor import decode_cbor, decode_cbor_watch_event
from k8s_wiretap.decode.watch import decode_stream, exchange_events, is_watch_list
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.kube.client import ApiClient, Response
from k8s_wiretap.kube.requestinfo import parse_request
from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.lab.layout import Layout
from k8s_wiretap.lab.readiness import admin_client
from k8s_wiretap.lab.releases import CURRENT
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.lab.versions import resolve_release
from k8s_wiretap.wire.framing import CborSeqFramer, JsonFramer
from tests.conftest import Kubectl, wait_until
from tests.decode.same import assert_same, difference

pytestmark = pytest.mark.lab  # starts a lab of its own

FIXTURES = Path(__file__).parent / "fixtures"
JSON = "application/json"
CBOR = "application/cbor"
NS = "decode-lab"
ATTEMPTS = 20  # objects change between two requests (leases, status): retry until both agree
# The 1.20 API versions of lab-objects.yaml that the default release no longer serves → the ones it
# does.
MOVED = {
    "batch/v1beta1": "batch/v1",
    "policy/v1beta1": "policy/v1",
    "autoscaling/v2beta2": "autoscaling/v2",
}
SECRET_VALUE = "cbor-wiretap-secret-6f1d"  # must never reach the recording


@dataclass(frozen=True)
class CborLab:
    client: ApiClient
    kubectl: Kubectl
    start: str  # a resourceVersion from before the objects were created
    release: str  # the API server's gitVersion
    recording: Path


def objects_for_137(folder: Path) -> Path:
    documents = [d for d in yaml.safe_load_all((FIXTURES / "lab-objects.yaml").read_text()) if d]
    for document in documents:
        document["apiVersion"] = MOVED.get(document["apiVersion"], document["apiVersion"])
        if document["kind"] == "CustomResourceDefinition":  # now: an integer's bounds are too
            schema = document["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
            schema["properties"]["spec"]["properties"]["size"]["maximum"] = 10
    path = folder / f"lab-objects-{CURRENT}.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    return path


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CborLab]:
    folder = tmp_path_factory.mktemp("cbor")
    release = resolve_release(CURRENT, lookup=False)
    lab = Lab(folder / "lab")
    record = folder / "cbor.jsonl"
    state = lab.up(UpOptions(build=False, kube_version=str(release), cbor=True, record=record))
    try:
        yield _prepare(state, folder, record)
    finally:
        lab.down()


def _prepare(state: LabState, folder: Path, record: Path) -> CborLab:
    client = admin_client(Layout(Path(state.kubeconfig).parent, state.ports))
    kubectl = Kubectl(
        state.kubeconfig,
        folder / "cache",
        binary=str(Path(state.kubeconfig).parent / "bin" / "kubectl"),
    )
    start = client.get("/api/v1/configmaps?limit=1").json()["metadata"]["resourceVersion"]
    kubectl("apply", "-f", str(objects_for_137(folder)))
    kubectl("wait", "--for", "condition=established", "crd/widgets.decode.wiretap.example")
    kubectl("apply", "-f", str(FIXTURES / "lab-widget.yaml"))
    kubectl("-n", NS, "create", "secret", "generic", "cbor", f"--from-literal=key={SECRET_VALUE}")
    kubectl("-n", NS, "create", "configmap", "changing", "--from-literal=step=1")
    kubectl("-n", NS, "patch", "configmap", "changing", "-p", '{"data": {"step": "2"}}')
    kubectl("-n", NS, "delete", "configmap", "changing")

    def running() -> bool:
        pods = client.get(f"/api/v1/namespaces/{NS}/pods").json()["items"]
        phases = [p.get("status", {}).get("phase") for p in pods]
        return len(pods) >= 5 and phases.count("Running") >= 3

    wait_until(running, 120, "the lab's pods to run")
    release = str(client.get("/version").json()["gitVersion"])
    return CborLab(client, kubectl, start, release, record)


def fetch(client: ApiClient, path: str, accept: str) -> Response:
    return client.get(path, accept=accept, timeout=30)


def resource_version(document: Any) -> str | None:
    metadata = document.get("metadata") if isinstance(document, dict) else None
    return metadata.get("resourceVersion") if isinstance(metadata, dict) else None


def compare(setup: CborLab, path: str, json_accept: str = JSON, cbor_accept: str = CBOR) -> Any:
    """Decode the CBOR response and check it against the JSON one; return the JSON."""
    for _ in range(ATTEMPTS):
        as_json = fetch(setup.client, path, json_accept)
        as_cbor = fetch(setup.client, path, cbor_accept)
        assert as_json.status == as_cbor.status, path
        assert as_cbor.headers["Content-Type"] == CBOR, (path, as_cbor.headers)
        assert as_cbor.body[:3] == b"\xd9\xd9\xf7"  # self-described CBOR
        want = as_json.json()
        got = decode_cbor(as_cbor.body, release=setup.release)
        if resource_version(want) == resource_version(got):
            found = difference(got, want)
            if found is not None and resource_version(want) is None:
                continue  # made anew for each request (componentstatuses, probed in parallel)
            assert found is None, f"{path}: {found}"
            return want
    raise AssertionError(f"{path}: the object kept changing")


def listable(client: ApiClient) -> list[str]:
    """Every collection the lab serves, in every group version."""
    versions = ["/api/v1"]
    for group in client.get("/apis").json()["groups"]:
        versions += [f"/apis/{v['groupVersion']}" for v in group["versions"]]
    paths = []
    for version in versions:
        for resource in client.get(version).json()["resources"]:
            if "/" not in resource["name"] and "list" in resource.get("verbs", []):
                paths.append(f"{version}/{resource['name']}")
    return paths


def item_path(collection: str, metadata: dict[str, Any]) -> str:
    version, resource = collection.rsplit("/", 1)
    namespace = metadata.get("namespace")
    where = f"{version}/namespaces/{namespace}/{resource}" if namespace else collection
    return f"{where}/{metadata['name']}"


def test_every_resource_listed_and_fetched_as_cbor_is_its_json(setup: CborLab) -> None:
    paths = listable(setup.client)
    assert len(paths) > 60, paths
    kinds = set()
    for path in paths:
        listed = compare(setup, path)
        kinds.add(listed["kind"])
        items = listed.get("items") or []
        if items:
            compare(setup, item_path(path, items[0]["metadata"]))
    assert {"PodList", "SecretList", "WidgetList", "CustomResourceDefinitionList"} <= kinds


def test_the_objects_show_what_cbor_rules_are_about(setup: CborLab) -> None:
    configmap = compare(setup, f"/api/v1/namespaces/{NS}/configmaps/settings")
    assert configmap["binaryData"]["blob"] == "AAEC/w=="  # []byte: tag 22, base64 in JSON
    pod = compare(setup, f"/api/v1/namespaces/{NS}/pods/rich")
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "10m", "memory": "16Mi"}
    widget = compare(setup, f"/apis/decode.wiretap.example/v1/namespaces/{NS}/widgets/w1")
    assert list(widget) == sorted(widget)  # unstructured: encoding/json sorts the map
    deployment = compare(setup, f"/apis/apps/v1/namespaces/{NS}/deployments/web")
    assert next(iter(deployment["metadata"]["managedFields"][0]["fieldsV1"])) == "f:metadata"
    compare(setup, f"/apis/apps/v1/namespaces/{NS}/deployments/web/scale")


@pytest.mark.parametrize("path", ["/api", "/apis", "/api/v1", "/apis/apps/v1"])
def test_discovery(setup: CborLab, path: str) -> None:
    compare(setup, path)


def test_partial_object_metadata(setup: CborLab) -> None:
    params = ";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
    listed = compare(setup, f"/api/v1/namespaces/{NS}/configmaps", JSON + params, CBOR + params)
    assert listed["items"][0]["kind"] == "PartialObjectMetadata"


@pytest.mark.parametrize(
    ("path", "code"),
    [
        (f"/api/v1/namespaces/{NS}/pods/missing", 404),
        ("/api/v1/pods?labelSelector=a%20b%20c", 400),
    ],
)
def test_errors_are_statuses(setup: CborLab, path: str, code: int) -> None:
    status = compare(setup, path)
    assert (status["kind"], status["code"]) == ("Status", code)


def test_cbor_refused_is_a_cbor_status(setup: CborLab) -> None:
    response = fetch(setup.client, "/version", CBOR)
    assert response.status == 406
    decoded = decode_body(response.body, response.headers["Content-Type"], release=setup.release)
    assert decoded.format == "cbor"
    assert (decoded.value["kind"], decoded.value["code"]) == ("Status", 406)
    tables = fetch(
        setup.client, f"/api/v1/namespaces/{NS}/pods", CBOR + ";as=Table;v=v1;g=meta.k8s.io"
    )
    assert tables.status == 406  # Tables are served as JSON and YAML only; the 406 is JSON


def test_cut_cbor_is_undecodable_with_a_reason(setup: CborLab) -> None:
    body = fetch(setup.client, f"/api/v1/namespaces/{NS}/pods/rich", CBOR).body
    decoded = decode_body(body[:-7], CBOR, release=setup.release)
    assert decoded.error is not None and "undecodable: " in decoded.error
    assert "cut short" in decoded.error


def watch(client: ApiClient, path: str, accept: str, release: str) -> list[Any]:
    response = client.get(path, accept=accept, timeout=30)
    assert response.status == 200, response.body[:300]
    if accept.startswith(JSON):
        framer: JsonFramer | CborSeqFramer = JsonFramer()
        decode: Callable[[bytes], Any] = json.loads
    else:
        assert response.headers["Content-Type"] == "application/cbor-seq"
        framer = CborSeqFramer()
        decode = lambda frame: decode_cbor_watch_event(frame, release=release)  # noqa: E731
    frames = framer.feed(response.body)
    assert not framer.flush()
    return [decode(frame) for frame in frames]


def both_watches(setup: CborLab, path: str) -> tuple[list[Any], list[Any]]:
    results: dict[str, list[Any]] = {}

    def run(accept: str) -> None:
        results[accept] = watch(setup.client, path, accept, setup.release)

    threads = [threading.Thread(target=run, args=(accept,)) for accept in (JSON, CBOR)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results[JSON], results[CBOR]


def same_events(from_json: list[Any], from_cbor: list[Any]) -> int:
    common = min(len(from_json), len(from_cbor))  # an event may land in one stream only
    assert common >= 1, (len(from_json), len(from_cbor))
    for got, want in zip(from_cbor[:common], from_json[:common], strict=True):
        found = difference(got, want)
        assert found is None, f"{want['type']} {resource_version(want['object'])}: {found}"
    return common


@pytest.mark.parametrize(
    "path",
    [
        f"/api/v1/namespaces/{NS}/configmaps",
        f"/api/v1/namespaces/{NS}/pods",
        f"/api/v1/namespaces/{NS}/secrets",
        f"/apis/apps/v1/namespaces/{NS}/deployments",
        f"/apis/decode.wiretap.example/v1/namespaces/{NS}/widgets",
        "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
    ],
)
def test_watch_stream(setup: CborLab, path: str) -> None:
    query = f"{path}?watch=1&resourceVersion={setup.start}&timeoutSeconds=2"
    from_json, from_cbor = both_watches(setup, query)
    common = same_events(from_json, from_cbor)
    types = {event["type"] for event in from_json[:common]}
    if path.endswith("/configmaps"):
        assert {"ADDED", "MODIFIED", "DELETED"} <= types


def test_watch_list_streams_agree_and_mark_their_phases(setup: CborLab) -> None:
    path = (
        f"/api/v1/namespaces/{NS}/configmaps?watch=1&sendInitialEvents=true"
        "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=2"
    )
    from_json, from_cbor = both_watches(setup, path)
    assert same_events(from_json, from_cbor) >= 3
    response = fetch(setup.client, path, CBOR)
    events = list(decode_stream(response.body, response.headers["Content-Type"], setup.release))
    phases = [event.phase for event in events]
    end = phases.index("initial-end")
    assert end >= 2 and set(phases[:end]) == {"initial"} and set(phases[end + 1 :]) <= {"change"}
    assert {event.name for event in events[:end]} >= {"settings", "empty"}
    assert events[end].type == "BOOKMARK" and events[end].ends_initial_events


# -- the recording --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def recording(setup: CborLab) -> Recording:
    wait_until(lambda: bool(cbor_secret_events(load(setup.recording))), 60, "the secret's event")
    return load(setup.recording)


def cbor_secret_events(recording: Recording) -> list[dict[str, Any]]:
    """The secret `cbor` as the controller manager's secrets watch (CBOR) recorded it."""
    found = []
    for exchange in recording.exchanges:
        if exchange.info.resource != "secrets" or "cbor-seq" not in exchange.response_header(
            "content-type"
        ):
            continue
        for event in exchange_events(exchange, release=CURRENT):
            obj = event.object if isinstance(event.object, dict) else {}
            if (obj.get("metadata") or {}).get("name") == "cbor":
                found.append(obj)
    return found


def agent(exchange: Any) -> str:
    return str(exchange.request_header("user-agent")).split("/")[0]


def test_the_controller_manager_and_scheduler_speak_cbor_the_kubelet_protobuf(
    recording: Recording,
) -> None:
    types: dict[str, set[str]] = {}
    for exchange in recording.exchanges:
        kind = exchange.response_header("content-type").split(";")[0]
        types.setdefault(agent(exchange), set()).add(kind)
    for component in ("kube-controller-manager", "kube-scheduler"):
        assert {"application/cbor", "application/cbor-seq"} <= types[component], types
    assert "application/cbor" not in types["hollow-kubelet"]  # kubemark has no CBOR gates
    applies = [e for e in recording.exchanges if e.method == "PATCH"]
    sent = {e.request_header("content-type").split(";")[0] for e in applies}
    assert "application/apply-patch+cbor" in sent  # server-side apply with ClientsPreferCBOR


def test_every_recorded_cbor_body_and_event_decodes(recording: Recording) -> None:
    bodies = events = 0
    for exchange in recording.exchanges:
        for body, content_type in (
            (exchange.request_body, exchange.request_header("content-type")),
            (exchange.response_body, exchange.response_header("content-type")),
        ):
            if body and body.data and "cbor" in content_type:
                decoded = decode_body(body.data, content_type, release=CURRENT)
                assert decoded.ok, (exchange.path, decoded.error)
                bodies += 1
        if "cbor-seq" in exchange.response_header("content-type"):
            for event in exchange_events(exchange, release=CURRENT):
                assert event.error is None, (exchange.path, event.error)
                events += 1
    assert bodies > 50 and events > 50, (bodies, events)


SELECTORS = ("fieldSelector", "labelSelector")


def test_informers_start_with_watch_lists(recording: Recording) -> None:
    ended: dict[str, int] = {}
    started: set[tuple[str, ...]] = set()
    for exchange in recording.exchanges:
        info = exchange.info
        if info.verb != "watch":
            continue
        who = agent(exchange)
        informer = (who, info.path, *(",".join(info.query.get(s, ())) for s in SELECTORS))
        # a later watch resumes from a resourceVersion, as client-go does when a watch ends, or
        # when its watch list was refused (the kubelet's first one for a pod's ConfigMap can get
        # 403 before the node authorizer has the pod) and it fell back to a list
        if informer in started:
            assert is_watch_list(info) or info.query.get("resourceVersion"), exchange.path
        else:  # an informer's first watch is a watch list
            assert is_watch_list(info), (who, exchange.path)
            started.add(informer)
        phases = [event.phase for event in exchange_events(exchange, release=CURRENT)]
        one_by_one = [  # as a live analysis decodes them, each when it arrives
            event.phase
            for start in range(len(exchange.watch_events()))
            for event in exchange_events(exchange, release=CURRENT, start=start)[:1]
        ]
        assert one_by_one == phases
        if "initial-end" in phases:
            end = phases.index("initial-end")
            assert set(phases[:end]) <= {"initial"} and set(phases[end + 1 :]) <= {"change"}
            ended[who] = ended.get(who, 0) + 1
    assert {"kube-controller-manager", "kube-scheduler", "hollow-kubelet"} <= set(ended), ended


def test_no_secret_value_reaches_the_recording(setup: CborLab, recording: Recording) -> None:
    raw = setup.recording.read_bytes()
    for form in (SECRET_VALUE, base64.b64encode(SECRET_VALUE.encode()).decode()):
        assert form.encode() not in raw
        assert base64.b64encode(form.encode()) not in raw  # inside a base64 body
    secrets = cbor_secret_events(recording)
    assert secrets
    for secret in secrets:
        value = base64.b64decode(secret["data"]["key"])
        assert value.startswith(b"redacted:"), value


def test_redacted_cbor_and_json_secrets_agree(setup: CborLab) -> None:
    path = f"/api/v1/namespaces/{NS}/secrets/token"
    info = parse_request("GET", path)
    redactor = Redactor(b"k" * 32)
    for _ in range(ATTEMPTS):
        as_json, as_cbor = fetch(setup.client, path, JSON), fetch(setup.client, path, CBOR)
        json_body, json_changed = redactor.body(info, JSON, as_json.body)
        cbor_body, cbor_changed = redactor.body(info, CBOR, as_cbor.body)
        assert json_changed and cbor_changed
        want = json.loads(json_body)
        got = decode_cbor(cbor_body, release=setup.release)
        if resource_version(want) == resource_version(got):
            assert_same(got, want)
            assert b"cGFzc3dvcmQ=" not in cbor_body
            assert base64.b64decode(got["data"]["password"]).startswith(b"redacted:")
            return
    raise AssertionError("the secret kept changing")


def test_recorded_cbor_tokens_are_redacted(recording: Recording) -> None:
    """The controller manager asks TokenRequest for each controller's token, in CBOR now."""
    tokens = []
    for exchange in recording.exchanges:
        if exchange.info.subresource == "token" and exchange.response_body:
            content_type = exchange.response_header("content-type")
            if content_type == CBOR:
                decoded = decode_body(exchange.response_body.data, content_type, release=CURRENT)
                tokens.append(decoded.value["status"]["token"])
    assert len(tokens) >= 5
    assert all(token.startswith("redacted:") for token in tokens), tokens


def test_cbor_server_side_applies_replay_to_what_the_server_did(recording: Recording) -> None:
    """A CBOR apply body is decoded like any other body, then replayed as an apply."""
    analysis = Analysis.of(recording)
    applies = [
        e
        for e in analysis.exchanges
        if e.method == "PATCH" and "apply-patch+cbor" in e.request_header("content-type")
    ]
    assert applies
    checked = 0
    for exchange in applies:
        replay = analysis.replay(exchange)
        assert replay is not None and replay.type == "apply", exchange.path
        if replay.before is None:  # the first apply of an object: nothing to replay on
            continue
        assert replay.matches_server is True, (exchange.path, replay.mismatches, replay.note)
        checked += 1
    assert checked, [analysis.replay(e).note for e in applies]  # type: ignore[union-attr]
