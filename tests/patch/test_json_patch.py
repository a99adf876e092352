"""JSON patch: RFC 6902's examples (checked against the `jsonpatch` package as well), and the
deviations of evanphx/json-patch v4.9.0 that the API server applies patches with."""

from __future__ import annotations

from typing import Any

import jsonpatch
import pytest

from k8s_wiretap.kube.release import CURRENT
from k8s_wiretap.patch import PatchError, apply_json_patch
from k8s_wiretap.patch.json_patch import MAX_OPERATIONS

# RFC 6902 Appendix A (A.13, a document with a duplicate member, is not a decoded value).
Document = dict[str, Any]
Operations = list[dict[str, Any]]
RFC_6902_OK: dict[str, tuple[Document, Operations]] = {
    "A.1": ({"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux"}]),
    "A.2": ({"foo": ["bar", "baz"]}, [{"op": "add", "path": "/foo/1", "value": "qux"}]),
    "A.3": ({"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}]),
    "A.4": ({"foo": ["bar", "qux", "baz"]}, [{"op": "remove", "path": "/foo/1"}]),
    "A.5": ({"baz": "qux", "foo": "bar"}, [{"op": "replace", "path": "/baz", "value": "boo"}]),
    "A.6": (
        {"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
        [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
    ),
    "A.7": (
        {"foo": ["all", "grass", "cows", "eat"]},
        [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
    ),
    "A.8": (
        {"baz": "qux", "foo": ["a", 2, "c"]},
        [
            {"op": "test", "path": "/baz", "value": "qux"},
            {"op": "test", "path": "/foo/1", "value": 2},
        ],
    ),
    "A.10": ({"foo": "bar"}, [{"op": "add", "path": "/child", "value": {"grandchild": {}}}]),
    "A.11": ({"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux", "xyz": 123}]),
    "A.14": ({"/": 9, "~1": 10}, [{"op": "test", "path": "/~01", "value": 10}]),
    "A.16": ({"foo": ["bar"]}, [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}]),
}
RFC_6902_ERRORS: dict[str, tuple[Document, Operations, str]] = {
    "A.9": ({"baz": "qux"}, [{"op": "test", "path": "/baz", "value": "bar"}], "testing value"),
    "A.12": ({"foo": "bar"}, [{"op": "add", "path": "/baz/bat", "value": "qux"}], "missing path"),
    "A.15": ({"/": 9, "~1": 10}, [{"op": "test", "path": "/~01", "value": "10"}], "testing"),
}


@pytest.mark.parametrize("name", RFC_6902_OK)
def test_rfc_6902_examples(name: str) -> None:
    document, patch = RFC_6902_OK[name]
    assert apply_json_patch(document, patch) == jsonpatch.apply_patch(document, patch)


@pytest.mark.parametrize("name", RFC_6902_ERRORS)
def test_rfc_6902_error_examples(name: str) -> None:
    document, patch, message = RFC_6902_ERRORS[name]
    with pytest.raises((jsonpatch.JsonPatchException, jsonpatch.JsonPointerException)):
        jsonpatch.apply_patch(document, patch)
    with pytest.raises(PatchError, match=message) as error:
        apply_json_patch(document, patch)
    assert error.value.status == 422


def apply(document: dict[str, Any], *operations: dict[str, Any]) -> Any:
    return apply_json_patch(document, list(operations))


def test_replace_of_a_missing_member_adds_it() -> None:
    assert apply({"a": 1}, {"op": "replace", "path": "/b", "value": 2}) == {"a": 1, "b": 2}
    with pytest.raises(jsonpatch.JsonPatchConflict):
        jsonpatch.apply_patch({"a": 1}, [{"op": "replace", "path": "/b", "value": 2}])


def test_negative_indices_count_from_the_end() -> None:
    assert apply({"l": [1, 2, 3]}, {"op": "remove", "path": "/l/-1"}) == {"l": [1, 2]}
    assert apply({"l": [1, 2]}, {"op": "add", "path": "/l/-1", "value": 9}) == {"l": [1, 2, 9]}
    assert apply({"l": [1, 2]}, {"op": "add", "path": "/l/-3", "value": 9}) == {"l": [9, 1, 2]}
    with pytest.raises(PatchError, match="invalid index"):
        apply({"l": [1, 2]}, {"op": "add", "path": "/l/-4", "value": 9})
    with pytest.raises(PatchError) as panic:
        apply({"l": [1, 2]}, {"op": "replace", "path": "/l/-1", "value": 9})
    assert panic.value.status == 500


def test_indices_are_parsed_as_strconv_atoi_does() -> None:
    assert apply({"l": [1, 2]}, {"op": "remove", "path": "/l/01"}) == {"l": [1]}
    assert apply({"l": [1, 2]}, {"op": "remove", "path": "/l/+0"}) == {"l": [2]}
    with pytest.raises(PatchError, match='parsing " 1": invalid syntax'):
        apply({"l": [1, 2]}, {"op": "remove", "path": "/l/ 1"})


def test_the_first_part_of_a_path_is_ignored() -> None:
    assert apply({"a": {}}, {"op": "add", "path": "x/b", "value": 1}) == {"a": {}, "b": 1}
    assert apply({}, {"op": "add", "path": "/", "value": 1}) == {"": 1}
    with pytest.raises(PatchError, match="missing path"):
        apply({}, {"op": "add", "path": "", "value": 1})


def test_missing_values_and_nulls() -> None:
    assert apply({}, {"op": "add", "path": "/a"}) == {"a": None}
    assert apply({"a": 1}, {"op": "test", "path": "/b", "value": None}) == {"a": 1}
    assert apply({"a": None}, {"op": "test", "path": "/a", "value": None}) == {"a": None}
    with pytest.raises(PatchError) as panic:
        apply({"a": 1}, {"op": "test", "path": "/b"})
    assert panic.value.status == 500
    with pytest.raises(PatchError, match="testing value /a failed"):
        apply({"a": 1}, {"op": "test", "path": "/a"})


def test_test_compares_json_text_of_numbers() -> None:
    assert apply({"a": 1}, {"op": "test", "path": "/a", "value": 1.0}) == {"a": 1}
    with pytest.raises(PatchError):
        apply({"a": 1}, {"op": "test", "path": "/a", "value": True})


def test_messages_and_statuses() -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"op": "remove", "path": "/x"}, "error in remove for path: '/x': Unable to remove "
         "nonexistent key: x: missing value"),
        ({"op": "add", "path": "/x/y", "value": 1},
         'add operation does not apply: doc is missing path: "/x/y": missing value'),
        ({"op": "frob", "path": "/x"}, "Unexpected kind: frob"),
        ({"op": "move", "from": "/x", "path": "/y"}, "error in move for path: 'x': Unable to "
         "remove nonexistent key: x: missing value"),
        ({"op": "replace", "value": 1}, "replace operation failed to decode path: operation "
         "missing path field: missing value"),
    ]  # fmt: skip
    for operation, message in cases:
        with pytest.raises(PatchError) as error:
            apply({}, operation)
        assert error.value.message == message
        assert error.value.status == 422
        assert error.value.server_message.startswith("the server rejected our request")


def test_patch_documents_that_are_not_lists() -> None:
    with pytest.raises(PatchError, match="cannot unmarshal object") as error:
        apply_json_patch({}, {"op": "add"})
    assert error.value.status == 400
    with pytest.raises(PatchError, match="cannot unmarshal string"):
        apply_json_patch({}, ["add"])
    with pytest.raises(PatchError, match="Unexpected kind: unknown"):
        apply_json_patch({}, [None])


def test_operation_limit_and_copy_limit() -> None:
    with pytest.raises(PatchError) as too_many:
        apply_json_patch({}, [{"op": "test", "path": "/a", "value": None}] * (MAX_OPERATIONS + 1))
    assert too_many.value.status == 413
    big = {"a": "x" * (1024 * 1024)}
    copies = [{"op": "copy", "from": "/a", "path": f"/c{i}"} for i in range(3)]
    with pytest.raises(PatchError, match="accumulated size increase"):
        apply_json_patch(big, copies)


def test_inputs_are_not_modified() -> None:
    document = {"a": [1, {"b": 2}]}
    patch: Operations = [
        {"op": "add", "path": "/c", "value": {"d": [1]}},
        {"op": "add", "path": "/c/d/-", "value": 2},
    ]
    assert apply_json_patch(document, patch) == {"a": [1, {"b": 2}], "c": {"d": [1, 2]}}
    assert document == {"a": [1, {"b": 2}]}
    assert patch[0]["value"] == {"d": [1]}


def test_what_later_releases_of_the_library_do() -> None:
    """json-patch v4.12 (Kubernetes 1.23+) counts negative indices from the end everywhere and
    replaces or tests the whole document at ""; v4.13 (1.35+) lets `test` without a value
    of a missing member pass (each from the library's source; 1.20 panics or misses)."""

    def on(release: str, document: dict[str, Any], *operations: dict[str, Any]) -> Any:
        return apply_json_patch(document, list(operations), release)

    numbers = {"l": [1, 2, 3]}
    assert on(CURRENT.git_version, numbers, {"op": "replace", "path": "/l/-1", "value": 9}) == {
        "l": [1, 2, 9]
    }
    assert on("1.23", numbers, {"op": "test", "path": "/l/-3", "value": 1}) == numbers
    nested = {"l": [{"a": 1}]}
    assert on(CURRENT.minor_version, nested, {"op": "add", "path": "/l/-1/b", "value": 2}) == {
        "l": [{"a": 1, "b": 2}]
    }
    with pytest.raises(PatchError, match="doc is missing key: /l/-4"):
        on(CURRENT.minor_version, numbers, {"op": "replace", "path": "/l/-4", "value": 9})
    with pytest.raises(PatchError) as panic:
        on("1.22", numbers, {"op": "replace", "path": "/l/-1", "value": 9})
    assert panic.value.status == 500
    assert on(
        CURRENT.minor_version, {"a": 1}, {"op": "replace", "path": "", "value": {"b": 2}}
    ) == {"b": 2}
    assert on(CURRENT.minor_version, {"a": 1}, {"op": "test", "path": "", "value": {"a": 1}}) == {
        "a": 1
    }
    with pytest.raises(PatchError, match="testing value  failed"):
        on(CURRENT.minor_version, {"a": 1}, {"op": "test", "path": "", "value": {"a": 2}})
    with pytest.raises(PatchError, match="must be object or array"):
        on(CURRENT.minor_version, {"a": 1}, {"op": "replace", "path": "", "value": 3})
    with pytest.raises(PatchError, match="doc is missing path: : missing value"):
        on("1.20", {"a": 1}, {"op": "replace", "path": "", "value": {"b": 2}})
    assert on("1.35", {"a": 1}, {"op": "test", "path": "/b"}) == {"a": 1}
    with pytest.raises(PatchError) as nil:
        on("1.34", {"a": 1}, {"op": "test", "path": "/b"})
    assert nil.value.status == 500
