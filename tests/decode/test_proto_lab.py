"""Against real API servers of both releases: each protobuf response decodes to its JSON twin.

Each release's lab gets its own objects of every kind it can hold (fixtures/lab-objects.yaml for
1.20, the newest fixtures/lab-objects-MINOR.yaml for the default release, with the kinds and
fields added since), then the same request is made twice, once accepting JSON and once protobuf,
and the decoded protobuf must equal the JSON, key order included, with nothing decoded without a
schema: every resource the lab's discovery lists, at every group version it serves; every object
of the fixture and its subresources; every object in the test namespace and the first of every
other list; partial object metadata, discovery, errors (Status), and watch streams replayed from
one resourceVersion — on the default release watch lists too, plain and gzipped, with their
phases. Resources served as JSON only (custom resources) are checked to say so (406 in
protobuf). Bodies are decoded with the schema of the lab's release, as its `/version` names it.

The default release's lab is the session's (tests/conftest.py); the 1.20 lab is this module's own.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from k8s_wiretap.decode.protobuf import decode_object
from k8s_wiretap.decode.watch import decode_stream, is_watch_list
from k8s_wiretap.kube.release import CURRENT as CURRENT_RELEASE
from k8s_wiretap.kube.release import Release
from k8s_wiretap.kube.requestinfo import parse_request
from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.lab.components import NODE_NAME
from k8s_wiretap.lab.layout import Layout
from k8s_wiretap.lab.readiness import admin_client
from k8s_wiretap.lab.state import LabState
from tests.conftest import Kubectl, wait_until
from tests.decode.protolab import (
    ATTEMPTS,
    JSON,
    NS,
    PROTOBUF,
    ProtoLab,
    Resource,
    both,
    compare,
    custom_groups,
    discover,
    events_differ,
    fallbacks,
    fetch,
    gzip_watch,
    left_out,
    refused_as_protobuf,
    watch,
)

pytestmark = pytest.mark.lab  # starts a lab of its own

FIXTURES = Path(__file__).parent / "fixtures"
DEFAULT = CURRENT_RELEASE.minor_version
NEWEST_OBJECTS = max(
    FIXTURES.glob("lab-objects-*.yaml"),
    key=lambda path: Release.parse(path.stem.removeprefix("lab-objects-")),
)
OBJECTS = {DEFAULT: NEWEST_OBJECTS, "1.20": FIXTURES / "lab-objects.yaml"}
SCALED = FIXTURES / "lab-widget-scaled.yaml"  # a custom resource with a scale
# The default release takes the session `lab` by name: its group in a parallel run
# (tests/conftest.py), on the param itself, as a test's own `parametrize` replaces the
# fixture's params and their marks
ON_LAB = pytest.param(DEFAULT, marks=pytest.mark.xdist_group("lab"))
CURRENT = [ON_LAB]  # for tests of what only the current release has (watch lists, gzip)


def pod_runs(lab: ProtoLab, name: str) -> bool:
    pod = lab.client.get(f"/api/v1/namespaces/{NS}/pods/{name}").json()
    return bool(pod.get("status", {}).get("phase") == "Running")


def changes_current(lab: ProtoLab) -> None:
    """What only writes through subresources put on the wire: an ephemeral container (and
    the kubelet's status of it), an in-place resize, an approved CertificateSigningRequest;
    on `dra`, whose claims the scheduler allocated from the fixture's ResourceSlice."""
    wait_until(lambda: pod_runs(lab, "dra"), 60, "pod dra (its claims allocated) to run")
    lab.kubectl(
        "-n",
        NS,
        "debug",
        "dra",
        "--image=busybox",
        "--container=debugger",
        "--profile=general",
        "--",
        "true",
    )
    resize = {"spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": "5m"}}}]}}
    lab.kubectl("-n", NS, "patch", "pod", "dra", "--subresource=resize", "-p", json.dumps(resize))
    lab.kubectl("certificate", "approve", "decode-user")

    def debugger_runs() -> bool:
        pod = lab.client.get(f"/api/v1/namespaces/{NS}/pods/dra").json()
        return bool(pod["status"].get("ephemeralContainerStatuses"))

    wait_until(debugger_runs, 60, "the kubelet to report the ephemeral container")


STEPS: dict[str, list[Callable[[ProtoLab], None]]] = {DEFAULT: [changes_current]}


def documents(path: Path) -> list[dict[str, Any]]:
    return [document for document in yaml.safe_load_all(path.read_text()) if document]


def prepare(state: LabState, kubectl: Kubectl, fixture: Path) -> ProtoLab:
    client = admin_client(Layout(Path(state.kubeconfig).parent, state.ports))
    start = client.get("/api/v1/configmaps?limit=1").json()["metadata"]["resourceVersion"]
    kubectl("apply", "-f", str(fixture))
    kubectl("wait", "--for", "condition=established", "crd/widgets.decode.wiretap.example")
    kubectl("apply", "-f", str(FIXTURES / "lab-widget.yaml"), "-f", str(SCALED))
    kubectl("-n", NS, "create", "configmap", "changing", "--from-literal=step=1")
    kubectl("-n", NS, "patch", "configmap", "changing", "-p", '{"data": {"step": "2"}}')
    kubectl("-n", NS, "delete", "configmap", "changing")

    def running() -> bool:
        pods = client.get(f"/api/v1/namespaces/{NS}/pods").json()["items"]
        phases = [p.get("status", {}).get("phase") for p in pods]
        return len(pods) >= 5 and phases.count("Running") >= 3

    wait_until(running, 120, "the lab's pods to run")
    release = str(client.get("/version").json()["gitVersion"])
    lab = ProtoLab(client, kubectl, start, release, fixture)
    for step in STEPS.get(lab.minor_name, []):
        step(lab)
    lab.resources = discover(client)
    lab.custom_groups = custom_groups(client)
    return lab


@pytest.fixture(scope="module", params=[ON_LAB, "1.20"])
def setup(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ProtoLab]:
    if request.param == DEFAULT:
        state: LabState = request.getfixturevalue("lab")
        binary = Path(state.kubeconfig).parent / "bin" / "kubectl"  # the release's own
        cache = tmp_path_factory.mktemp("kubecache-default")
        kubectl = Kubectl(state.kubeconfig, cache, binary=str(binary))
        lab = prepare(state, kubectl, OBJECTS[DEFAULT])
        assert lab.minor == (CURRENT_RELEASE.major, CURRENT_RELEASE.minor), lab.release
        yield lab
        kubectl(
            "delete", "--wait=false", "-f", str(FIXTURES / "lab-widget.yaml"), "-f", str(SCALED)
        )
        kubectl("delete", "--wait=false", "-f", str(OBJECTS[DEFAULT]))
        return
    folder = tmp_path_factory.mktemp("lab120")
    old = Lab(folder / "lab")
    state = old.up(UpOptions(build=False, kube_version="1.20"))
    try:
        lab = prepare(state, Kubectl(state.kubeconfig, folder / "cache"), OBJECTS["1.20"])
        assert lab.minor == (1, 20), lab.release
        yield lab
    finally:
        old.down()


# -- LISTs of everything discovery serves -------------------------------------------------------


# Group versions each release's discovery must have shown among those listed (a check that
# discovery was read whole, not where the lists come from).
EXPECTED_VERSIONS = {
    "1.20": {"batch/v1beta1", "policy/v1beta1", "autoscaling/v2beta2", "extensions/v1beta1"},
    DEFAULT: {
        "resource.k8s.io/v1",
        "flowcontrol.apiserver.k8s.io/v1",
        "storagemigration.k8s.io/v1",
    },
}


def test_every_resource_at_every_served_version_lists_the_same(setup: ProtoLab) -> None:
    listable = [r for r in setup.resources if "list" in r.verbs]
    kinds, refused, failures = set(), [], []
    for resource in listable:
        try:
            if setup.protobuf_served(resource):
                kinds.add(compare(setup, resource.collection)["kind"])
            else:
                refused.append(refused_as_protobuf(setup, resource.collection)["kind"])
        except AssertionError as error:
            failures.append(f"{resource.collection}: {error}")
    assert not failures, "\n".join(failures)
    assert refused == ["WidgetList"]  # the custom resource: JSON only, and says so
    assert {"PodList", "SecretList", "CustomResourceDefinitionList", "EventList"} <= kinds
    versions = {resource.group_version for resource in listable}
    assert EXPECTED_VERSIONS[setup.minor_name] <= versions, versions
    print(
        f"{setup.release}: {len(listable) - len(refused)} lists of {len(kinds)} kinds at "
        f"{len(versions)} group versions compared, {len(refused)} refused as protobuf"
    )


def test_a_list_that_matches_nothing(setup: ProtoLab) -> None:
    empty = compare(setup, f"/api/v1/namespaces/{NS}/pods?labelSelector=nothing%3Dmatches")
    assert empty["items"] == []


# -- every object of the fixture, its subresources, and the objects controllers made ----------


def fixture_paths(setup: ProtoLab) -> list[tuple[Resource, str]]:
    """Each object of the fixture and the scaled widget, by discovery, and its
    subresources that GET an object."""
    paths = []
    for document in documents(setup.fixture) + documents(SCALED):
        resource = setup.resource(document["apiVersion"], document["kind"])
        metadata = document["metadata"]
        path = resource.path(metadata["name"], metadata.get("namespace"))
        paths.append((resource, path))
        paths += [(resource, f"{path}/{sub}") for sub in resource.subresources]
    return paths


def test_every_field_of_the_fixture_reaches_the_wire(setup: ProtoLab) -> None:
    """So that each is decoded: no field the fixture sets is dropped (a feature gate that is
    off drops its fields silently), but for zero values, which omitempty leaves out, and a
    Secret's write-only stringData."""
    dropped = []
    for document in documents(setup.fixture):
        resource = setup.resource(document["apiVersion"], document["kind"])
        metadata = document["metadata"]
        served = compare(setup, resource.path(metadata["name"], metadata.get("namespace")))
        for path, value in left_out(document, served, f"{document['kind']}/{metadata['name']}"):
            if value not in (0, False, "", [], {}) and not path.endswith("Secret/token.stringData"):
                dropped.append(f"{path}: {value!r}")
    assert not dropped, "\n".join(dropped)


def test_every_object_of_the_fixture_and_its_subresources(setup: ProtoLab) -> None:
    failures, compared, refused = [], set(), 0
    for resource, path in fixture_paths(setup):
        try:
            if setup.protobuf_served(resource):
                compare(setup, path)
                compared.add(path)
            else:
                refused_as_protobuf(setup, path)
                refused += 1
        except AssertionError as error:
            failures.append(f"{path}: {error}")
    assert not failures, "\n".join(failures)
    kinds = {document["kind"] for document in documents(setup.fixture)}
    assert len(kinds) >= 30, kinds
    assert any(path.endswith("/deployments/web/scale") for path in compared)
    assert refused == 3  # the widget, its status and its scale: JSON only
    print(f"{setup.release}: {len(compared)} objects and subresources compared, {refused} refused")


def test_every_object_in_the_namespace_and_the_first_of_every_list(setup: ProtoLab) -> None:
    failures, compared = [], 0
    for resource in setup.resources:
        if "list" not in resource.verbs or not setup.protobuf_served(resource):
            continue
        items = setup.client.get(resource.collection).json()["items"]
        ours = [i for i in items if i["metadata"].get("namespace") == NS] or items[:1]
        for item in ours:
            metadata = item["metadata"]
            path = resource.path(metadata["name"], metadata.get("namespace"))
            try:
                compare(setup, path)
                compared += 1
            except AssertionError as error:
                failures.append(f"{path}: {error}")
    assert not failures, "\n".join(failures)
    assert compared > 60, compared
    print(f"{setup.release}: {compared} objects compared")


def test_the_objects_show_what_json_rules_are_about(setup: ProtoLab) -> None:
    configmap = compare(setup, f"/api/v1/namespaces/{NS}/configmaps/settings")
    assert configmap["data"]["empty"] == "" and configmap["binaryData"]["blob"] == "AAEC/w=="
    pod = compare(setup, f"/api/v1/namespaces/{NS}/pods/rich")
    requests = pod["spec"]["containers"][0]["resources"]["requests"]
    assert requests == {"cpu": "10m", "memory": "16Mi"}
    assert pod["spec"]["securityContext"]["supplementalGroups"] == [3000, 0]
    statefulset = compare(setup, f"/apis/apps/v1/namespaces/{NS}/statefulsets/db")
    template = statefulset["spec"]["volumeClaimTemplates"][0]
    assert list(template)[:2] == ["kind", "apiVersion"]  # set by the server's conversion
    node = compare(setup, f"/api/v1/nodes/{NODE_NAME}")
    assert node["status"]["nodeInfo"]["kubeletVersion"].startswith(setup.release.split("-")[0])


@pytest.mark.parametrize("setup", CURRENT, indirect=True)
def test_fields_added_since_120_are_on_the_wire_and_decoded(setup: ProtoLab) -> None:
    pod = compare(setup, f"/api/v1/namespaces/{NS}/pods/rich")
    sidecar = pod["spec"]["initContainers"][1]
    assert (sidecar["name"], sidecar["restartPolicy"]) == ("sidecar", "Always")
    assert pod["spec"]["containers"][0]["resizePolicy"][1] == {
        "resourceName": "memory",
        "restartPolicy": "RestartContainer",
    }
    assert pod["status"]["hostIPs"] == [{"ip": pod["status"]["hostIP"]}]  # set by the kubelet
    gated = compare(setup, f"/api/v1/namespaces/{NS}/pods/gated")
    assert gated["spec"]["schedulingGates"] == [{"name": "example.com/wait"}]
    cron = compare(setup, f"/apis/batch/v1/namespaces/{NS}/cronjobs/nightly")
    assert cron["spec"]["timeZone"] == "Europe/Berlin"
    pdb = compare(setup, f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/web")
    assert pdb["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow"
    job = compare(setup, f"/apis/batch/v1/namespaces/{NS}/jobs/once")
    assert job["spec"]["podFailurePolicy"]["rules"][0]["onExitCodes"]["values"] == [42]
    policy = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/decode-policy"
    assert compare(setup, policy)["spec"]["variables"][0]["name"] == "size"
    slice_ = compare(setup, "/apis/resource.k8s.io/v1/resourceslices/decode-node-1-gpus")
    assert slice_["spec"]["devices"][0]["capacity"]["memory"] == {"value": "40Gi"}
    claim = compare(setup, f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims/gpu")
    assert claim["spec"]["devices"]["requests"][1]["firstAvailable"][0]["count"] == 2
    cidr = compare(setup, "/apis/networking.k8s.io/v1/servicecidrs/decode-extra")
    assert cidr["spec"]["cidrs"] == ["10.250.0.0/24"]
    dra = compare(setup, f"/api/v1/namespaces/{NS}/pods/dra")
    assert dra["spec"]["resources"]["limits"] == {"cpu": "20m", "memory": "32Mi"}  # pod level
    assert dra["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "5m"  # resized
    assert dra["spec"]["ephemeralContainers"][0]["name"] == "debugger"
    assert dra["status"]["ephemeralContainerStatuses"][0]["name"] == "debugger"
    assert dra["status"]["resourceClaimStatuses"][0]["name"] == "from-template"
    single = compare(setup, f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims/single")
    assert single["status"]["allocation"]["devices"]["results"][0]["driver"] == "gpu.example.com"
    assert single["status"]["reservedFor"][0]["name"] == "dra"
    csr = compare(setup, "/apis/certificates.k8s.io/v1/certificatesigningrequests/decode-user")
    assert csr["status"]["conditions"][0]["type"] == "Approved"


# -- partial object metadata, discovery, errors -------------------------------------------------


def partial(kind: str, version: str) -> tuple[str, str]:
    params = f";as={kind};g=meta.k8s.io;v={version}"
    return JSON + params, PROTOBUF + params


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
def test_partial_object_metadata(setup: ProtoLab, version: str) -> None:
    listed = compare(
        setup, f"/api/v1/namespaces/{NS}/configmaps", *partial("PartialObjectMetadataList", version)
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


def test_discovery_of_every_group_version(setup: ProtoLab) -> None:
    roots = ["/api", "/apis"]
    roots += [r.root for r in {r.root: r for r in setup.resources}.values()]
    roots += [f"/apis/{group}/v1" for group in setup.custom_groups]
    for path in roots:
        compare(setup, path)
    assert len(roots) > 20, roots


@pytest.mark.parametrize(
    ("path", "code"),
    [
        (f"/api/v1/namespaces/{NS}/pods/missing", 404),
        ("/apis/apps/v1/namespaces/x/nothings", 404),
        ("/api/v1/pods?labelSelector=a%20b%20c", 400),
        (f"/api/v1/namespaces/{NS}/pods?fieldSelector=spec.nothing%3Dx", 400),
    ],
)
def test_errors_are_statuses(setup: ProtoLab, path: str, code: int) -> None:
    status = compare(setup, path)
    assert (status["kind"], status["apiVersion"], status["code"]) == ("Status", "v1", code)


def test_protobuf_refused_is_a_protobuf_status(setup: ProtoLab) -> None:
    widget = f"/apis/decode.wiretap.example/v1/namespaces/{NS}/widgets/w1"
    refused_as_protobuf(setup, widget)
    # w1 has no .spec.replicas: its scale fails, and the error is protobuf when accepted
    response = fetch(setup.client, f"{widget}/scale", f"{PROTOBUF}, {JSON}")
    assert response.status == 500 and response.headers["Content-Type"] == PROTOBUF
    status = decode_object(response.body, release=setup.release)
    assert not fallbacks(status)
    assert (status["kind"], status["reason"], status["code"]) == ("Status", "InternalError", 500)
    assert status["message"].endswith('the spec replicas field ".spec.replicas" does not exist')
    response = fetch(setup.client, "/version", PROTOBUF)  # /version: JSON only
    assert response.status == 406
    status = decode_object(response.body, release=setup.release)
    assert (status["kind"], status["reason"], status["code"]) == ("Status", "NotAcceptable", 406)
    table = ";as=Table;v=v1;g=meta.k8s.io"  # Tables (kubectl get): JSON only, and say so in it
    response = fetch(setup.client, f"/api/v1/namespaces/{NS}/pods", PROTOBUF + table)
    assert (response.status, response.headers["Content-Type"]) == (406, JSON)
    assert response.json()["reason"] == "NotAcceptable"


# -- watch streams ----------------------------------------------------------------------------

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
def test_watch_stream(setup: ProtoLab, path: str, as_partial: bool) -> None:
    accepts = partial("PartialObjectMetadata", "v1") if as_partial else (JSON, PROTOBUF)
    query = f"{path}?watch=1&resourceVersion={setup.start}&timeoutSeconds=2"
    from_json, from_protobuf = both(lambda accept: watch(setup, query, accept), accepts)
    common = min(len(from_json), len(from_protobuf))  # an event may land in one stream only
    assert common >= 1, (len(from_json), len(from_protobuf))
    found = events_differ(from_protobuf[:common], from_json[:common])
    assert found is None, found
    types = {event["type"] for event in from_json[:common]}
    if path.endswith("/configmaps"):
        assert {"ADDED", "MODIFIED", "DELETED"} <= types
    if path.endswith("/pods"):
        assert "MODIFIED" in types  # the scheduler's binding, the kubelet's status


WATCH_LIST = (
    "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
)
WATCH_LISTS = [
    f"/api/v1/namespaces/{NS}/configmaps",
    f"/api/v1/namespaces/{NS}/pods",
    f"/api/v1/namespaces/{NS}/secrets",
    f"/api/v1/namespaces/{NS}/services",
    f"/apis/apps/v1/namespaces/{NS}/deployments",
    f"/apis/batch/v1/namespaces/{NS}/jobs",
    f"/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices",
    f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims",
    "/api/v1/nodes",
    "/apis/resource.k8s.io/v1/resourceslices",
    "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
    "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
]


def same_watch_lists(setup: ProtoLab, query: str, accepts: tuple[str, str]) -> list[Any]:
    """The JSON and protobuf watch lists of `query`, equal event by event; the JSON events.
    Each starts from the state at its own consistent read: retried until both saw one."""
    found = None
    for _ in range(ATTEMPTS):
        from_json, from_protobuf = both(lambda accept: watch(setup, query, accept), accepts)
        found = events_differ(from_protobuf, from_json)
        if found is None:
            return list(from_json)
    raise AssertionError(f"{query}: {found}")


def without_bookmark_rv(events: list[Any]) -> list[Any]:
    """The events, each BOOKMARK's resourceVersion checked to be there and then left out."""
    kept = []
    for event in events:
        if event["type"] == "BOOKMARK":
            metadata = dict(event["object"]["metadata"])
            assert metadata.pop("resourceVersion").isdigit(), event
            event = {**event, "object": {**event["object"], "metadata": metadata}}
        kept.append(event)
    return kept


@pytest.mark.parametrize("setup", CURRENT, indirect=True)
@pytest.mark.parametrize("path", WATCH_LISTS)
@pytest.mark.parametrize("as_partial", [False, True], ids=["objects", "partial"])
def test_watch_list(setup: ProtoLab, path: str, as_partial: bool) -> None:
    accepts = partial("PartialObjectMetadata", "v1") if as_partial else (JSON, PROTOBUF)
    query = f"{path}?{WATCH_LIST}&timeoutSeconds=2"
    same_watch_lists(setup, query, accepts)
    assert is_watch_list(parse_request("GET", query))
    response = fetch(setup.client, query, accepts[1])
    content_type = response.headers["Content-Type"]
    decoded = list(decode_stream(response.body, content_type, setup.release, watch_list=True))
    assert all(event.error is None for event in decoded)
    assert not any(fallbacks(event.object) for event in decoded)
    phases = [event.phase for event in decoded]
    end = phases.index("initial-end")  # the bookmark is there, and marked
    assert decoded[end].type == "BOOKMARK" and decoded[end].ends_initial_events
    assert set(phases[:end]) <= {"initial"} and set(phases[end + 1 :]) <= {"change"}
    assert {event.type for event in decoded[:end]} <= {"ADDED"}
    listed = {item["metadata"]["name"] for item in setup.client.get(path).json()["items"]}
    assert {event.name for event in decoded[:end]} == listed  # the current state, all of it
    if path.endswith(("/configmaps", "/pods", "/deployments", "/nodes")):
        assert end >= 1


@pytest.mark.parametrize("setup", CURRENT, indirect=True)
def test_gzipped_watch_list_one_member_per_flush(setup: ProtoLab) -> None:
    """As client-go asks (Accept-Encoding: gzip): the initial events and the bookmark, then
    a change made once both streams have their bookmark, each burst a gzip member of its own."""
    path = f"/api/v1/namespaces/{NS}/configmaps?{WATCH_LIST}&timeoutSeconds=60"
    seen: dict[str, bool] = {}
    name = "gzipped"

    def changed(events: list[Any]) -> bool:
        return any(e["type"] == "ADDED" and e["object"]["metadata"]["name"] == name for e in events)

    def run(accept: str) -> Any:
        def until(events: list[Any]) -> bool:
            if not seen.get(accept) and any(e["type"] == "BOOKMARK" for e in events):
                seen[accept] = True
            return changed(events)

        return gzip_watch(setup, path, accept, until)

    def change() -> None:
        wait_until(lambda: len(seen) == 2, 60, "both watch lists' bookmarks")
        setup.kubectl("-n", NS, "create", "configmap", name, "--from-literal=gzip=yes")

    maker = threading.Thread(target=change)
    maker.start()
    try:
        from_json, from_protobuf = both(run, (JSON, PROTOBUF))
    finally:
        maker.join()
        setup.kubectl("-n", NS, "delete", "configmap", name, "--ignore-not-found")
    for stream in (from_json, from_protobuf):
        assert stream.headers.get("Content-Encoding") == "gzip", stream.headers
        assert stream.members >= 2, stream.members  # the initial burst, then the change
    # Each stream's initial-events-end bookmark carries the revision of its own consistent
    # read; two watches started a moment apart may see different ones (757 and 758, once)
    found = events_differ(
        without_bookmark_rv(from_protobuf.events), without_bookmark_rv(from_json.events)
    )
    assert found is None, found
    assert changed(from_protobuf.events)
    content_type = from_protobuf.headers["Content-Type"]
    decoded = decode_stream(from_protobuf.inflated, content_type, setup.release, watch_list=True)
    phases = [(event.phase, event.type, event.name) for event in decoded]
    assert phases[-2:] == [("initial-end", "BOOKMARK", ""), ("change", "ADDED", name)], phases
    assert {phase for phase, _, _ in phases[:-2]} == {"initial"}
