"""Random JSON-ish originals and patches: the engines fail only with PatchError, and never
touch their inputs; compare() never fails."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from k8s_wiretap.patch import (
    Node,
    PatchError,
    PatchSchema,
    apply_config,
    apply_json_patch,
    apply_merge,
    apply_strategic,
    compare,
)
from k8s_wiretap.patch.errors import ConflictError
from tests.patch.upstream import schema_node

NOW = "2026-12-01T00:00:00Z"
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

MERGE_ITEM_KEYS = [
    "name", "value", "other", "mergingList", "nonMergingList", "mergingIntList",
    "nonMergingIntList", "mergeItemPtr", "simpleMap", "replacingItem", "retainKeysMap",
    "retainKeysMergingList", "$patch", "$retainKeys", "$setElementOrder/mergingList",
    "$setElementOrder/mergingIntList", "$deleteFromPrimitiveList/mergingIntList",
    "$deleteFromPrimitiveList/mergingList", "$setElementOrder", "$deleteFromPrimitiveListx/y",
]  # fmt: skip
DEPLOYMENT_KEYS = [
    "metadata", "labels", "annotations", "finalizers", "spec", "replicas", "strategy", "type",
    "rollingUpdate", "template", "containers", "name", "image", "env", "value", "ports",
    "containerPort", "protocol", "volumes", "emptyDir", "configMap", "args", "$patch",
    "$retainKeys", "$setElementOrder/containers", "$setElementOrder/env",
    "$deleteFromPrimitiveList/finalizers", "$setElementOrder/finalizers", "selector",
]  # fmt: skip

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["replace", "delete", "merge", "a", "b", "1", "name", "mergingList"]),
)


def documents(keys: list[str]) -> st.SearchStrategy[Any]:
    key = st.one_of(st.sampled_from(keys), st.text(max_size=3))
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(key, inner, max_size=5)
        ),
        max_leaves=25,
    )


def objects(keys: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    key = st.sampled_from(keys)
    return st.dictionaries(key, documents(keys), max_size=5)


def only_patch_errors(function: Any, *args: Any) -> Any:
    frozen = copy.deepcopy([a for a in args if not isinstance(a, Node)])
    try:
        result = function(*args)
    except PatchError as error:
        assert isinstance(error.message, str) and 400 <= error.status < 600
        result = None
    assert [a for a in args if not isinstance(a, Node)] == frozen  # inputs untouched
    return result


@SETTINGS
@given(objects(MERGE_ITEM_KEYS), objects(MERGE_ITEM_KEYS))
def test_strategic_with_the_test_schema(original: dict[str, Any], patch: dict[str, Any]) -> None:
    only_patch_errors(apply_strategic, original, patch, schema_node("mergeItem"))


@SETTINGS
@given(objects(DEPLOYMENT_KEYS), objects(DEPLOYMENT_KEYS))
def test_strategic_with_a_deployment(original: dict[str, Any], patch: dict[str, Any]) -> None:
    node = PatchSchema.builtin().for_kind("apps/v1", "Deployment")
    only_patch_errors(apply_strategic, original, patch, node)
    only_patch_errors(apply_strategic, original, patch, None)


@SETTINGS
@given(objects(DEPLOYMENT_KEYS), documents(DEPLOYMENT_KEYS))
def test_merge(original: dict[str, Any], patch: Any) -> None:
    result = only_patch_errors(apply_merge, original, patch)
    if result is not None and not _null_in_list(patch):
        # idempotent, as RFC 7386 patches are; but evanphx prunes the nulls of a list only
        # when it does not replace an object, so a list with nulls is not
        assert apply_merge(result, patch) == result


def _null_in_list(value: Any, in_list: bool = False) -> bool:
    if value is None:
        return in_list
    if isinstance(value, dict):
        return any(_null_in_list(v, in_list) for v in value.values())
    if isinstance(value, list):
        return any(_null_in_list(v, True) for v in value)
    return False


paths = st.one_of(
    st.sampled_from(["", "/", "/a", "/a/0", "/a/-", "/a/-1", "/a/b/c", "a/b", "/~01", "/0"]),
    st.lists(st.sampled_from(["a", "b", "0", "1", "-", "-1", "01", "~0", "~1"]), max_size=4).map(
        lambda parts: "/" + "/".join(parts)
    ),
)
operations = st.fixed_dictionaries(
    {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "x"])},
    optional={"path": paths, "from": paths, "value": documents(["a", "b"])},
)


@SETTINGS
@given(objects(["a", "b", "0"]), st.lists(st.one_of(operations, scalars), max_size=6))
def test_json_patch(original: dict[str, Any], patch: list[Any]) -> None:
    only_patch_errors(apply_json_patch, original, patch)


@SETTINGS
@given(objects(DEPLOYMENT_KEYS), objects(DEPLOYMENT_KEYS), st.booleans())
def test_server_side_apply(live: dict[str, Any], config: dict[str, Any], force: bool) -> None:
    """Only PatchErrors; a forced apply never conflicts; the result records the applier as
    a manager; applying the same configuration again changes nothing (while anyone manages
    the object)."""
    node = PatchSchema.builtin().for_kind("apps/v1", "Deployment")
    head = {"apiVersion": "apps/v1", "kind": "Deployment"}
    live, config = {**live, **head}, {**config, **head}

    def apply(on: dict[str, Any]) -> Any:
        return apply_config(on, config, "m", node, force=force, now=NOW)

    frozen = copy.deepcopy((live, config))
    try:
        result = apply(live)
    except ConflictError:
        assert not force, "a forced apply took a conflict"
        return
    except PatchError as error:
        assert 400 <= error.status < 600
        return
    finally:
        assert (live, config) == frozen  # inputs untouched
    assert result["kind"] == "Deployment"
    spec = config.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("replicas"), int):
        managers = result["metadata"]["managedFields"]  # m owns spec.replicas now
        assert any(m["manager"] == "m" and m["operation"] == "Apply" for m in managers)
    if (result.get("metadata") or {}).get("managedFields"):
        assert apply(result) == result
    # else the configuration owned nothing (`spec: null` sets no field) and no manager is
    # left: the server's next apply first gives the object's fields to before-first-apply
    # (skipNonAppliedManager), so applying again is not a no-op there either


@SETTINGS
@given(
    st.sampled_from(["strategic", "merge", "json", "apply"]),
    documents(DEPLOYMENT_KEYS),
    objects(DEPLOYMENT_KEYS),
    objects(DEPLOYMENT_KEYS),
    objects(DEPLOYMENT_KEYS),
)
def test_compare_never_fails(
    kind: str, patch: Any, before: dict[str, Any], local: dict[str, Any], server: dict[str, Any]
) -> None:
    head = {"apiVersion": "apps/v1", "kind": "Deployment"}
    result = compare(kind, patch, {**before, **head}, local, {**server, **head}, manager="m")
    if result.matches is None:  # a string is the body's text, and may not be JSON
        assert isinstance(patch, str) and "can not be decoded" in result.mismatches[0]
    else:
        assert result.matches == (not result.mismatches)
