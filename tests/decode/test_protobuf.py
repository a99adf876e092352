"""Protobuf bodies decode to exactly the JSON the Kubernetes Go code writes for them.

Two sets of fixtures made by Kubernetes itself: the compatibility fixtures of k8s.io/api (every
field set) and sparse random objects of every kind (fixtures/gofuzz: nil pointers, empty
slices, zero values), each a protobuf body and its JSON. Then the decoder's own rules:
kind lookup, unknown kinds and fields, nested envelopes, watch frames, errors.
"""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.decode.protobuf import (
    DecodeError,
    decode_object,
    decode_schemaless,
    decode_watch_event,
    render_message,
)
from k8s_wiretap.wire.envelope import MAGIC, unwrap
from k8s_wiretap.wire.protowire import BYTES, VARINT, Field, encode
from tests.decode.same import as_served, assert_same

FIXTURES = Path(__file__).parent / "fixtures"
HEAD = FIXTURES / "testdata-HEAD"
# settings.k8s.io/v1alpha1 was removed in 1.20; its fixture outlived it in 1.20.2's testdata.
REMOVED_BEFORE_1_20 = {"settings.k8s.io.v1alpha1.PodPreset"}
POD = "k8s.io.api.core.v1.Pod"


def type_of(stem: str) -> tuple[str, str]:
    """(apiVersion, kind) of a fixture named <group>.<version>.<Kind> ("core" for "")."""
    group, version, kind = stem.rsplit(".", 2)
    return (version if group == "core" else f"{group}/{version}"), kind


def head_fixture(stem: str) -> tuple[bytes, Any]:
    return (HEAD / f"{stem}.pb").read_bytes(), json.loads((HEAD / f"{stem}.json").read_text())


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = encode([Field(1, BYTES, api_version.encode()), Field(2, BYTES, kind.encode())])
    return MAGIC + encode([Field(1, BYTES, type_meta), Field(2, BYTES, raw)])


HEAD_STEMS = sorted(p.stem for p in HEAD.glob("*.pb") if p.stem not in REMOVED_BEFORE_1_20)


@pytest.mark.parametrize("stem", HEAD_STEMS)
def test_compatibility_fixture_decodes_to_its_json(stem: str) -> None:
    body, want = head_fixture(stem)
    api_version, kind = type_of(stem)
    # The envelope of a type without TypeMeta (WatchEvent) names no kind: Go decoders are told.
    got = decode_object(body, api_version=api_version, kind=kind)
    assert_same(got, as_served(want, api_version, kind))


def test_the_compatibility_fixtures_are_all_there() -> None:
    assert len(HEAD_STEMS) == 133
    assert {p.stem for p in HEAD.glob("*.pb")} == {p.stem for p in HEAD.glob("*.json")}


def test_a_kind_removed_before_1_20_decodes_schemaless() -> None:
    body, want = head_fixture("settings.k8s.io.v1alpha1.PodPreset")
    got = decode_object(body)
    assert list(got)[:3] == ["kind", "apiVersion", "$schemaless"]
    assert got["kind"] == want["kind"] and got["apiVersion"] == want["apiVersion"]
    assert got["1"]["1"] == want["metadata"]["name"]  # ObjectMeta.name, read without a schema


def sparse_fixtures() -> list[dict[str, Any]]:
    with gzip.open(FIXTURES / "sparse.jsonl.gz", "rt") as lines:
        return [json.loads(line) for line in lines]


SPARSE = sparse_fixtures()


@pytest.mark.parametrize(
    "case", SPARSE, ids=[f"{c['apiVersion']}/{c['kind']}#{c['seed']}" for c in SPARSE]
)
def test_sparse_object_decodes_to_its_json(case: dict[str, Any]) -> None:
    api_version, kind = case["apiVersion"], case["kind"]
    got = decode_object(base64.b64decode(case["pb"]), api_version=api_version, kind=kind)
    assert_same(got, as_served(json.loads(case["json"]), api_version, kind))


def test_sparse_fixtures_cover_every_kind_of_the_schema() -> None:
    from k8s_wiretap.kube import schema

    covered = {c["kind"] for c in SPARSE}
    kinds = {kind for table in schema.kinds().values() for kind in table}
    assert kinds - covered == set()


def test_a_status_sent_as_v1_is_found_in_meta_v1() -> None:
    body, want = head_fixture("core.v1.Status")
    assert unwrap(body).api_version == "v1"
    assert_same(decode_object(body), want)


def test_meta_kinds_are_found_under_any_group_version() -> None:
    raw = encode([Field(1, VARINT, 30), Field(4, BYTES, b"Foreground")])
    got = decode_object(envelope("widgets.example.com/v1", "DeleteOptions", raw))
    assert got == {
        "kind": "DeleteOptions",
        "apiVersion": "widgets.example.com/v1",
        "gracePeriodSeconds": 30,
        "propagationPolicy": "Foreground",
    }


def test_an_unknown_kind_decodes_schemaless_with_a_marker() -> None:
    raw = encode([Field(1, BYTES, encode([Field(1, BYTES, b"w1")])), Field(3, VARINT, 7)])
    got = decode_object(envelope("example.com/v1", "Widget", raw))
    assert got == {
        "kind": "Widget",
        "apiVersion": "example.com/v1",
        "$schemaless": True,
        "1": {"1": "w1"},
        "3": 7,
    }


def test_unknown_fields_of_a_known_message_are_kept() -> None:
    metadata = encode([Field(1, BYTES, b"web"), Field(99, VARINT, 5), Field(98, BYTES, b"x")])
    got = decode_object(envelope("v1", "ConfigMap", encode([Field(1, BYTES, metadata)])))
    assert got["metadata"] == {
        "name": "web",
        "creationTimestamp": None,
        "$unknownFields": {"99": 5, "98": "x"},
    }


def test_an_unknown_field_inside_an_inlined_message_is_kept_with_its_path() -> None:
    source = encode([Field(1, BYTES, encode([Field(1, BYTES, b"/data")])), Field(77, VARINT, 1)])
    volume = encode([Field(1, BYTES, b"data"), Field(2, BYTES, source)])
    got = render_message("k8s.io.api.core.v1.Volume", volume)
    assert got == {"name": "data", "hostPath": {"path": "/data"}, "$unknownFields": {"2.77": 1}}


def test_a_repeated_singular_message_merges_like_protobuf() -> None:
    first = encode([Field(1, BYTES, b"web"), Field(3, BYTES, b"default")])
    second = encode([Field(1, BYTES, b"api")])
    raw = encode([Field(1, BYTES, first), Field(1, BYTES, second)])
    got = decode_object(envelope("v1", "ConfigMap", raw))
    assert got["metadata"] == {"name": "api", "namespace": "default", "creationTimestamp": None}


def test_a_time_seen_twice_is_the_last_one_as_go_replaces_it() -> None:
    early, late = encode([Field(1, VARINT, 1), Field(2, VARINT, 5)]), encode([Field(1, VARINT, 2)])
    raw = encode([Field(8, BYTES, early), Field(8, BYTES, late)])
    got = render_message("k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta", raw)
    assert got == {"creationTimestamp": "1970-01-01T00:00:02Z"}


def test_go_zero_values_and_nil() -> None:
    assert render_message("k8s.io.api.core.v1.ContainerPort", b"") == {"containerPort": 0}
    assert render_message("k8s.io.apimachinery.pkg.apis.meta.v1.APIResource", b"") == {
        "name": "",
        "singularName": "",
        "namespaced": False,
        "kind": "",
        "verbs": None,
    }
    verbs = encode([Field(4, BYTES, b"")])  # present but empty: Verbs{} is not nil
    got = render_message("k8s.io.apimachinery.pkg.apis.meta.v1.APIResource", verbs)
    assert got["verbs"] == []


def test_a_list_with_no_items_has_empty_items_as_served() -> None:
    got = decode_object(envelope("v1", "PodList", encode([Field(1, BYTES, b"")])))
    assert got == {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": []}


def watch_frame(event_type: str, raw: bytes) -> bytes:
    extension = encode([Field(1, BYTES, raw)])
    return encode([Field(1, BYTES, event_type.encode()), Field(2, BYTES, extension)])


def test_a_watch_frame_holds_a_nested_envelope() -> None:
    body, want = head_fixture("core.v1.Pod")
    assert_same(
        decode_watch_event(watch_frame("MODIFIED", body)), {"type": "MODIFIED", "object": want}
    )


def test_a_watch_event_with_json_inside_keeps_it() -> None:
    body, want = head_fixture("core.v1.WatchEvent")
    assert_same(decode_watch_event(unwrap(body).raw), want)


def test_a_raw_extension_holding_garbage_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="embedded JSON"):
        decode_watch_event(watch_frame("ADDED", b"{not json"))


def test_schemaless_reads_numbers_strings_messages_and_hex() -> None:
    raw = encode(
        [
            Field(1, VARINT, 150),
            Field(2, BYTES, b"hello"),
            Field(3, BYTES, encode([Field(1, VARINT, 1), Field(2, BYTES, b"x")])),
            Field(4, BYTES, b"\xff\xfe"),
            Field(2, BYTES, b"again"),
        ]
    )
    assert decode_schemaless(raw) == {
        "1": 150,
        "2": ["hello", "again"],
        "3": {"1": 1, "2": "x"},
        "4": "fffe",
    }


def test_schemaless_decodes_a_nested_envelope() -> None:
    body, want = head_fixture("core.v1.ConfigMap")
    assert_same(decode_schemaless(encode([Field(5, BYTES, body)]))["5"], want)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"", "magic"),
        (b'{"kind": "Pod"}', "magic"),
        (MAGIC + b"\x0a\x05\x0a", "past the end"),
        (MAGIC + b"\x0a", "truncated"),
        (MAGIC + b"\x1a\x04gzip", "content encoding"),
        (envelope("v1", "Pod", b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"), "varint"),
        (envelope("v1", "Pod", b"\x0b"), "wire type 3"),
        (envelope("v1", "Pod", b"\x00\x01"), "field number 0"),
    ],
)
def test_garbage_raises_decode_error_with_a_reason(body: bytes, reason: str) -> None:
    with pytest.raises(DecodeError, match=reason):
        decode_object(body)


def test_decode_error_is_a_value_error() -> None:
    assert issubclass(DecodeError, ValueError)


def test_an_unknown_message_name_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="no message"):
        render_message("k8s.io.api.core.v1.Nothing", b"")


def test_impossible_go_values_are_decode_errors() -> None:
    int_or_string = encode([Field(1, VARINT, 7)])
    with pytest.raises(DecodeError, match="IntOrString"):
        render_message("k8s.io.apimachinery.pkg.util.intstr.IntOrString", int_or_string)
    with pytest.raises(DecodeError, match="quantity"):
        render_message("k8s.io.apimachinery.pkg.api.resource.Quantity", b"\x0a\x03abc")


def test_deep_nesting_is_a_decode_error() -> None:
    raw = b""
    for _ in range(3000):  # JSONSchemaProps.not, 3000 levels deep
        raw = encode([Field(28, BYTES, raw)])
    name = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"
    with pytest.raises(DecodeError, match="nested too deeply"):
        render_message(name, raw)
