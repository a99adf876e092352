"""replay(): one call per recorded PATCH, whatever its Content-Type and body form."""

from __future__ import annotations

import pytest

from k8s_wiretap.patch import PatchError, decode_patch_body, patch_kind, replay

CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}
WIDGET = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {}}


def test_every_kind_and_body_form() -> None:
    expected = {**CONFIGMAP, "data": {"a": "1", "b": "2"}}
    assert replay("strategic", b'{"data":{"b":"2"}}', CONFIGMAP) == expected
    assert replay("application/merge-patch+json", '{"data":{"b":"2"}}', CONFIGMAP) == expected
    operations = [{"op": "add", "path": "/data/b", "value": "2"}]
    assert replay("application/json-patch+json; charset=utf-8", operations, CONFIGMAP) == expected
    config = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {b: '2'}\n"
    applied = replay("application/apply-patch+yaml", config, CONFIGMAP, manager="m")
    assert applied["data"] == {"a": "1", "b": "2"}  # "a" belongs to before-first-apply


def test_unknown_fields_are_dropped_as_the_decoder_drops_them() -> None:
    patch = {"data": {"x": None}, "bogus": 1, "metadata": {"labels": {"l": None}}}
    result = replay("strategic", patch, CONFIGMAP)
    assert "bogus" not in result
    # labels were missing: the patch's map is stored as sent, and a null value decodes to ""
    assert result["metadata"]["labels"] == {"l": ""}


def test_custom_resources_take_no_strategic_merge_patch() -> None:
    with pytest.raises(PatchError, match="unknown format") as error:
        replay("strategic", {"spec": {"a": 1}}, WIDGET)
    assert error.value.status == 415
    assert replay("merge", {"spec": {"a": 1}}, WIDGET)["spec"] == {"a": 1}


def test_bodies_that_do_not_decode() -> None:
    with pytest.raises(PatchError) as error:
        replay("strategic", b"{not json", CONFIGMAP)
    assert error.value.status == 400
    with pytest.raises(PatchError) as unsupported:
        replay("text/plain", b"{}", CONFIGMAP)
    assert unsupported.value.status == 415
    assert decode_patch_body("apply", "a: [1, 2]") == {"a": [1, 2]}
    assert decode_patch_body("json", "[1e400]") == [float("inf")]
    assert decode_patch_body("json", "[123456789012345678901]") == [1.2345678901234568e20]
    assert patch_kind("Merge") == "merge" and patch_kind("application/json") is None
