"""Etcd keys: every object the lab's API server serves is stored exactly where we say."""

from __future__ import annotations

import base64
import json
import urllib.request

from k8s_wiretap.kube.etcd import DEFAULT_PREFIX, NOT_OBJECTS, etcd_key
from k8s_wiretap.kube.refs import ObjectRef
from k8s_wiretap.kube.release import Release
from k8s_wiretap.kube.resources import Resources
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.workshop import manifest
from tests.conftest import Kubectl, wait_until
from tests.kube.test_resources import admin

# What the API server keeps in etcd besides objects: allocators and the endpoint reconciler's
# leases. (The lab's API server advertises 127.0.0.1, which Endpoints may not hold, so the
# `kubernetes` service has no Endpoints object here.)
INTERNAL = tuple(DEFAULT_PREFIX + prefix for prefix in NOT_OBJECTS)
GREETING = """
apiVersion: workshop.example.com/v1
kind: Greeting
metadata: {name: hello, namespace: default}
spec: {message: hi}
"""


def etcd_keys(lab: LabState) -> set[str]:
    """Every key under /registry/, read through etcd's own JSON gateway."""

    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    query = {"key": b64("/registry/"), "range_end": b64("/registry0"), "keys_only": True}
    request = urllib.request.Request(
        f"http://127.0.0.1:{lab.ports['etcd']}/v3/kv/range",
        data=json.dumps(query).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as reply:
        found = json.load(reply).get("kvs", [])
    return {base64.b64decode(kv["key"]).decode() for kv in found}


def served_objects(lab: LabState, resources: Resources) -> dict[str, ObjectRef]:
    """The etcd key we predict for every object a LIST of every resource returns."""
    client, keys = admin(lab), {}
    for served in resources:
        if "list" not in served.verbs:
            continue
        prefix = f"/apis/{served.group}/{served.version}" if served.group else "/api/v1"
        listing = client.get(f"{prefix}/{served.resource}").json()
        for item in listing.get("items") or []:
            ref = resources.ref(served.group, served.resource, "", "", item)
            builtin = Resources.builtin().get(served.group, served.resource) is not None
            key = etcd_key(ref, builtin=builtin)
            if key is not None:
                keys[key] = ref
    return keys


def test_every_object_is_where_we_say_and_every_key_is_an_object(
    lab: LabState, kubectl: Kubectl
) -> None:
    kubectl("apply", "-f", "-", stdin=manifest("crd"))
    kubectl("wait", "--for=condition=Established", "crd/greetings.workshop.example.com")
    kubectl("apply", "-f", "-", stdin=GREETING)
    kubectl("apply", "-f", "-", stdin=manifest("web"))
    kubectl("create", "service", "clusterip", "hello", "--tcp=80")
    resources = Resources.builtin(Release.parse(lab.kube_version).minor_version)  # what it serves
    resources.learn(admin(lab).get("/apis/workshop.example.com/v1").json())

    expected = {
        "/registry/minions/node-1",
        "/registry/services/specs/default/kubernetes",
        "/registry/services/endpoints/default/hello",  # by the endpoints controller
        "/registry/deployments/default/web",
        "/registry/workshop.example.com/greetings/default/hello",
        "/registry/apiextensions.k8s.io/customresourcedefinitions/greetings.workshop.example.com",
        "/registry/apiregistration.k8s.io/apiservices/v1.apps",
        "/registry/namespaces/default",
    }

    def agree() -> bool:
        predicted = set(served_objects(lab, resources))
        stored = {k for k in etcd_keys(lab) if not k.startswith(INTERNAL)}
        return predicted == stored and expected <= predicted

    wait_until(agree, 60, "a moment when etcd and the API server agree (objects come and go)")
    assert etcd_key(ObjectRef("", "componentstatuses", "", "etcd-0")) is None
    kubectl("delete", "greeting", "hello")
    kubectl("delete", "service", "hello")
