"""Strategic merge patch: every applicable case of Kubernetes 1.20.2's and a newer release's
patch_test.go, run with the metadata of its test schema and that release's rules, then
Kubernetes objects with the built-in table and the rules that changed between releases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.kube.release import CURRENT
from k8s_wiretap.lab.apimodules import module, release
from k8s_wiretap.patch import Node, PatchError, PatchSchema, apply_strategic, drop_unknown_fields
from tests.conftest import load_script
from tests.patch.upstream import (
    NEWER,
    TABLES,
    Case,
    all_cases,
    canonical,
    schema_node,
    sort_cases,
    sort_merge_lists,
)

CASES = all_cases("1.20") + all_cases(NEWER)


def test_every_table_is_there() -> None:
    assert len([c for c in CASES if c.release == "1.20"]) == 270
    assert len([c for c in CASES if c.release == NEWER]) == 297


@pytest.mark.parametrize("case", CASES, ids=[f"{c.release} {c.id}" for c in CASES])
def test_upstream_case(case: Case) -> None:
    node = schema_node(case.schema, case.release)
    if case.error:
        with pytest.raises(PatchError, match=case.error):
            apply_strategic(case.original, case.patch, node, case.release)
        return
    result = apply_strategic(case.original, case.patch, node, case.release)
    assert canonical(result) == canonical(case.expected)


@pytest.mark.lab  # the release's Go modules
def test_the_newer_tables_are_what_the_extractor_makes(tmp_path: Path) -> None:
    """fixtures/smp-NEWER is extracted from that release's apimachinery (the Go module cache)."""
    extract = load_script("extract_smp_cases")
    folder = module(release(NEWER), "k8s.io/apimachinery") / "pkg/util/strategicpatch"
    assert extract.main([str(folder), str(tmp_path)]) == 0
    made = sorted(p.name for p in tmp_path.iterdir())
    assert made == sorted(p.name for p in TABLES[NEWER].iterdir() if p.name != "README.md")
    for name in made:
        assert (tmp_path / name).read_bytes() == (TABLES[NEWER] / name).read_bytes(), name


@pytest.mark.parametrize(("description", "original", "expected"), sort_cases())
def test_sort_helper_matches_upstream(
    description: str, original: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert sort_merge_lists(original, schema_node("mergeItem")) == expected


# -- beyond the upstream tables: Kubernetes objects, the server's lookups and quirks ----------


def deployment_node() -> Node:
    node = PatchSchema.builtin().for_kind("apps/v1", "Deployment")
    assert node is not None
    return node


DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "labels": {"app": "web"}, "finalizers": ["a", "b"]},
    "spec": {
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
        "template": {
            "spec": {
                "containers": [
                    {"name": "web", "image": "nginx", "env": [{"name": "A", "value": "1"}]},
                    {"name": "side", "image": "busybox"},
                ],
                "volumes": [{"name": "data", "emptyDir": {}}],
            }
        },
    },
}


def test_containers_merge_by_name_and_keep_order() -> None:
    patch = {"spec": {"template": {"spec": {"containers": [
        {"name": "side", "image": "busybox:2"},
        {"name": "new", "image": "x"},
    ]}}}}  # fmt: skip
    result = apply_strategic(DEPLOYMENT, patch, deployment_node())
    containers = result["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["web", "side", "new"]
    assert containers[1]["image"] == "busybox:2"
    assert DEPLOYMENT["spec"]["template"]["spec"]["containers"][1]["image"] == "busybox"


def test_volume_source_switch_with_retain_keys() -> None:
    patch = {"spec": {"template": {"spec": {"volumes": [
        {"name": "data", "$retainKeys": ["configMap", "name"], "configMap": {"name": "c"}},
    ]}}}}  # fmt: skip
    result = apply_strategic(DEPLOYMENT, patch, deployment_node())
    assert result["spec"]["template"]["spec"]["volumes"] == [
        {"name": "data", "configMap": {"name": "c"}}
    ]


def test_strategy_retain_keys_and_finalizer_directives() -> None:
    patch = {
        "metadata": {"$deleteFromPrimitiveList/finalizers": ["a"], "finalizers": ["c"]},
        "spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}},
    }
    result = apply_strategic(DEPLOYMENT, patch, deployment_node())
    assert result["spec"]["strategy"] == {"type": "Recreate"}
    assert result["metadata"]["finalizers"] == ["c", "b"]  # new items go first


def test_directives_of_new_values_are_stored_as_sent() -> None:
    """The server's decoder drops them afterwards (drop_unknown_fields)."""
    patch = {"spec": {"selector": {"$patch": "replace", "matchLabels": {"a": "b"}}}}
    result = apply_strategic(DEPLOYMENT, patch, deployment_node())
    assert result["spec"]["selector"] == patch["spec"]["selector"]
    kept = drop_unknown_fields(result, deployment_node())
    assert kept["spec"]["selector"] == {"matchLabels": {"a": "b"}}


def test_what_later_releases_do_with_new_values() -> None:
    """1.22 drops a deletion list with nothing to delete from, 1.24 the nulls of a new map,
    1.28 a new value's directives (each as the default release's lab server answered in
    tests/patch/test_lab_replay.py)."""
    bare = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}
    patch: dict[str, Any] = {
        "metadata": {"$deleteFromPrimitiveList/finalizers": ["x"], "labels": {"a": None, "b": "c"}},
        "spec": {"selector": {"$patch": "replace", "matchLabels": {"a": "b"}}},
    }
    old = apply_strategic(bare, patch, deployment_node())
    assert old["metadata"]["finalizers"] == ["x"]
    assert old["metadata"]["labels"] == {"a": None, "b": "c"}
    assert old["spec"]["selector"] == patch["spec"]["selector"]
    assert apply_strategic(bare, patch, deployment_node(), "v1.20.2") == old
    new = apply_strategic(bare, patch, deployment_node(), CURRENT.git_version)
    assert new == {**bare, "metadata": {"name": "d", "labels": {"b": "c"}}, "spec": {}}
    middle = apply_strategic(bare, patch, deployment_node(), "v1.24.0")
    assert "finalizers" not in middle["metadata"] and middle["spec"] == old["spec"]
    assert middle["metadata"]["labels"] == {"b": "c"}
    # a deletion list of a list without the merge strategy: replaces it, then deletes from it
    node = schema_node("mergeItem")
    original = {"nonMergingIntList": [1, 2, 3]}
    deletion = {"$deleteFromPrimitiveList/nonMergingIntList": [2]}
    assert apply_strategic(original, deletion, node) == {"nonMergingIntList": [2]}
    assert apply_strategic(original, deletion, node, "1.28") == {"nonMergingIntList": [1, 3]}


@pytest.mark.parametrize(
    ("patch", "message", "status"),
    [
        (
            {"spec": {"strategy": {"$retainKeys": "type"}}},
            "invalid patch format of retainKeys",
            400,
        ),
        (
            {"spec": {"strategy": {"$retainKeys": ["type"], "x": 1}}},
            "invalid patch format of retainKeys",
            400,
        ),
        (
            {"metadata": {"$deleteFromPrimitiveListfinalizers": ["a"]}},
            "invalid patch format of primitive list",
            400,
        ),
        (
            {"metadata": {"$setElementOrder": ["a"]}},
            "invalid patch format of setElementOrder list",
            400,
        ),
        (
            {"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}},
            "map: map[image:x] does not contain declared merge key: name",
            500,
        ),
        (
            {"spec": {"template": {"spec": {"containers": [{"name": "web", "$patch": "frob"}]}}}},
            "unknown patch type: frob in map: map[$patch:frob name:web]",
            500,
        ),
        (
            {"spec": {"template": {"spec": {"containers": [{"name": "web", "$patch": "merge"}]}}}},
            "merging lists cannot yet be specified in the patch",
            500,
        ),
        (
            {"metadata": {"ownerReferences": [[1]]}},
            "lists of lists are not supported",
            422,
        ),
        (
            {"spec": {"template": {"spec": {"containers": ["x"]}}}},
            "list element types are not identical",
            500,
        ),
        ({"metadata": {"finalizers": [{"x": 1}]}}, "list element types are not identical", 500),
        ({"spec": {"strategy": {"$patch": 7}}}, "unknown patch type: %!s(int64=7) in map", 500),
    ],
)
def test_rejections(patch: dict[str, Any], message: str, status: int) -> None:
    original = {**DEPLOYMENT, "metadata": {**DEPLOYMENT["metadata"], "ownerReferences": []}}
    with pytest.raises(PatchError) as error:
        apply_strategic(original, patch, deployment_node())
    assert message in error.value.message
    assert error.value.status == status


def test_lookups_follow_go_types() -> None:
    crd = PatchSchema.builtin().for_kind("apiextensions.k8s.io/v1beta1", "CustomResourceDefinition")
    schema = {"openAPIV3Schema": {"properties": {"a": {"type": "string"}}}}
    original = {"spec": {"validation": schema}}
    patch = {"spec": {"validation": {"openAPIV3Schema": {"properties": {"a": {"type": "x"}}}}}}
    with pytest.raises(PatchError, match="data type is not struct, instead is: map"):
        apply_strategic(original, patch, crd)
    raw = {"spec": {"template": {"metadata": {"annotations": {"a": "b"}}}}}
    with pytest.raises(PatchError, match='unable to find api field in struct DeploymentSpec for '
                       'the json field "bogus"'):  # fmt: skip
        apply_strategic({"spec": {"bogus": {}}}, {"spec": {"bogus": {"a": 1}}}, deployment_node())
    assert apply_strategic({}, raw, deployment_node()) == raw


def test_without_a_schema_maps_merge_and_lists_are_replaced() -> None:
    original = {"a": {"b": 1, "l": [1, 2]}, "c": 3}
    patch = {"a": {"l": [3], "d": None}, "c": None}
    assert apply_strategic(original, patch, None) == {"a": {"b": 1, "l": [3]}}


def test_patches_that_are_not_objects() -> None:
    with pytest.raises(PatchError, match="cannot unmarshal array") as error:
        apply_strategic({}, [], deployment_node())
    assert error.value.status == 400
