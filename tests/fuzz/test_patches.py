"""Fuzzing the patch appliers (k8s_wiretap.patch): the recorded PATCH requests of the lab's
story (strategic merge, merge, JSON patch, apply) replayed on the objects they produced,
their bodies mutated as bytes, or as JSON (a value anywhere replaced by another, directives
such as `$patch` and `$retainKeys` included), and JSON patches made of operations on the
object's real paths. Each returns an object or raises PatchError, as the package promises.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from k8s_wiretap.kube.release import CURRENT
from k8s_wiretap.patch import PatchError, apply_json_patch, replay
from tests.fuzz.seeds import FUZZ, mutated, seeds

RELEASES = st.sampled_from((None, "1.20", CURRENT.minor_version))
PATCH_TYPES = (
    "application/strategic-merge-patch+json",
    "application/merge-patch+json",
    "application/json-patch+json",
    "application/apply-patch+yaml",
)
KINDS = st.sampled_from(PATCH_TYPES)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**64), 2**64), st.floats(), st.text(max_size=6)
)
KEYS = st.one_of(
    st.text(max_size=6),
    st.sampled_from(
        (
            "$patch",
            "$retainKeys",
            "$setElementOrder/containers",
            "$deleteFromPrimitiveList/finalizers",
            "metadata",
            "name",
            "spec",
            "containers",
            "managedFields",
            "apiVersion",
            "kind",
        )
    ),
)
VALUES = st.recursive(
    st.one_of(SCALARS, st.sampled_from(("replace", "merge", "delete", "retainKeys"))),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=10,
)


@st.composite
def perturbed(draw: st.DrawFn, value: Any) -> Any:
    """`value` with one value somewhere in it replaced (or a key added)."""
    if isinstance(value, dict) and value and draw(st.integers(0, 3)):
        key = draw(st.sampled_from(sorted(value)))
        return {**value, key: draw(perturbed(value[key]))}
    if isinstance(value, list) and value and draw(st.integers(0, 3)):
        at = draw(st.integers(0, len(value) - 1))
        return [*value[:at], draw(perturbed(value[at])), *value[at + 1 :]]
    if isinstance(value, dict) and draw(st.booleans()):
        return {**value, draw(KEYS): draw(VALUES)}
    return draw(VALUES)


def paths(value: Any, prefix: str = "") -> list[str]:
    """The JSON pointers into `value` (and one past each list's end)."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, f"{prefix}/{key.replace('~', '~0').replace('/', '~1')}")
    elif isinstance(value, list):
        for at, item in enumerate(value):
            found += paths(item, f"{prefix}/{at}")
        found.append(f"{prefix}/-")
    return found


PATCH = st.deferred(lambda: st.sampled_from(seeds().patches))


CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}


def test_bytes_that_are_not_utf8() -> None:
    """Found by the fuzzing below (a UnicodeDecodeError escaped): read as Go reads them."""
    for kind in PATCH_TYPES:
        with pytest.raises(PatchError) as refused:
            replay(kind, b"\xfb{}", CONFIGMAP)
        assert refused.value.status in (400, 415)
    patched = replay("application/merge-patch+json", b'{"data":{"k":"\xff"}}', CONFIGMAP)
    assert patched["data"] == {"k": "\ufffd"}  # in a string: U+FFFD, as Go's encoding/json


def test_json_constants_go_does_not_read() -> None:
    """Found by the fuzzing below (a ValueError escaped on `[Infinity]`): NaN and Infinity
    are not JSON to Go's encoding/json, so the server refuses the body."""
    for body in (b"[Infinity]", b'{"data": {"k": NaN}}', b'{"a": -Infinity}'):
        for kind in PATCH_TYPES[:3]:
            with pytest.raises(PatchError) as refused:
                replay(kind, body, CONFIGMAP)
            assert refused.value.status == 400, (kind, body)


def replayed(kind: str, body: Any, before: dict[str, Any], release: str | None) -> None:
    with contextlib.suppress(PatchError):
        assert replay(kind, body, before, release=release) is not None


@FUZZ
@given(PATCH, RELEASES, st.data())
def test_patch_bodies_as_bytes(patch: Any, release: str | None, data: st.DataObject) -> None:
    kind, body, before = patch
    replayed(kind, data.draw(mutated(body)), before, release)


@FUZZ
@given(PATCH, KINDS, RELEASES, st.data())
def test_patch_bodies_as_json(patch: Any, kind: str, release: str | None, data: Any) -> None:
    _, body, before = patch
    try:
        document = json.loads(body)
    except ValueError:
        document = {}  # an apply body in YAML
    replayed(kind, json.dumps(data.draw(perturbed(document))).encode(), before, release)


@FUZZ
@given(PATCH, RELEASES, st.data())
def test_json_patch_operations(patch: Any, release: str | None, data: st.DataObject) -> None:
    _, _, before = patch
    pointers = st.one_of(st.sampled_from(paths(before)), st.text(max_size=8))
    operation = st.fixed_dictionaries(
        {"op": st.sampled_from(("add", "remove", "replace", "move", "copy", "test", "x"))},
        optional={"path": pointers, "from": pointers, "value": VALUES},
    )
    operations = data.draw(st.lists(st.one_of(operation, VALUES), max_size=4))
    with contextlib.suppress(PatchError):
        apply_json_patch(before, operations, release)
