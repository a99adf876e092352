"""The API server's defaulting as the replay applies it (patch/defaulting.py) and its data
(kube/data/defaults-MINOR.yaml); what the lab does with it is in test_apply.py's recorded
cases and test_lab_replay.py's random applies."""

from __future__ import annotations

from typing import Any

import pytest

from k8s_wiretap.kube import schema
from k8s_wiretap.kube.defaults import _document, covered, type_rules
from k8s_wiretap.kube.release import CURRENT, Release
from k8s_wiretap.patch import PatchSchema
from k8s_wiretap.patch.defaulting import COMPUTED, apply_defaults, image_pull_policy
from k8s_wiretap.patch.roundtrip import go_fields


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("nginx", "Always"),  # no tag, no digest: "latest"
        ("nginx:latest", "Always"),
        ("busybox:1", "IfNotPresent"),
        ("registry:5000/team/app", "Always"),  # a port is not a tag
        ("registry:5000/team/app:2", "IfNotPresent"),
        ("app@sha256:" + "a" * 64, "IfNotPresent"),
        ("app:latest@sha256:" + "a" * 64, "Always"),
        ("", "IfNotPresent"),  # ParseImageName fails: no tag
    ],
)
def test_image_pull_policy_follows_the_tag(image: str, policy: str) -> None:
    assert image_pull_policy(image) == policy


def test_every_rule_names_fields_of_its_go_type() -> None:
    """A rule's path and condition are JSON names of the type's Go fields in the default
    release's schema,
    and a computed rule names a function."""
    minor = schema.release_for(CURRENT)
    for message in _document()["types"]:
        rules = type_rules(CURRENT, message)
        assert rules, message
        for rule in rules:
            assert not rule.computed or rule.computed in COMPUTED
            for path in (rule.path, rule.when_path):
                current: str | None = message
                for name in path:
                    fields = go_fields(current, minor) if current else None
                    assert fields is not None and name in fields, (message, path)
                    target = fields[name].get("message")
                    current = target if isinstance(target, str) else None
    assert covered("apps/v1", "Deployment") and not covered("v1", "Service")


def test_a_deployment_is_defaulted_by_its_types_rules_in_order() -> None:
    """SetDefaults_Deployment first (the strategy's type, then its rollingUpdate), then the
    pod template's PodSpec and each container; what is set stays."""
    deployment: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "spec": {
            "replicas": 0,
            "template": {"spec": {"containers": [{"name": "a", "image": "nginx"}]}},
        },
    }
    apply_defaults(deployment, CURRENT.git_version)
    spec = deployment["spec"]
    assert spec["replicas"] == 0
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    container = spec["template"]["spec"]["containers"][0]
    assert container["imagePullPolicy"] == "Always"
    assert spec["template"]["spec"]["dnsPolicy"] == "ClusterFirst"
    recreate: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "spec": {"strategy": {}},
    }
    recreate["spec"]["strategy"]["type"] = "Recreate"
    apply_defaults(recreate, CURRENT.git_version)
    assert recreate["spec"]["strategy"] == {"type": "Recreate"}


def test_a_rule_of_a_later_release_is_left_out() -> None:
    """MaxUnavailableStatefulSet is on by default from the release the rule's `since` says."""
    path = ("spec", "updateStrategy", "rollingUpdate", "maxUnavailable")
    message = "k8s.io.api.apps.v1.StatefulSet"
    [rule] = [rule for rule in type_rules(CURRENT, message) if rule.path == path]
    since = rule.since
    assert since > Release(1, 30)
    assert rule in type_rules(f"{since}.0", message)
    assert rule not in type_rules(f"1.{since.minor - 1}.9", message)


def test_a_custom_resource_is_defaulted_from_its_schema() -> None:
    """Structural defaulting: a missing property with a default gets it, in objects, list
    items and map values (the Widget schema as the default release's lab publishes it in
    OpenAPI v3)."""
    document = {
        "openapi": "3.0.0",
        "components": {
            "schemas": {
                "com.example.v1.Widget": {
                    "type": "object",
                    "x-kubernetes-group-version-kind": [
                        {"group": "example.com", "version": "v1", "kind": "Widget"}
                    ],
                    "properties": {
                        "spec": {
                            "type": "object",
                            "properties": {
                                "color": {"type": "string", "default": "red"},
                                "parts": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "properties": {"n": {"type": "integer", "default": 1}},
                                    },
                                },
                            },
                        }
                    },
                }
            }
        },
    }
    node = PatchSchema.from_openapi(document).for_kind("example.com/v1", "Widget")
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"parts": [{}]}}
    apply_defaults(widget, CURRENT.git_version, node=node)
    assert widget["spec"] == {"parts": [{"n": 1}], "color": "red"}
    blue = {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"color": "blue"}}
    assert apply_defaults(blue, CURRENT.git_version, node=node)["spec"] == {"color": "blue"}
