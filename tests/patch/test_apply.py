"""Server-side apply: merging by list-map keys, ownership in managedFields, pruning, conflicts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.kube.fields import LAST_APPLIED
from k8s_wiretap.kube.release import CURRENT
from k8s_wiretap.patch import (
    ConflictError,
    Node,
    PatchError,
    PatchSchema,
    apply_config,
    compare,
    replay,
)
from k8s_wiretap.patch.apply import decode_managed_fields
from k8s_wiretap.patch.fieldpath import FieldSet, path_text

NOW = "2021-02-03T04:05:06Z"


def node(api_version: str = "apps/v1", kind: str = "Deployment") -> Node:
    found = PatchSchema.builtin().for_kind(api_version, kind)
    assert found is not None
    return found


def entry(manager: str, operation: str, fields: dict[str, Any]) -> dict[str, Any]:
    return {
        "manager": manager,
        "operation": operation,
        "apiVersion": "apps/v1",
        "time": "2020-01-01T00:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }


CONTAINERS: dict[str, Any] = {
    'k:{"name":"web"}': {".": {}, "f:name": {}, "f:image": {}},
    'k:{"name":"side"}': {".": {}, "f:name": {}, "f:image": {}},
}
APPLIED = {"f:spec": {"f:template": {"f:spec": {"f:containers": CONTAINERS}}}}


def live(managed: list[dict[str, Any]], replicas: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "managedFields": managed},
        "spec": {
            "replicas": replicas,
            "template": {
                "spec": {
                    "containers": [
                        {"name": "web", "image": "nginx", "imagePullPolicy": "Always"},
                        {"name": "side", "image": "busybox"},
                    ]
                }
            },
        },
    }


def config(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": spec,
    }


def web(image: str = "nginx:2") -> dict[str, Any]:
    return {"template": {"spec": {"containers": [{"name": "web", "image": image}]}}}


def managers(obj: dict[str, Any]) -> dict[tuple[str, str, str, str], FieldSet]:
    found = decode_managed_fields(obj["metadata"].get("managedFields"))
    return {key: value.fields for key, value in found.items()}


def test_fields_no_longer_applied_are_pruned() -> None:
    result = apply_config(live([entry("kubectl", "Apply", APPLIED)]), config(**web()), "kubectl",
                          node(), now=NOW)  # fmt: skip
    containers = result["spec"]["template"]["spec"]["containers"]
    assert containers == [{"name": "web", "image": "nginx:2", "imagePullPolicy": "Always"}]
    assert result["spec"]["replicas"] == 2  # never owned by kubectl: kept
    [written] = result["metadata"]["managedFields"]
    assert written["time"] == NOW
    assert written["fieldsV1"] == {
        "f:spec": {
            "f:template": {
                "f:spec": {
                    "f:containers": {'k:{"name":"web"}': {".": {}, "f:image": {}, "f:name": {}}}
                }
            }
        }
    }


def test_fields_another_manager_owns_are_not_pruned() -> None:
    side: dict[str, Any] = {"f:spec": {"f:template": {"f:spec": {"f:containers": {
        "k:{\"name\":\"side\"}": {".": {}, "f:name": {}, "f:image": {}},
    }}}}}  # fmt: skip
    managed = [entry("kubectl", "Apply", APPLIED), entry("other", "Update", side)]
    result = apply_config(live(managed), config(**web()), "kubectl", node(), now=NOW)
    names = [c["name"] for c in result["spec"]["template"]["spec"]["containers"]]
    assert names == ["web", "side"]
    assert result["spec"]["template"]["spec"]["containers"][1] == {
        "name": "side",
        "image": "busybox",
    }


def test_changing_a_field_another_manager_owns_conflicts() -> None:
    replicas: dict[str, Any] = {"f:spec": {"f:replicas": {}}}
    managed = [entry("kubectl", "Apply", APPLIED), entry("kubectl-edit", "Update", replicas)]
    with pytest.raises(ConflictError) as conflict:
        apply_config(live(managed), config(replicas=3, **web()), "kubectl", node())
    assert conflict.value.status == 409
    assert conflict.value.message == (
        'Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1: .spec.replicas'
    )
    forced = apply_config(live(managed), config(replicas=3, **web()), "kubectl", node(), force=True)
    assert forced["spec"]["replicas"] == 3
    owners = managers(forced)
    assert ("kubectl-edit", "Update", "apps/v1", "") not in owners  # its only field went
    assert owners[("kubectl", "Apply", "", "")].has((("f", "spec"), ("f", "replicas")))


def test_applying_the_same_value_is_no_conflict_and_shares_ownership() -> None:
    replicas: dict[str, Any] = {"f:spec": {"f:replicas": {}}}
    managed = [entry("kubectl", "Apply", APPLIED), entry("kubectl-edit", "Update", replicas)]
    result = apply_config(live(managed), config(replicas=2, **web()), "kubectl", node())
    owners = managers(result)
    path = (("f", "spec"), ("f", "replicas"))
    assert owners[("kubectl-edit", "Update", "apps/v1", "")].has(path)
    assert owners[("kubectl", "Apply", "", "")].has(path)


def test_several_conflicts_are_listed_by_manager() -> None:
    managed = [
        entry("a", "Update", {"f:spec": {"f:replicas": {}}}),
        entry("b", "Apply", {"f:spec": {"f:template": {"f:spec": {"f:containers": CONTAINERS}}}}),
    ]
    with pytest.raises(ConflictError) as conflict:
        apply_config(live(managed), config(replicas=3, **web()), "kubectl", node())
    assert conflict.value.message == (
        'Apply failed with 2 conflicts: conflicts with "a" using apps/v1:\n- .spec.replicas\n'
        'conflicts with "b":\n- .spec.template.spec.containers[name="web"].image'
    )


def test_an_object_nobody_manages_is_first_owned_by_before_first_apply() -> None:
    with pytest.raises(
        ConflictError, match=r'"before-first-apply" using apps/v1: \.spec\.replicas'
    ):
        apply_config(live([]), config(replicas=5), "kubectl", node())
    result = apply_config(live([]), config(replicas=5), "kubectl", node(), force=True)
    assert ("before-first-apply", "Update", "apps/v1", "") in managers(result)


def test_unchanged_objects_keep_their_times() -> None:
    first = apply_config(live([]), config(**web()), "kubectl", node(), force=True, now=NOW)
    again = apply_config(first, config(**web()), "kubectl", node(), now="2030-01-01T00:00:00Z")
    assert again == first


def test_list_map_keys_and_their_defaults() -> None:
    ports = [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}]
    spec = {"template": {"spec": {"containers": [{"name": "web", "ports": ports}]}}}
    result = apply_config(live([]), config(**spec), "m", node(), force=True)
    keys = managers(result)[("m", "Apply", "", "")]
    container = (("f", "spec"), ("f", "template"), ("f", "spec"), ("f", "containers"),
                 ("k", (("name", '"web"'),)), ("f", "ports"))  # fmt: skip
    assert keys.has((*container, ("k", (("containerPort", "80"), ("protocol", '"TCP"')))))
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}
    with pytest.raises(PatchError, match='omits key field "protocol"'):
        apply_config(
            service, {**service, "spec": {"ports": [{"port": 80}]}}, "m", node("v1", "Service")
        )


def test_sets_and_atomic_lists() -> None:
    base = live([entry("m", "Apply", {"f:metadata": {"f:finalizers": {'v:"a"': {}, 'v:"b"': {}}}})])
    base["metadata"]["finalizers"] = ["a", "b", "c"]
    applied = config(**web())
    applied["metadata"]["finalizers"] = ["a", "d"]
    result = apply_config(base, applied, "m", node(), force=True)
    assert result["metadata"]["finalizers"] == ["a", "c", "d"]  # b pruned, c not ours
    args = {"template": {"spec": {"containers": [{"name": "side", "args": ["x", "y"]}]}}}
    twice = apply_config(result, config(**args), "m", node(), force=True)
    args["template"]["spec"]["containers"][0]["args"] = ["z"]
    thrice = apply_config(twice, config(**args), "m", node(), force=True)
    [side] = thrice["spec"]["template"]["spec"]["containers"]  # web: applied before, not now
    assert side == {"name": "side", "image": "busybox", "args": ["z"]}


@pytest.mark.parametrize(
    ("applied", "message", "status"),
    [
        ({"spec": {"bogus": 1}}, ".spec.bogus: field not declared in schema", 500),
        ({"spec": {"replicas": "two"}}, ".spec.replicas: expected numeric", 500),
        ({"apiVersion": "apps/v1beta1"}, "Incorrect version specified in apply patch", 400),
        ({"metadata": {"managedFields": []}}, "metadata.managedFields must be nil", 400),
        (
            {"spec": {"template": {"spec": {"containers": [{"name": "a"}, {"name": "a"}]}}}},
            'duplicate entries for key [name="a"]',
            500,
        ),
    ],
)
def test_rejections(applied: dict[str, Any], message: str, status: int) -> None:
    document = {**config(), **applied}
    with pytest.raises(PatchError) as error:
        apply_config(live([]), document, "m", node())
    assert message in error.value.message
    assert error.value.status == status


def test_kubectl_rewrites_the_last_applied_annotation() -> None:
    before = live([entry("kubectl", "Apply", APPLIED)])
    before["metadata"]["annotations"] = {LAST_APPLIED: "{}", "keep": "me"}
    applied = config(**web("a<b"))
    applied["metadata"]["annotations"] = {"keep": "me"}
    result = apply_config(before, applied, "kubectl", node())
    text = result["metadata"]["annotations"][LAST_APPLIED]
    assert text.endswith("}\n") and "\\u003c" in text
    assert json.loads(text) == applied
    other = apply_config(before, applied, "someone-else", node(), force=True)
    assert other["metadata"]["annotations"][LAST_APPLIED] == "{}"


def test_fields_v1_round_trip() -> None:
    fields = {
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
        "f:spec": {
            "f:ports": {'k:{"port":80,"protocol":"TCP"}': {".": {}, "f:port": {}}},
            "f:finalizers": {'v:"x"': {}},
            "f:args": {"i:0": {}},
        },
    }
    parsed = FieldSet.from_fields_v1(fields)
    assert FieldSet.from_fields_v1(parsed.to_fields_v1()) == parsed
    assert json.loads(json.dumps(parsed.to_fields_v1())) == parsed.to_fields_v1()
    with pytest.raises(ValueError):
        FieldSet.from_fields_v1({"x:y": {}})


def test_an_apply_that_creates_the_object() -> None:
    applied = config(replicas=2, **web())
    created = replay("apply", json.dumps(applied), {}, manager="kubectl")
    assert created["spec"]["replicas"] == 2 and created["kind"] == "Deployment"
    [owner] = created["metadata"]["managedFields"]
    assert (owner["manager"], owner["operation"]) == ("kubectl", "Apply")


def test_merged_lists_follow_the_configuration_from_1_23() -> None:
    """SMD v4.2.1 (Kubernetes 1.23) orders a merged list as the configuration does, items
    only the live object has staying among them; v4.0.2 kept the live order, new items last
    (the default release's lab's answers to random applies, checked while porting
    visitListItems)."""
    node = PatchSchema.bundled(CURRENT).for_kind("apps/v1", "Deployment")

    def pod(*names: str) -> dict[str, Any]:
        containers = [{"name": n, "image": "busybox"} for n in names]
        return {"template": {"spec": {"containers": containers}}}

    head = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}
    live, config = {**head, "spec": pod("a", "x", "b")}, {**head, "spec": pod("b", "c", "a")}

    def names(ordered: bool) -> list[str]:
        result = apply_config(live, config, "m", node, now=NOW, ordered=ordered)
        return [c["name"] for c in result["spec"]["template"]["spec"]["containers"]]

    assert names(False) == ["a", "x", "b", "c"]
    assert names(True) == ["x", "b", "c", "a"]


def test_conflicts_list_a_levels_fields_before_those_below() -> None:
    """Set.Iterate: members of a level first, then each child's, as the server lists them."""
    spec = FieldSet.of(
        (("f", "spec"), ("f", "template"), ("f", "image")),
        (("f", "spec"), ("f", "template"), ("f", "env"), ("f", "value")),
        (("f", "spec"), ("f", "paused")),
    )
    assert [path_text(p) for p in spec.paths()] == [
        ".spec.paused",
        ".spec.template.image",
        ".spec.template.env.value",
    ]


# fixtures/apply-<minor>.json, recorded on the release it names in "release"
APPLY_CASES = json.loads(
    next((Path(__file__).parent / "fixtures").glob("apply-*.json")).read_text()
)


def owned(obj: dict[str, Any], manager: str) -> str:
    entries = obj["metadata"]["managedFields"]
    return json.dumps([e["fieldsV1"] for e in entries if e["manager"] == manager])


def ownership(obj: dict[str, Any]) -> dict[tuple[str, str], FieldSet]:
    """Who owns what: (manager, subresource) → field set (compare() lets a replay own more
    than the server says, since FieldsV1 leaves are empty objects)."""
    entries = obj["metadata"]["managedFields"]
    return {
        (e["manager"], e.get("subresource", "")): FieldSet.from_fields_v1(e["fieldsV1"])
        for e in entries
    }


@pytest.mark.parametrize("case", APPLY_CASES["cases"], ids=lambda case: case["case"])
def test_applies_recorded_on_a_lab(case: dict[str, Any]) -> None:
    """Recorded on a lab (scripts/record_apply_cases.py, of the release the file names): the
    object before, the configuration and the server's answer. The replay predicts the whole
    spec: Go zero values of omitempty fields left out (but owned), dropped fields and nulls
    defaulted again."""
    release = APPLY_CASES["release"]
    before, config, server = case["before"], case["config"], case["server"]
    local = replay("apply", config, before, manager=case["manager"], release=release)
    assert local["spec"] == server["spec"]
    assert local["metadata"].get("labels") == server["metadata"].get("labels")
    for everything in (False, True):
        result = compare(
            "apply",
            config,
            before,
            local,
            server,
            schema=PatchSchema.bundled(release),
            manager=case["manager"],
            everything=everything,
        )
        assert result.mismatches == []
    assert ownership(local) == ownership(server)


def test_zero_values_are_left_out_but_owned() -> None:
    """`paused: false` in an apply: the Go struct's omitempty bool leaves it out of the stored
    object, and the apply owns it all the same."""
    (case,) = [c for c in APPLY_CASES["cases"] if c["case"] == "zero values, created"]
    local = replay("apply", case["config"], {}, manager="m1", release=APPLY_CASES["release"])
    spec, pod = local["spec"], local["spec"]["template"]["spec"]
    assert "paused" not in spec and "minReadySeconds" not in spec and "hostname" not in pod
    assert pod["containers"][0]["env"] == [{"name": "A"}]  # value "" left out
    assert '"f:paused": {}' in owned(local, "m1")
    # 1.20's rules alike; and without a release, the merge as SMD leaves it
    assert "paused" not in replay("apply", case["config"], {}, manager="m1")["spec"]
    merged = apply_config({}, case["config"], "m1", node(), now=NOW)
    assert merged["spec"]["paused"] is False


def test_dropped_fields_are_defaulted_again() -> None:
    """An apply that no longer sets `progressDeadlineSeconds` (100) prunes it, and the API
    server's defaulting (SetDefaults_Deployment) puts 600 back."""
    (case,) = [c for c in APPLY_CASES["cases"] if c["case"] == "dropped fields, defaulted again"]
    assert case["before"]["spec"]["progressDeadlineSeconds"] == 100
    local = replay(
        "apply", case["config"], case["before"], manager="m1", release=APPLY_CASES["release"]
    )
    spec = local["spec"]
    assert (spec["progressDeadlineSeconds"], spec["replicas"], spec["revisionHistoryLimit"]) == (
        600,
        1,
        10,
    )
    assert spec["strategy"]["rollingUpdate"] == {"maxUnavailable": "25%", "maxSurge": "25%"}
    container = spec["template"]["spec"]["containers"][0]
    assert container["imagePullPolicy"] == "IfNotPresent"  # busybox:1 has a tag
    assert "f:progressDeadlineSeconds" not in owned(local, "m1")
