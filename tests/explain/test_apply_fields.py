"""The three-way apply, field by field, on the real recording of the apply story."""

from __future__ import annotations

from functools import cache
from typing import Any

from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.apply_fields import REMOVED, apply_fields, server_side_fields
from tests.recorded import story


@cache
def applies() -> list[list[dict[str, Any]]]:
    """The field explanations of every client-side apply PATCH of the Deployment."""
    analysis = Analysis.of(story())
    found = []
    for exchange in analysis.exchanges:
        if exchange.component != "kubectl" or exchange.info.resource != "deployments":
            continue
        replay = analysis.replay(exchange)
        if replay is None or exchange.info.param("fieldManager") != "kubectl-client-side-apply":
            continue
        fields = apply_fields(replay.body, replay.before, replay.after)
        assert fields is not None
        found.append([f.to_json() for f in fields])
    return found


def test_replicas_2_to_3_is_changed_by_the_file_and_the_revision_left_alone() -> None:
    first = applies()[0]
    assert first == [
        {"path": "/spec/replicas", "change": "set", "reason": "changed by your file",
         "from": 2, "to": 3},
        {"path": "/metadata/annotations/deployment.kubernetes.io~1revision",
         "change": "left alone",
         "reason": "left alone: not in your file, set by kube-controller-manager",
         "from": "1", "to": "1"},
    ]  # fmt: skip


def test_a_new_image_a_removed_port_and_someone_elses_label() -> None:
    """The third apply: after `kubectl scale` (2) and `kubectl label` (team=payments), a
    file with a new image, without the port it had, and 3 replicas again."""
    by_path = {f["path"]: f for f in applies()[1]}
    assert by_path["/spec/replicas"] == {
        "path": "/spec/replicas", "change": "set", "reason": "changed by your file",
        "from": 2, "to": 3,
    }  # fmt: skip
    image = by_path["/spec/template/spec/containers[nginx]/image"]
    assert (image["change"], image["from"], image["to"]) == ("set", "nginx:1.25", "nginx:1.27")
    ports = by_path["/spec/template/spec/containers[nginx]/ports"]
    assert (ports["change"], ports["reason"], ports["to"]) == ("removed", REMOVED, None)
    assert ports["from"] == [{"containerPort": 80, "protocol": "TCP"}]
    label = by_path["/metadata/labels/team"]
    assert label["change"] == "left alone"
    assert label["reason"] == "left alone: not in your file, set by kubectl-label"
    assert label["from"] == label["to"] == "payments"
    assert len(by_path) == 5  # and the controller's revision annotation, left alone


def test_only_client_side_applies_are_explained_this_way() -> None:
    analysis = Analysis.of(story())
    for exchange in analysis.exchanges:
        replay = analysis.replay(exchange)
        if replay is None:
            continue
        fields = apply_fields(replay.body, replay.before, replay.after)
        manager = exchange.info.param("fieldManager")
        assert (fields is not None) == (manager == "kubectl-client-side-apply"), exchange.path


def configmap_applies() -> list[tuple[str, int | None, list[dict[str, Any]]]]:
    """(manager, status, fields) of every server-side apply of the ConfigMap, in order."""
    analysis = Analysis.of(story())
    found = []
    for exchange in analysis.exchanges:
        replay = analysis.replay(exchange)
        if replay is None or replay.type != "apply" or exchange.info.resource != "configmaps":
            # the default release's controllers server-side apply too (ClusterRoles, ServiceCIDRs)
            continue
        manager = exchange.info.param("fieldManager") or ""
        forced = exchange.info.param("force") == "true"
        fields = server_side_fields(
            replay.body, replay.before, replay.after, manager, forced=forced
        )
        assert fields is not None
        found.append((manager, exchange.status, [f.to_json() for f in fields]))
    return found


def test_server_side_apply_owners_a_conflict_and_a_forced_take_over() -> None:
    def brief(fields: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
        return [(f["path"], f["change"], f["reason"]) for f in fields]

    created, changed, refused, forced = configmap_applies()
    assert created[:2] == ("kubectl", 201)
    assert brief(created[2]) == [
        ("/data/colour", "set", "set by your configuration: kubectl owns it"),
        ("/data/size", "set", "set by your configuration: kubectl owns it"),
    ]
    assert brief(changed[2]) == [
        ("/data/colour", "set", "set by your configuration: kubectl owns it"),
        ("/data/size", "removed",
         "removed: no longer in your configuration, and no one else owns it"),
    ]  # fmt: skip
    assert refused[:2] == ("ops", 409)
    assert brief(refused[2]) == [
        ("/data/colour", "conflict", "conflict: kubectl owns it (apply with force to take it over)")
    ]
    assert forced[:2] == ("ops", 200)
    assert brief(forced[2]) == [
        ("/data/colour", "taken over", "taken over from kubectl (forced): ops owns it now")
    ]
    assert (forced[2][0]["from"], forced[2][0]["to"]) == ("green", "red")
