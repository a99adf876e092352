"""JSON merge patch: RFC 7386's examples, and where the API server's library departs from it."""

from __future__ import annotations

from typing import Any

import pytest

from k8s_wiretap.patch import PatchError, apply_merge

# RFC 7386 Appendix A, the cases whose target is an object (an API object always is).
RFC_7386 = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("original", "patch", "expected"), RFC_7386)
def test_rfc_7386_examples(original: Any, patch: Any, expected: Any) -> None:
    assert apply_merge(original, patch) == expected


def test_inputs_are_not_modified() -> None:
    original = {"a": {"b": [1]}}
    patch = {"a": {"b": [2], "c": {"d": None}}}
    apply_merge(original, patch)
    assert original == {"a": {"b": [1]}}
    assert patch == {"a": {"b": [2], "c": {"d": None}}}


def test_nulls_in_new_values_are_pruned_even_in_arrays() -> None:
    """evanphx/json-patch prunes nulls of values stored where there was no object."""
    result = apply_merge({"spec": {"args": ["x"]}}, {"spec": {"args": ["a", None, {"b": None}]}})
    assert result == {"spec": {"args": ["a", {}]}}
    assert apply_merge({}, {"new": {"x": None, "y": [None, 1]}}) == {"new": {"y": [1]}}


def test_a_non_object_replacing_an_object_keeps_its_nulls() -> None:
    assert apply_merge({"a": {"b": 1}}, {"a": [None, 1]}) == {"a": [None, 1]}


def test_a_null_member_of_the_target_is_replaced_like_a_missing_one() -> None:
    assert apply_merge({"a": None}, {"a": {"b": None, "c": 1}}) == {"a": {"c": 1}}


def test_patches_that_are_not_objects() -> None:
    with pytest.raises(PatchError) as array:
        apply_merge({"a": 1}, ["c", None])
    assert array.value.status == 422
    for patch in (None, "bar", 3):
        with pytest.raises(PatchError, match="Invalid JSON Patch"):
            apply_merge({"a": 1}, patch)
