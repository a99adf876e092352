"""Protobuf bodies decode to exactly the JSON the Kubernetes Go code writes for them.

Two sets of fixtures made by Kubernetes 1.20 itself, committed: the compatibility fixtures of
k8s.io/api (every field set) and sparse random objects of every kind (fixtures/gofuzz: nil
pointers, empty slices, zero values), each a protobuf body and its JSON, decoded with the 1.20
schema. (Every other release's fixtures: test_protobuf_releases.py.) Then the decoder's own
rules: which release's schema, kind lookup, unknown kinds and fields, nested envelopes, watch
frames, errors.
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
from k8s_wiretap.kube import schema
from k8s_wiretap.kube.release import CURRENT
from k8s_wiretap.wire.envelope import MAGIC, unwrap
from k8s_wiretap.wire.protowire import BYTES, VARINT, Field, encode
from tests.decode.same import as_served, assert_same

FIXTURES = Path(__file__).parent / "fixtures"
HEAD = FIXTURES / "testdata-HEAD"
# settings.k8s.io/v1alpha1 was removed in 1.20; its fixture outlived it in 1.20.2's testdata.
REMOVED_BEFORE_1_20 = {"settings.k8s.io.v1alpha1.PodPreset"}
POD = "k8s.io.api.core.v1.Pod"
RELEASE = "1.20"  # of the committed fixtures


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
    got = decode_object(body, api_version=api_version, kind=kind, release=RELEASE)
    assert_same(got, as_served(want, api_version, kind))


def test_the_compatibility_fixtures_are_all_there() -> None:
    assert len(HEAD_STEMS) == 133
    assert {p.stem for p in HEAD.glob("*.pb")} == {p.stem for p in HEAD.glob("*.json")}


def test_a_kind_removed_before_1_20_decodes_schemaless() -> None:
    body, want = head_fixture("settings.k8s.io.v1alpha1.PodPreset")
    got = decode_object(body, release=RELEASE)
    assert list(got)[:3] == ["kind", "apiVersion", "$schemaless"]
    assert got["kind"] == want["kind"] and got["apiVersion"] == want["apiVersion"]
    assert got["1"]["1"] == want["metadata"]["name"]  # ObjectMeta.name, read without a schema


# Sparse objects made with the real Go code of 1.20 (fixtures/gofuzz/main.go) and of the default
# release and any pinned pre-release (fixtures/gofuzz/newest/, by `make release`).
SPARSE_RELEASES = tuple(
    minor for minor in schema.RELEASES if (FIXTURES / f"sparse-{minor}.jsonl.gz").exists()
)


def sparse_fixtures(release: str) -> list[dict[str, Any]]:
    with gzip.open(FIXTURES / f"sparse-{release}.jsonl.gz", "rt") as lines:
        return [{**json.loads(line), "release": release} for line in lines]


SPARSE = [case for release in SPARSE_RELEASES for case in sparse_fixtures(release)]


@pytest.mark.parametrize(
    "case",
    SPARSE,
    ids=[f"{c['release']}:{c['apiVersion']}/{c['kind']}#{c['seed']}" for c in SPARSE],
)
def test_sparse_object_decodes_to_its_json(case: dict[str, Any]) -> None:
    api_version, kind = case["apiVersion"], case["kind"]
    body = base64.b64decode(case["pb"])
    got = decode_object(body, api_version=api_version, kind=kind, release=case["release"])
    assert_same(got, as_served(json.loads(case["json"]), api_version, kind))


def test_sparse_fixtures_are_there_for_1_20_and_the_default() -> None:
    assert {"1.20", schema.DEFAULT} <= set(SPARSE_RELEASES)


@pytest.mark.parametrize("release", SPARSE_RELEASES)
def test_sparse_fixtures_cover_every_kind_of_the_schema(release: str) -> None:
    covered = {c["kind"] for c in SPARSE if c["release"] == release}
    kinds = {kind for table in schema.kinds(release).values() for kind in table}
    assert kinds - covered == set()


def test_sparse_fixtures_of_the_newest_release_leave_unset_creation_times_out() -> None:
    cases = [json.loads(c["json"]) for c in SPARSE if c["release"] == schema.DEFAULT]
    metadata = [c["metadata"] for c in cases if isinstance(c.get("metadata"), dict)]
    assert any("creationTimestamp" not in m for m in metadata)
    assert any(m.get("creationTimestamp") for m in metadata)
    assert not any("creationTimestamp" in m and m["creationTimestamp"] is None for m in metadata)


def test_a_status_sent_as_v1_is_found_in_meta_v1() -> None:
    body, want = head_fixture("core.v1.Status")
    assert unwrap(body).api_version == "v1"
    assert_same(decode_object(body, release=RELEASE), want)


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
    got = decode_object(
        envelope("v1", "ConfigMap", encode([Field(1, BYTES, metadata)])), release=RELEASE
    )
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
    got = decode_object(envelope("v1", "ConfigMap", raw), release=RELEASE)
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
    got = decode_watch_event(watch_frame("MODIFIED", body), release=RELEASE)
    assert_same(got, {"type": "MODIFIED", "object": want})


def test_a_watch_event_with_json_inside_keeps_it() -> None:
    body, want = head_fixture("core.v1.WatchEvent")
    assert_same(decode_watch_event(unwrap(body).raw, release=RELEASE), want)


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
    raw = encode([Field(5, BYTES, body)])
    assert_same(decode_schemaless(raw, release=RELEASE)["5"], want)


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


def test_the_release_chooses_the_schema() -> None:
    assert schema.release_for(None) == schema.DEFAULT == CURRENT.minor_version
    assert schema.NEWEST == schema.RELEASES[-1] >= schema.DEFAULT
    assert schema.release_for("v1.29.3") == schema.release_for("1.29") == "1.29"
    assert schema.release_for("v1.30.2-gke.1587003") == "1.30"
    assert schema.release_for("v1.28.9+k3s1") == "1.28"
    assert schema.release_for("v1.19.16") == schema.OLDEST == "1.20"
    assert schema.release_for("v1.99.0") == schema.NEWEST
    with pytest.raises(ValueError, match="not a Kubernetes version"):
        schema.release_for("v2.0.0")
    assert schema.schema("v1.29.3") is schema.schema("1.29")
    assert "Kubernetes 1.29." in schema.schema("1.29")["source"]


def test_a_release_renders_as_its_server_does() -> None:
    """From 1.34 an unset creationTimestamp is left out (omitzero); 1.20-1.33 write null."""
    raw = encode([Field(1, BYTES, encode([Field(1, BYTES, b"web")]))])
    body = envelope("v1", "ConfigMap", raw)
    older: dict[str, Any] = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "web"}}
    older["metadata"]["creationTimestamp"] = None
    assert decode_object(body, release="v1.33.1") == older
    newer = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "web"}}
    assert decode_object(body, release="v1.34.0") == newer
    assert decode_object(body) == decode_object(body, release=schema.DEFAULT) == newer
    stamped = encode([Field(1, BYTES, b"web"), Field(8, BYTES, encode([Field(1, VARINT, 60)]))])
    got = decode_object(envelope("v1", "ConfigMap", encode([Field(1, BYTES, stamped)])))
    assert got["metadata"] == {"name": "web", "creationTimestamp": "1970-01-01T00:01:00Z"}


def test_a_kind_is_known_to_the_releases_that_serve_it() -> None:
    raw = encode([Field(1, BYTES, encode([Field(1, BYTES, b"policy")]))])
    body = envelope("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", raw)
    assert decode_object(body, release="1.20")["$schemaless"] is True
    assert decode_object(body, release=CURRENT.minor_version)["metadata"] == {"name": "policy"}


def test_a_nested_object_is_decoded_by_the_same_release() -> None:
    inner = envelope("v1", "ConfigMap", encode([Field(1, BYTES, b"")]))
    frame = watch_frame("ADDED", inner)
    assert decode_watch_event(frame, release="1.20")["object"]["metadata"] == {
        "creationTimestamp": None
    }
    assert decode_watch_event(frame, release=CURRENT.minor_version)["object"]["metadata"] == {}
