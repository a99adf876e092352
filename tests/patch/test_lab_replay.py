"""Replays of real traffic: kubectl against the lab's Kubernetes 1.20 API server.

Each test sends patches with the real kubectl (client-side `apply`, `patch --type
strategic|merge|json`, `apply --server-side`), takes the object before and the server's answer
from kubectl's own log, and asserts that the engine predicts the answer: on what the patch
touched, and on the whole object (server-maintained fields and defaults aside).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.kube.client import ApiClient
from k8s_wiretap.kube.release import Release
from k8s_wiretap.lab.layout import Layout
from k8s_wiretap.lab.readiness import admin_client
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.patch import ConflictError, PatchError, PatchSchema, compare, replay
from k8s_wiretap.patch.fieldpath import FieldSet
from tests.conftest import Kubectl
from tests.patch.random_patches import DEPLOYMENT, Applies, Patches
from tests.patch.traffic import (
    LoggedCall,
    check_replay,
    exchanges,
    get,
    last_patch,
    request,
    server_release,
    traced,
)

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(scope="module")
def api(lab: LabState) -> ApiClient:
    return admin_client(Layout(Path(lab.kubeconfig).parent, lab.ports))


def deployment(name: str, containers: str, extra: str = "") -> str:
    return f"""
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  labels: {{app: {name}, tier: web}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: {name}}}}}
{extra}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
{containers}
"""


WEB = """
      - name: web
        image: busybox:1
        env: [{name: A, value: a}, {name: B, value: b}]
        ports: [{containerPort: 80}]
"""


def settle(api: ApiClient, path: str) -> None:
    """Wait until the controllers are done with the object: the deployment controller has
    seen the latest spec, every replica is available (the hollow kubelet takes a moment to
    report pods Running, and each report changes the Deployment's status), and nothing has
    written to it for a second. A write in between would make the `before` of a replay
    stale, and the replay would rightly disagree with the server."""
    deadline = time.monotonic() + 60
    quiet_since, version = time.monotonic(), ""
    while time.monotonic() < deadline:
        obj = get(api, path)
        status, meta = obj.get("status", {}), obj["metadata"]
        if meta["resourceVersion"] != version:
            quiet_since, version = time.monotonic(), meta["resourceVersion"]
        wanted = obj.get("spec", {}).get("replicas", 1)
        done = status.get("observedGeneration") == meta["generation"] and all(
            status.get(field, 0) == wanted
            for field in ("replicas", "updatedReplicas", "availableReplicas")
        )
        if done and time.monotonic() - quiet_since >= 1.0:
            return
        time.sleep(0.1)


def patched(
    kubectl: Kubectl,
    api: ApiClient,
    path: str,
    *args: str,
    stdin: str | None = None,
    schema: PatchSchema | None = None,
) -> tuple[LoggedCall, dict[str, Any]]:
    """Run kubectl, then replay each of its PATCHes on the object as it was just before
    (nothing, for an apply that creates it), with `schema` (default: the shipped table)."""
    response = api.get(path)
    before = response.json() if response.status == 200 else {}
    got = False  # whether `before` is kubectl's GET, sent right before its PATCH
    log = traced(kubectl, *args, stdin=stdin)
    replayed: tuple[LoggedCall, dict[str, Any]] | None = None
    for exchange in log:
        if exchange.path() != path or exchange.method not in ("GET", "PATCH"):
            continue
        if exchange.method == "PATCH" and lost_a_race(exchange):
            continue  # the object is unchanged; kubectl GETs it again and retries
        if exchange.method == "PATCH":
            if before and not got:  # a controller may have written since the read or answer
                before = as_of_patch(api, path, before, json.loads(exchange.response))
            release = server_release(api)
            replayed = exchange, check_replay(exchange, before, release=release, schema=schema)
        before, got = json.loads(exchange.response), exchange.method == "GET"
    assert replayed is not None, "kubectl sent no PATCH"
    return replayed


def as_of_patch(
    api: ApiClient, path: str, read: dict[str, Any], after: dict[str, Any]
) -> dict[str, Any]:
    """The object just before the write that made `after`: `read` (kubectl's answer to its
    previous PATCH, or, as server-side apply sends no GET first, what the test read before
    kubectl ran), or the last change a controller made after it, from a watch that starts at
    `read`. A status write between kubectl's requests (the deployment controller's, on the
    new ReplicaSet of an apply that kubectl follows with a second one) would else make the
    replay disagree with the server on what only the controller changed."""
    collection, name = path.rsplit("/", 1)
    since, upto = read["metadata"]["resourceVersion"], after["metadata"]["resourceVersion"]
    query = f"watch=1&resourceVersion={since}&fieldSelector=metadata.name%3D{name}"
    response = api.get(f"{collection}?{query}&timeoutSeconds=1", timeout=10)
    assert response.status == 200, response.body
    before = read
    for line in response.body.splitlines():
        changed = json.loads(line)["object"]
        if int(changed["metadata"]["resourceVersion"]) < int(upto):
            before = changed
    return before


def minor(api: ApiClient) -> int:
    """The lab's Kubernetes minor release (20, 37): where the server's answers differ."""
    return Release.parse(server_release(api)).minor


def lost_a_race(exchange: LoggedCall) -> bool:
    """A PATCH refused with 409 because the object changed since kubectl read it. kubectl
    (1.26+) moves client-side apply's managed fields over to server-side apply with a JSON
    patch that also replaces metadata.resourceVersion with the one it read, precisely so
    that a write in between (a controller's) gets this Conflict and kubectl tries again."""
    status = json.loads(exchange.response)
    if status.get("kind") != "Status":
        return False
    assert status.get("code") == 409 and status.get("reason") == "Conflict", status
    assert exchange.content_type == "application/json-patch+json", exchange.content_type
    paths = [op.get("path") for op in json.loads(exchange.request)]
    assert paths == ["/metadata/managedFields", "/metadata/resourceVersion"], paths
    return True


def status_message(kubectl: Kubectl, *args: str, stdin: str | None = None) -> tuple[int, str]:
    """The Status a failing kubectl command got for its PATCH: (code, message)."""
    result = kubectl.run("-v=9", *args, stdin=stdin, check=False)
    assert result.returncode != 0
    status = json.loads(last_patch(exchanges(result.stderr)).response)
    return int(status["code"]), str(status["message"])


@pytest.fixture
def web(kubectl: Kubectl, api: ApiClient, request: pytest.FixtureRequest) -> Iterator[str]:
    name = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower())[5:45].strip("-")
    kubectl("apply", "-f", "-", stdin=deployment(name, WEB))
    settle(api, f"{DEPLOYMENTS}/{name}")
    yield name
    kubectl.run("delete", "deployment", name, "--wait=false", check=False)


def test_client_side_apply_sequence(kubectl: Kubectl, api: ApiClient, web: str) -> None:
    path = f"{DEPLOYMENTS}/{web}"
    steps = [
        # replicas, an image, env B changed, env A removed, env C and a port added
        """
      - name: web
        image: busybox:2
        env: [{name: B, value: b2}, {name: C, value: c}]
        ports: [{containerPort: 80}, {containerPort: 8080, name: alt}]
""",
        # a second container in front: $setElementOrder/containers
        """
      - name: side
        image: busybox:3
        args: [sleep, "3600"]
      - name: web
        image: busybox:2
        env: [{name: C, value: c}, {name: B, value: b2}]
        ports: [{containerPort: 80}, {containerPort: 8080, name: alt}]
""",
        # the side container gone again: a $patch: delete item
        """
      - name: web
        image: busybox:2
        env: [{name: C, value: c}]
        ports: [{containerPort: 8080, name: alt}]
""",
    ]
    for containers in steps:
        text = deployment(web, containers).replace("replicas: 1", "replicas: 2")
        exchange, _ = patched(kubectl, api, path, "apply", "-f", "-", stdin=text)
        assert exchange.content_type == "application/strategic-merge-patch+json"
        settle(api, path)


def test_client_side_apply_retain_keys(kubectl: Kubectl, api: ApiClient, web: str) -> None:
    """Strategy and volume source changes: kubectl sends $retainKeys."""
    path = f"{DEPLOYMENTS}/{web}"
    volumes = "      volumes:\n      - name: data\n        emptyDir: {}\n"
    first = deployment(web, WEB + volumes)
    patched(kubectl, api, path, "apply", "-f", "-", stdin=first)
    settle(api, path)
    kubectl("create", "configmap", f"{web}-cm", "--from-literal=k=v")
    second = first.replace("emptyDir: {}", f"configMap: {{name: {web}-cm}}")
    second = second.replace(
        "spec:\n  replicas: 1", "spec:\n  replicas: 1\n  strategy: {type: Recreate}"
    )
    exchange, _ = patched(kubectl, api, path, "apply", "-f", "-", stdin=second)
    assert "$retainKeys" in exchange.request
    kubectl.run("delete", "configmap", f"{web}-cm", check=False)


@pytest.mark.parametrize(
    "patch",
    [
        # containers by name, an env var deleted, one added, one changed
        {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "web",
                                "image": "busybox:9",
                                "env": [
                                    {"name": "A", "$patch": "delete"},
                                    {"name": "B", "value": "x"},
                                    {"name": "Z", "value": "z"},
                                ],
                            }
                        ]
                    }
                }
            }
        },
        # explicit order of env, ports merged by containerPort
        {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "web",
                                "$setElementOrder/env": [{"name": "B"}, {"name": "A"}],
                                "ports": [{"containerPort": 81}],
                            }
                        ]
                    }
                }
            }
        },
        # a map replaced, a label deleted with null
        {"metadata": {"labels": {"$patch": "replace", "app": "x", "other": "y"}}},
        {"metadata": {"labels": {"tier": None}, "annotations": {"a": "b"}}},
        # a list replaced by $patch: replace inside it
        {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [
                            {"$patch": "replace"},
                            {"name": "only", "image": "busybox:1"},
                        ]
                    }
                }
            }
        },
        # retainKeys by hand: rollingUpdate goes
        {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
    ],
    ids=["env", "order", "replace-map", "null", "replace-list", "retain-keys"],
)
def test_strategic_patch_directives(
    kubectl: Kubectl, api: ApiClient, web: str, patch: dict[str, Any]
) -> None:
    path = f"{DEPLOYMENTS}/{web}"
    args = ("patch", "deployment", web, "--type", "strategic", "-p", json.dumps(patch))
    exchange, _ = patched(kubectl, api, path, *args)
    assert json.loads(exchange.request) == patch


@pytest.fixture
def configmap(kubectl: Kubectl, request: pytest.FixtureRequest) -> Iterator[str]:
    name = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower())[5:50].strip("-")
    yield name
    kubectl.run(
        "patch", "configmap", name, "--type", "merge", "-p", '{"metadata":{"finalizers":null}}',
        check=False,
    )  # fmt: skip
    kubectl.run("delete", "configmap", name, "--wait=false", check=False)


def _configmap(name: str, finalizers: list[str]) -> str:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "finalizers": finalizers, "labels": {"a": "1"}},
            "data": {"x": "1", "y": "2"},
        }
    )


def test_delete_from_primitive_list_finalizers(
    kubectl: Kubectl, api: ApiClient, configmap: str
) -> None:
    kubectl("create", "-f", "-", stdin=_configmap(configmap, ["a/x", "b/y", "c/z"]))
    path = f"{CONFIGMAPS}/{configmap}"
    patch = {
        "metadata": {
            "$deleteFromPrimitiveList/finalizers": ["b/y"],
            "$setElementOrder/finalizers": ["c/z", "a/x"],
        }
    }
    args = ("patch", "configmap", configmap, "--type", "strategic", "-p", json.dumps(patch))
    _, local = patched(kubectl, api, path, *args)
    assert local["metadata"]["finalizers"] == ["c/z", "a/x"]


def test_delete_from_missing_primitive_list(
    kubectl: Kubectl, api: ApiClient, configmap: str
) -> None:
    """Deleting from a list that is not there: 1.20 stores the deletion list as the list (a
    quirk the engine keeps), 1.22 and later store nothing."""
    kubectl("create", "-f", "-", stdin=_configmap(configmap, []))
    path = f"{CONFIGMAPS}/{configmap}"
    patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": ["x/y"]}}
    args = ("patch", "configmap", configmap, "--type", "strategic", "-p", json.dumps(patch))
    _, local = patched(kubectl, api, path, *args)
    stored = ["x/y"] if minor(api) < 22 else None
    assert local["metadata"].get("finalizers") == stored


def test_nulls_in_new_maps(kubectl: Kubectl, api: ApiClient, configmap: str) -> None:
    """A map the object lacked: 1.20 stores it as the patch has it, and Go decodes its nulls
    to ""; 1.24 and later drop its nulls first, and the empty map is left out (omitempty)."""
    kubectl("create", "configmap", configmap, "--from-literal=k=v")
    path = f"{CONFIGMAPS}/{configmap}"
    patch = {"metadata": {"labels": {"l": None}}}
    args = ("patch", "configmap", configmap, "--type", "strategic", "-p", json.dumps(patch))
    exchange, local = patched(kubectl, api, path, *args)
    labels = local["metadata"].get("labels")
    assert labels == ({"l": ""} if minor(api) < 24 else None)
    assert json.loads(exchange.response)["metadata"].get("labels") == labels


@pytest.mark.parametrize(
    "patch",
    [
        {"metadata": {"labels": {"a": None, "b": "2"}}, "data": {"x": None, "z": "3"}},
        {"data": {"nested": "value"}, "metadata": {"annotations": {"k": "v"}}},
    ],
    ids=["nulls", "add"],
)
def test_merge_patch(
    kubectl: Kubectl, api: ApiClient, configmap: str, patch: dict[str, Any]
) -> None:
    kubectl("create", "-f", "-", stdin=_configmap(configmap, []))
    path = f"{CONFIGMAPS}/{configmap}"
    args = ("patch", "configmap", configmap, "--type", "merge", "-p", json.dumps(patch))
    exchange, _ = patched(kubectl, api, path, *args)
    assert exchange.content_type == "application/merge-patch+json"


def test_merge_patch_nulls_in_lists(kubectl: Kubectl, api: ApiClient, web: str) -> None:
    """A list a merge patch stores: json-patch v4.9.0 (1.20) drops its null items, v4.11.0+
    (1.22 and later) keeps them, and Go decodes a null string to ""."""
    path = f"{DEPLOYMENTS}/{web}"
    containers = [{"name": "web", "image": "busybox:3", "args": [None, "y"]}]
    patch = {"spec": {"template": {"spec": {"containers": containers}}}}
    args = ("patch", "deployment", web, "--type", "merge", "-p", json.dumps(patch))
    _, local = patched(kubectl, api, path, *args)
    stored = ["y"] if minor(api) < 22 else ["", "y"]
    assert local["spec"]["template"]["spec"]["containers"][0]["args"] == stored


@pytest.mark.parametrize(
    "patch",
    [
        [
            {"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "b:2"},
            {"op": "add", "path": "/spec/template/spec/containers/0/env/-", "value": {"name": "Q"}},
            {"op": "remove", "path": "/spec/template/spec/containers/0/env/0"},
            {"op": "test", "path": "/spec/replicas", "value": 1},
        ],
        [
            {"op": "replace", "path": "/metadata/labels/new", "value": "replaced-missing"},
            {"op": "remove", "path": "/spec/template/spec/containers/0/env/-1"},
            {
                "op": "add",
                "path": "/spec/template/spec/containers/0/env/-1",
                "value": {"name": "N"},
            },
        ],
        [
            {"op": "copy", "from": "/metadata/labels", "path": "/metadata/annotations"},
            {"op": "move", "from": "/metadata/labels/tier", "path": "/metadata/labels/level"},
            {"op": "add", "path": "/spec/replicas", "value": 3},
        ],
    ],
    ids=["rfc", "quirks", "move-copy"],
)
def test_json_patch(kubectl: Kubectl, api: ApiClient, web: str, patch: list[Any]) -> None:
    path = f"{DEPLOYMENTS}/{web}"
    args = ("patch", "deployment", web, "--type", "json", "-p", json.dumps(patch))
    exchange, _ = patched(kubectl, api, path, *args)
    assert exchange.content_type == "application/json-patch+json"


def test_service_ports(kubectl: Kubectl, api: ApiClient) -> None:
    name = "ports"
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"ports": [{"port": 80, "name": "http"}, {"port": 443, "name": "https"}]},
    }
    kubectl("create", "-f", "-", stdin=json.dumps(service))
    path = f"/api/v1/namespaces/default/services/{name}"
    try:
        for kind, patch in [
            ("strategic", {"spec": {"ports": [{"port": 8080, "name": "alt"}]}}),
            ("strategic", {"spec": {"ports": [{"port": 80, "$patch": "delete"}]}}),
            ("merge", {"spec": {"ports": [{"port": 81, "name": "only"}]}}),
            ("json", [{"op": "add", "path": "/spec/ports/0", "value": {"port": 82, "name": "x"}}]),
        ]:
            args = ("patch", "service", name, "--type", kind, "-p", json.dumps(patch))
            patched(kubectl, api, path, *args)
    finally:
        kubectl.run("delete", "service", name, check=False)


def test_status_subresource(kubectl: Kubectl, api: ApiClient) -> None:
    """Through /status only status changes; the spec the patch nulls stays."""
    name = "with-status"
    # (the default release accepts a load balancer status only for a LoadBalancer)
    kubectl("create", "service", "loadbalancer", name, "--tcp=80:80")
    path = f"/api/v1/namespaces/default/services/{name}"
    try:
        ingress: dict[str, Any] = {"ip": "10.1.2.3"}
        if minor(api) >= 29:  # ipMode is required with an ip (and unknown before 1.29)
            ingress["ipMode"] = "VIP"
        patch = {"status": {"loadBalancer": {"ingress": [ingress]}}, "spec": None}
        before = get(api, path)
        args = ("patch", "service", name, "--subresource=status", "--type=merge")
        exchange = last_patch(traced(kubectl, *args, "-p", json.dumps(patch)))
        assert exchange.path() == f"{path}/status"
        check_replay(exchange, before, release=server_release(api))
        assert json.loads(exchange.response)["spec"]["ports"]
    finally:
        kubectl.run("delete", "service", name, check=False)


def test_pod_patches(kubectl: Kubectl, api: ApiClient) -> None:
    name = "patched-pod"
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"a": "1"}},
        "spec": {"containers": [{"name": "c", "image": "busybox:1", "args": ["sleep", "9"]}]},
    }
    kubectl("create", "-f", "-", stdin=json.dumps(pod))
    path = f"/api/v1/namespaces/default/pods/{name}"
    try:
        for kind, patch in [
            ("strategic", {"spec": {"containers": [{"name": "c", "image": "busybox:2"}]}}),
            ("strategic", {"spec": {"activeDeadlineSeconds": 600}, "metadata": {"labels": None}}),
            ("merge", {"metadata": {"labels": {"b": "2"}}}),
        ]:
            args = ("patch", "pod", name, "--type", kind, "-p", json.dumps(patch))
            patched(kubectl, api, path, *args)
    finally:
        kubectl.run("delete", "pod", name, "--grace-period=0", "--force", check=False)


def test_server_side_apply(kubectl: Kubectl, api: ApiClient) -> None:
    name = "ssa"
    path = f"{DEPLOYMENTS}/{name}"
    two = WEB + "      - name: side\n        image: busybox:3\n"
    args = ("apply", "--server-side", "-f", "-")
    patched(kubectl, api, path, *args, stdin=deployment(name, two))  # creates it
    try:
        settle(api, path)
        # change a field, drop a container and an env var: pruned as no longer applied
        changed = WEB.replace("busybox:1", "busybox:5").replace(", {name: B, value: b}", "")
        exchange, local = patched(kubectl, api, path, *args, stdin=deployment(name, changed))
        assert exchange.content_type == "application/apply-patch+yaml"
        assert [c["name"] for c in local["spec"]["template"]["spec"]["containers"]] == ["web"]
        settle(api, path)
        # the scale subresource records no owner in 1.20: no conflict; from 1.22 on it
        # does (kubectl owns replicas through /scale), and the apply conflicts alike
        kubectl("scale", "deployment", name, "--replicas=3")
        settle(api, path)
        text = deployment(name, changed).replace("replicas: 1", "replicas: 2")
        if minor(api) >= 22:
            refused_alike(kubectl, api, path, args, text)
            patched(kubectl, api, path, *args, "--force-conflicts", stdin=text)
        else:
            patched(kubectl, api, path, *args, stdin=text)
        settle(api, path)
        # a patch makes kubectl-patch own replicas; applying another value conflicts...
        kubectl("patch", "deployment", name, "--type", "merge", "-p", '{"spec":{"replicas":4}}')
        settle(api, path)
        refused_alike(kubectl, api, path, args, text)
        # ... unless forced
        patched(kubectl, api, path, *args, "--force-conflicts", stdin=text)
    finally:
        kubectl.run("delete", "deployment", name, check=False)


def refused_alike(
    kubectl: Kubectl, api: ApiClient, path: str, args: tuple[str, ...], text: str
) -> None:
    """The server refuses the apply with 409, and the engine with the same conflict."""
    code, message = status_message(kubectl, *args, stdin=text)
    assert code == 409
    before = get(api, path)
    with pytest.raises(ConflictError) as conflict:
        replay("apply", text, before, manager="kubectl", release=server_release(api))
    assert conflict.value.message == message


def test_server_side_apply_after_client_side(kubectl: Kubectl, api: ApiClient, web: str) -> None:
    """The object came from client-side apply: updates own everything so far. Server-side
    apply sends no GET first: the replay's `before` is read just before kubectl runs, and a
    controller's status write in between is taken from a watch (`as_of_patch`)."""
    path = f"{DEPLOYMENTS}/{web}"
    text = deployment(web, WEB.replace("busybox:1", "busybox:7"))
    settle(api, path)
    patched(
        kubectl, api, path, "apply", "--server-side", "--force-conflicts", "-f", "-", stdin=text
    )


def test_server_side_apply_leaves_what_the_strategy_resets(
    kubectl: Kubectl, api: ApiClient
) -> None:
    """From 1.22 an apply to a Deployment does not own the `status` it carries, and an apply
    to its `/status` does not own (nor conflict on) `spec`: the strategy resets them."""
    name = "reset"
    path = f"{DEPLOYMENTS}/{name}"
    with_status = deployment(name, WEB) + "status: {replicas: 5, observedGeneration: 9}\n"
    args = ("apply", "--server-side", "-f", "-")
    _, local = patched(kubectl, api, path, *args, stdin=with_status)
    try:
        owned = json.dumps(local["metadata"]["managedFields"])
        assert ('"f:status"' in owned) == (minor(api) < 22)
        settle(api, path)
        status = deployment(name, WEB).replace("replicas: 1", "replicas: 7")
        status += "status: {collisionCount: 2}\n"
        before = get(api, path)
        # spec.replicas, which kubectl owns, is no conflict, and is not taken over (the
        # replay checks the managed fields)
        apply = (*args, "--subresource=status", "--field-manager=st")
        exchange = last_patch(traced(kubectl, *apply, stdin=status))
        assert exchange.path() == f"{path}/status"
        check_replay(exchange, before, release=server_release(api))
    finally:
        kubectl.run("delete", "deployment", name, check=False)


def test_rejections_match(kubectl: Kubectl, api: ApiClient, web: str) -> None:
    """Where the server refuses a patch, the engine refuses it with the same message."""
    path = f"{DEPLOYMENTS}/{web}"
    cases: list[tuple[str, Any]] = [
        ("strategic", {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}}),
        ("strategic", {"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}}),
        ("json", [{"op": "test", "path": "/spec/replicas", "value": 7}]),
        ("json", [{"op": "remove", "path": "/metadata/labels/nope"}]),
        ("json", [{"op": "add", "path": "/spec/missing/deeper", "value": 1}]),
    ]
    for kind, patch in cases:
        before = get(api, path)
        args = ("patch", "deployment", web, "--type", kind, "-p", json.dumps(patch))
        code, message = status_message(kubectl, *args)
        with pytest.raises(PatchError) as error:
            replay(kind, patch, before, release=server_release(api))
        assert (error.value.status, error.value.server_message) == (code, message), patch


GADGETS = "gadgets.patch.example.com"
CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.patch.example.com
spec:
  group: patch.example.com
  names: {kind: Gadget, plural: gadgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
"""


def test_crd_strategic_patches_as_on_the_server(kubectl: Kubectl, api: ApiClient) -> None:
    """The server finds SMP metadata in Go types. Up to 1.21 a v1beta1 CRD's
    `spec.validation.openAPIV3Schema` is reached through structs, and merging into
    JSONSchemaProps' `properties` (a Go map) fails. v1beta1 is gone from 1.22; in v1 the
    schema sits in `spec.versions`, a list without a merge strategy, which a strategic patch
    replaces whole: no lookup reaches a map of structs there."""
    kubectl("apply", "-f", "-", stdin=CRD)
    try:
        if minor(api) < 22:
            _lookup_below_a_map(kubectl, api)
        else:
            path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + GADGETS
            version = get(api, path)["spec"]["versions"][0]
            version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"] = {
                "size": {"type": "string"}
            }
            patch = {"spec": {"versions": [version]}}
            args = ("patch", "crd", GADGETS, "--type", "strategic", "-p", json.dumps(patch))
            _, local = patched(kubectl, api, path, *args)
            schema = local["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
            assert schema["properties"]["spec"]["properties"] == {"size": {"type": "string"}}
    finally:
        kubectl.run("delete", "crd", GADGETS, check=False)


def _lookup_below_a_map(kubectl: Kubectl, api: ApiClient) -> None:
    """(No custom resource is created: the 1.20 lab's API server, built with Go 1.19,
    crashes on them.)"""
    resource = "customresourcedefinitions.v1beta1.apiextensions.k8s.io"
    path = "/apis/apiextensions.k8s.io/v1beta1/customresourcedefinitions/" + GADGETS
    properties = {"spec": {"properties": {"size": {"type": "string"}}}}
    patch = {"spec": {"validation": {"openAPIV3Schema": {"properties": properties}}}}
    before = get(api, path)
    args = ("patch", resource, GADGETS, "--type", "strategic")
    code, message = status_message(kubectl, *args, "-p", json.dumps(patch))
    with pytest.raises(PatchError) as error:
        replay("strategic", patch, before, release=server_release(api))
    assert (error.value.status, error.value.server_message) == (code, message)
    assert message == "merging an object in json but data type is not struct, instead is: map"
    merge_args = ("patch", resource, GADGETS, "--type", "merge")
    patched(kubectl, api, path, *merge_args, "-p", json.dumps(patch))


WIDGETS = "widgets.patch.example.com"
WIDGET_CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.patch.example.com
spec:
  group: patch.example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties: {size: {type: integer}, color: {type: string, default: red}}
          status: {type: object, properties: {ready: {type: boolean}}}
"""


def widget(size: int, ready: bool | None, labels: str = "{}", color: str = "") -> str:
    text = "apiVersion: patch.example.com/v1\nkind: Widget\n"
    spec = f"{{size: {size}, color: {color}}}" if color else f"{{size: {size}}}"
    text += f"metadata: {{name: w, labels: {labels}}}\nspec: {spec}\n"
    return text if ready is None else text + f"status: {{ready: {str(ready).lower()}}}\n"


def test_custom_resource_applies_leave_what_the_status_subresource_resets(
    kubectl: Kubectl, api: ApiClient
) -> None:
    """A custom resource with a status subresource resets like a built-in kind (1.22+):
    an apply to `/status` owns neither `spec` nor `metadata` and does not conflict on them
    (without the reset the engine refused it with a 409); once something wrote through
    `/status`, an apply to the resource itself owns no `status` and does not conflict on it.
    Replayed with the definition's schema, from the server's OpenAPI v3 (as a recording
    holds it): without it every member of the custom resource is a field of its own; with
    it, a `color` the last apply drops is defaulted again ("red"), as the server does."""
    if minor(api) < 22:
        return  # the 1.20 lab's API server crashes on custom resources (see below)
    kubectl("apply", "-f", "-", stdin=WIDGET_CRD)
    path = "/apis/patch.example.com/v1/namespaces/default/widgets/w"
    args = ("apply", "--server-side", "-f", "-")
    try:
        kubectl("wait", "--for=condition=Established", f"crd/{WIDGETS}")
        schema = _openapi_v3(api, "/openapi/v3/apis/patch.example.com/v1")
        # (created without a status: whether the definition has a status subresource, which
        # drops it and owns none of it, the apply does not show)
        patched(kubectl, api, path, *args, stdin=widget(1, None, color="blue"), schema=schema)
        status = (*args, "--subresource=status", "--field-manager=st")
        before = get(api, path)
        exchange = last_patch(traced(kubectl, *status, stdin=widget(2, False, "{a: b}")))
        assert exchange.path() == f"{path}/status"
        local = check_replay(exchange, before, release=server_release(api), schema=schema)
        owned = [e for e in local["metadata"]["managedFields"] if e["manager"] == "st"]
        assert list(owned[0]["fieldsV1"]) == ["f:status"]
        _, local = patched(kubectl, api, path, *args, stdin=widget(3, True), schema=schema)
        assert local["spec"]["color"] == "red"
        owned = [e for e in local["metadata"]["managedFields"] if e["manager"] == "kubectl"]
        assert "f:status" not in owned[0]["fieldsV1"]
    finally:
        kubectl.run("delete", "crd", WIDGETS, check=False)


def _openapi_v3(api: ApiClient, path: str) -> PatchSchema:
    """The patch schema of one group version's OpenAPI v3 document (served once the
    aggregator has the definition: it may take a moment)."""
    deadline = time.monotonic() + 30
    while True:
        response = api.get(path)
        if response.status == 200:
            schema = PatchSchema.from_openapi(response.json())
            if schema.for_kind("patch.example.com/v1", "Widget") is not None:
                return schema
        assert time.monotonic() < deadline, f"{path}: no Widget schema"
        time.sleep(0.5)


def test_random_patches_against_the_server(lab: LabState) -> None:
    """Differential: random patches of a Deployment, sent to the server one after the other;
    the engine must predict every stored object, and every rejection with its status and
    message (rejections by object validation, after patching, are not the engine's)."""
    layout = Layout(Path(lab.kubeconfig).parent, lab.ports)
    path = f"{DEPLOYMENTS}/random"
    patches = Patches(20210203)
    outcomes = {"stored": 0, "rejected": 0, "invalid": 0}
    status, created = request(layout, "POST", DEPLOYMENTS, DEPLOYMENT, "application/json")
    assert status == 201, created
    try:
        for _ in range(120):
            kind, patch = patches.next()
            before = request(layout, "GET", path)[1]
            status, after = request(layout, "PATCH", path, patch, kind)
            outcome = _judge(kind, patch, before, status, after, lab.kube_version)
            outcomes[outcome] += 1
    finally:
        request(layout, "PATCH", path, {"metadata": {"finalizers": None}}, "merge")
        request(layout, "DELETE", path)
    assert outcomes["stored"] > 60 and outcomes["rejected"] > 10, outcomes


def _judge(
    kind: str, patch: Any, before: dict[str, Any], status: int, after: Any, release: str
) -> str:
    try:
        local = replay(kind, patch, before, release=release)
    except PatchError as error:
        assert (error.status, error.server_message) == (status, after["message"]), patch
        return "rejected"
    if status != 200:
        assert after["reason"] == "Invalid" and after["details"].get("causes"), (patch, after)
        return "invalid"
    for everything in (False, True):
        schema = PatchSchema.bundled(release)
        result = compare(kind, patch, before, local, after, schema=schema, everything=everything)
        noise = "deployment.kubernetes.io/revision"  # the controller's, between GET and PATCH
        assert all(noise in m for m in result.mismatches), (
            kind,
            json.dumps(patch),
            json.dumps(before["spec"]),
            json.dumps(after["spec"]),
            result.mismatches,
        )
    return "stored"


def test_random_applies_against_the_server(lab: LabState) -> None:
    """Differential, server-side apply: random configurations of a Deployment by three
    managers, forced or not, with Go zero values and nulls, and fields one apply sets and the
    next drops. Each apply names the resourceVersion it was replayed on, so no write comes in
    between (a 409 "has been modified" is sent again); the engine must predict every stored
    object, managed fields included (each manager's fields exactly), and every refusal.
    Among the stored ones, some must have had a zero value the server left out and a dropped
    field it defaulted again."""
    layout = Layout(Path(lab.kubeconfig).parent, lab.ports)
    path = f"{DEPLOYMENTS}/random-apply"
    applies = Applies(20261202)
    outcomes = {"stored": 0, "rejected": 0, "invalid": 0, "zero": 0, "defaulted": 0}
    try:
        for _ in range(100):
            manager, force, config = applies.next()
            config["metadata"]["name"] = "random-apply"
            config["spec"]["selector"]["matchLabels"]["app"] = "random"
            outcome = _apply_judged(layout, path, manager, force, config, lab.kube_version)
            for name in outcome:
                outcomes[name] += 1
    finally:
        request(layout, "DELETE", path)
    assert outcomes["stored"] > 30 and outcomes["rejected"] > 3, outcomes
    assert outcomes["zero"] > 5 and outcomes["defaulted"] > 5, outcomes


def _apply_judged(
    layout: Layout, path: str, manager: str, force: bool, config: dict[str, Any], release: str
) -> list[str]:
    query = f"?fieldManager={manager}" + ("&force=true" if force else "")
    for _ in range(20):
        status, before = request(layout, "GET", path)
        before = before if status == 200 else {}
        if before:
            config["metadata"]["resourceVersion"] = before["metadata"]["resourceVersion"]
        status, after = request(layout, "PATCH", path + query, config, "apply")
        if status != 409 or "has been modified" not in after["message"]:
            break
        time.sleep(0.2)  # a controller wrote in between: again, on the newer object
    else:
        raise AssertionError(f"{path} kept changing")
    try:
        local = replay("apply", config, before, manager=manager, force=force, release=release)
    except PatchError as error:
        assert (error.status, error.server_message) == (status, after["message"]), config
        return ["rejected"]
    if status not in (200, 201):
        assert after["reason"] == "Invalid" and after["details"].get("causes"), (config, after)
        return ["invalid"]
    for everything in (False, True):
        schema = PatchSchema.bundled(release)
        result = compare(
            "apply", config, before, local, after,
            schema=schema, manager=manager, everything=everything,
        )  # fmt: skip
        assert result.mismatches == [], (manager, force, json.dumps(config), result.mismatches)
    assert _owners(local) == _owners(after), json.dumps(config)  # no more, no less
    return ["stored", *_covered(config, before, after)]


def _owners(obj: dict[str, Any]) -> dict[tuple[str, str], FieldSet]:
    entries = obj["metadata"]["managedFields"]
    return {
        (e["manager"], e.get("subresource", "")): FieldSet.from_fields_v1(e["fieldsV1"])
        for e in entries
    }


def _covered(config: dict[str, Any], before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Which of the two gaps this stored apply exercised: a member of the configuration the
    server's answer leaves out (a zero value), a spec field the configuration does not set
    that changed (pruned, and defaulted again to another value)."""
    out = []
    spec, was, now = config["spec"], before.get("spec", {}), after["spec"]
    pod = spec["template"]["spec"]
    if any(k not in now for k in spec) or any(k not in now["template"]["spec"] for k in pod):
        out.append("zero")
    if any(k not in spec and k in was and was[k] != now.get(k) for k in now):
        out.append("defaulted")
    return out
