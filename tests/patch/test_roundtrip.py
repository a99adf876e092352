"""An object through the API server's Go types (patch/roundtrip.py): what the JSON of a
decoded and encoded Deployment keeps, by the Go field facts of kube/schema."""

from __future__ import annotations

from typing import Any

from k8s_wiretap.kube.release import CURRENT
from k8s_wiretap.patch.roundtrip import may_change_when_decoded, through_go_types


def deployment(spec: dict[str, Any], pod: dict[str, Any]) -> dict[str, Any]:
    template = {"metadata": {"labels": {"app": "a"}}, "spec": pod}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {**spec, "template": template}}


def test_omitempty_zero_values_are_left_out() -> None:
    spec = {"paused": False, "minReadySeconds": 0, "replicas": 0, "revisionHistoryLimit": None}
    container = {"name": "a", "tty": False, "workingDir": "", "args": []}
    container["env"] = [{"name": "E", "value": ""}]
    obj = through_go_types(
        deployment(spec, {"containers": [container], "hostname": ""}), CURRENT.minor_version
    )
    # replicas is a pointer: 0 is kept; a null pointer is left out
    assert {k: v for k, v in obj["spec"].items() if k != "template"} == {
        "replicas": 0,
        "strategy": {},  # a struct value: always encoded
    }
    pod = obj["spec"]["template"]["spec"]
    assert pod == {"containers": [{"name": "a", "env": [{"name": "E"}], "resources": {}}]}


def test_a_null_of_a_value_field_is_its_zero_value() -> None:
    """`name` is not omitempty: a null comes back as ""; `workingDir` is, and goes."""
    container = {"name": None, "workingDir": None}
    obj = through_go_types(deployment({}, {"containers": [container]}), CURRENT.minor_version)
    assert obj["spec"]["template"]["spec"]["containers"] == [{"name": "", "resources": {}}]


def test_types_with_their_own_json_and_unknown_kinds_are_left_alone() -> None:
    obj = deployment({}, {})
    obj["spec"]["template"]["metadata"]["creationTimestamp"] = None  # a Time
    assert through_go_types(obj, CURRENT.minor_version)["spec"]["template"]["metadata"] == {
        "labels": {"app": "a"},
        "creationTimestamp": None,
    }
    custom = {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"on": False}}
    assert through_go_types(custom, CURRENT.minor_version) == {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "spec": {"on": False},
    }


def test_only_patches_that_set_zero_values_or_remove_need_the_round_trip() -> None:
    """The object before is as the server encodes it; a patch changes that only where it
    sets a zero value or a null, or removes something, and only in the members it reaches."""
    status = {"status": {"conditions": [{"type": "Ready", "lastProbeTime": None}]}}
    assert may_change_when_decoded("strategic", status) == {"status"}
    assert may_change_when_decoded("merge", {"spec": {"replicas": 3}}) == frozenset()
    assert may_change_when_decoded("strategic", {"spec": {"$retainKeys": ["type"]}}) == {"spec"}
    assert may_change_when_decoded("merge", {"spec": {"paused": False}}) == {"spec"}
    remove = [{"op": "remove", "path": "/spec/replicas"}]
    assert may_change_when_decoded("json", remove) == {"spec"}
    add = [{"op": "add", "path": "/metadata/labels/x", "value": "v"}]
    assert may_change_when_decoded("json", add) == frozenset()
