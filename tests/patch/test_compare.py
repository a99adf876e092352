"""compare(): the replay against the server's answer, on what the patch touched."""

from __future__ import annotations

import copy
import json
from typing import Any

from k8s_wiretap.kube.release import CURRENT
from k8s_wiretap.patch import compare, patch_kind, replay

BEFORE: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "resourceVersion": "1", "labels": {"app": "web", "x": "1"}},
    "spec": {
        "replicas": 1,
        "template": {
            "spec": {
                "containers": [
                    {"name": "web", "image": "nginx", "imagePullPolicy": "Always",
                     "resources": {"limits": {"cpu": "1"}}},
                ]
            }
        },
    },
    "status": {"replicas": 1},
}  # fmt: skip


def server_after(change: Any) -> dict[str, Any]:
    after = copy.deepcopy(BEFORE)
    change(after)
    after["metadata"]["resourceVersion"] = "2"
    after["metadata"]["generation"] = 2
    after["status"] = {"replicas": 3}
    return after


def check(kind: str, patch: Any, server: dict[str, Any]) -> tuple[bool | None, list[str]]:
    local = replay(kind, patch, BEFORE)
    result = compare(kind, patch, BEFORE, local, server)
    return result.matches, result.mismatches


def containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = obj["spec"]["template"]["spec"]["containers"]
    return result


def test_a_faithful_server_matches() -> None:
    patch = {"spec": {"replicas": 3}, "metadata": {"labels": {"x": None}}}

    def change(obj: dict[str, Any]) -> None:
        obj["spec"]["replicas"] = 3
        del obj["metadata"]["labels"]["x"]

    server = server_after(change)
    assert check("strategic", patch, server) == (True, [])
    assert check("application/merge-patch+json", json.dumps(patch), server) == (True, [])


def test_differences_on_touched_fields_are_reported() -> None:
    patch = {"spec": {"replicas": 3}, "metadata": {"labels": {"x": None}}}
    server = server_after(lambda o: o["spec"].update(replicas=2))
    matches, mismatches = check("strategic", patch, server)
    assert matches is False
    assert sorted(mismatches) == [
        ".metadata.labels.x: the server kept it, the replay removed it",
        ".spec.replicas: 3 here, 2 on the server",
    ]


def test_untouched_fields_and_server_fields_do_not_count() -> None:
    server = server_after(lambda o: o["metadata"]["labels"].update(app="changed"))
    assert check("strategic", {"spec": {"replicas": 1}}, server) == (True, [])


def test_defaults_in_added_parts_do_not_count_but_values_do() -> None:
    new = {"name": "side", "image": "busybox"}
    patch = {"spec": {"template": {"spec": {"containers": [new]}}}}
    defaulted = {**new, "imagePullPolicy": "IfNotPresent", "terminationMessagePath": "/dev/x"}
    server = server_after(lambda o: containers(o).insert(0, defaulted))  # new items go first
    assert check("strategic", patch, server) == (True, [])
    wrong = server_after(lambda o: containers(o).insert(0, {**defaulted, "image": "other"}))
    matches, mismatches = check("strategic", patch, wrong)
    assert matches is False
    assert mismatches == [
        '.spec.template.spec.containers[name="side"].image: "busybox" here, "other" on the server'
    ]


def test_order_of_merged_lists_counts() -> None:
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "x"}]}}}}
    flipped = server_after(lambda o: containers(o).append({"name": "a", "image": "x"}))
    local = replay("strategic", patch, BEFORE)
    assert [c["name"] for c in containers(local)] == ["a", "web"]  # new items go first
    result = compare("strategic", patch, BEFORE, local, flipped)
    assert result.matches is False
    assert 'items [name="a"] [name="web"] here' in result.mismatches[0]


def test_quantities_compare_by_value() -> None:
    patch = {"spec": {"template": {"spec": {"containers": [
        {"name": "web", "resources": {"limits": {"cpu": "0.5", "memory": "1Gi"}}}
    ]}}}}  # fmt: skip
    limits = {"cpu": "500m", "memory": "1024Mi"}
    server = server_after(lambda o: containers(o)[0]["resources"].update(limits=limits))
    assert check("strategic", patch, server) == (True, [])


def test_json_patch_lists_compare_whole() -> None:
    patch = [{"op": "add", "path": "/spec/template/spec/containers/0/args", "value": ["a"]}]
    server = server_after(lambda o: containers(o)[0].update(args=["a"]))
    assert check("json", patch, server) == (True, [])
    other = server_after(lambda o: containers(o)[0].update(args=["b"]))
    assert check("json", patch, other)[0] is False


def test_nothing_to_compare_against() -> None:
    status = {"kind": "Status", "code": 422}
    assert compare("strategic", {}, BEFORE, BEFORE, status).matches is None
    assert compare("text/plain", {}, BEFORE, BEFORE, BEFORE).matches is None
    assert patch_kind("application/apply-patch+yaml; charset=utf-8") == "apply"


def test_server_side_apply_checks_what_the_manager_gave_up() -> None:
    item: dict[str, Any] = {'k:{"name":"web"}': {".": {}, "f:name": {}, "f:image": {}}}
    owned = {"f:spec": {"f:minReadySeconds": {}, "f:template": {"f:spec": {"f:containers": item}}}}
    before = copy.deepcopy(BEFORE)
    before["spec"]["minReadySeconds"] = 5  # no default: pruned, it is gone
    before["metadata"]["managedFields"] = [
        {"manager": "m", "operation": "Apply", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
         "fieldsV1": owned}
    ]  # fmt: skip
    spec = {"template": {"spec": {"containers": [{"name": "web", "image": "n"}]}}}
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}
    config["spec"] = spec
    local = replay("apply", config, before, manager="m")
    assert "minReadySeconds" not in local["spec"]
    server = copy.deepcopy(local)
    assert compare("apply", config, before, local, server, manager="m").matches is True
    server["spec"]["minReadySeconds"] = 7
    result = compare("apply", config, before, local, server, manager="m")
    assert result.mismatches == [".spec.minReadySeconds: the server kept it, the replay removed it"]
    # as it was: no default puts minReadySeconds back (the replay defaults a Deployment as
    # the server does), so the server did not prune it
    server["spec"]["minReadySeconds"] = 5
    result = compare("apply", config, before, local, server, manager="m")
    assert result.mismatches == [".spec.minReadySeconds: the server kept it, the replay removed it"]


def test_server_side_apply_of_a_kind_whose_defaulting_is_not_modelled_is_undecided() -> None:
    """A Service's pruned `sessionAffinity`, back on the server as it was: its defaulting
    (SetDefaults_Service) may have put it there, which the replay does not model."""
    owned: dict[str, Any] = {"f:spec": {"f:sessionAffinity": {}, "f:ports": {}}}
    ports = [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    before = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s", "managedFields": [
            {"manager": "m", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
             "fieldsV1": owned}
        ]},
        "spec": {"ports": ports, "sessionAffinity": "None", "type": "ClusterIP"},
    }  # fmt: skip
    config = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}
    config["spec"] = {"ports": ports}
    local = replay("apply", config, before, manager="m", release=CURRENT.git_version)
    assert "sessionAffinity" not in local["spec"]
    server = copy.deepcopy(local)
    server["spec"]["sessionAffinity"] = "None"
    result = compare("apply", config, before, local, server, manager="m")
    assert result.matches is None
    assert result.mismatches[0].startswith(".spec.sessionAffinity: the server has it as before")
    server["spec"]["sessionAffinity"] = "ClientIP"  # not what it was: no default of this
    assert compare("apply", config, before, local, server, manager="m").matches is False


def test_managed_fields_in_another_order_match_but_other_owners_do_not() -> None:
    """The server orders managedFields by operation, then time in seconds, then manager:
    two entries stamped in the same second come out by name, which a replay done later
    cannot know. Who owns what still counts."""
    entry = {"operation": "Apply", "apiVersion": "apps/v1", "fieldsType": "FieldsV1"}
    mine = {**entry, "manager": "kubectl", "fieldsV1": {"f:spec": {"f:replicas": {}}}}
    theirs = {**entry, "manager": "kubectl-last-applied", "fieldsV1": {"f:metadata": {}}}
    before = copy.deepcopy(BEFORE)
    before["metadata"]["managedFields"] = [theirs]
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}
    config["spec"] = {"replicas": 2}
    local = replay("apply", config, before, manager="kubectl")
    server = copy.deepcopy(local)
    server["metadata"]["managedFields"] = [{**mine, "time": "2026-12-01T00:00:00Z"}, theirs]
    local["metadata"]["managedFields"] = [theirs, {**mine, "time": "2026-12-01T00:00:09Z"}]

    def check() -> Any:
        return compare("apply", config, before, local, server, manager="kubectl", everything=True)

    assert check().matches is True
    server["metadata"]["managedFields"][0] = {**mine, "manager": "someone-else"}
    assert check().matches is False and check().mismatches


def test_managed_fields_own_no_more_and_no_fewer_than_on_the_server() -> None:
    """FieldsV1 leaves are empty objects: as values, one only the replay has would pass."""
    before = copy.deepcopy(BEFORE)
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}
    config["spec"] = {"minReadySeconds": 2}
    local = replay("apply", config, before, manager="m")
    server = copy.deepcopy(local)
    assert compare("apply", config, before, local, server, everything=True).matches is True
    fields: dict[str, Any] = {"f:spec": {"f:minReadySeconds": {}, "f:paused": {}}}
    mine = [e for e in server["metadata"]["managedFields"] if e["manager"] == "m"]
    mine[0]["fieldsV1"] = fields
    result = compare("apply", config, before, local, server, everything=True)
    assert result.mismatches == [".metadata.managedFields: m owns .spec.paused only on the server"]
