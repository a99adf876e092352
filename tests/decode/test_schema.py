"""The committed schemas keep their contract, and scripts/generate_schema.py reads Go and proto.

The generator's parsers are tested on small sources here, its pack of every release on small
documents; and full regenerations must equal the committed schemas: 1.20 from the real
sources (K8S_SOURCE, else Debian's source package, fetched once into the cache), the newest
release from its Go modules (k8s_wiretap.lab.apimodules, fetched once into Go's module cache).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from k8s_wiretap.kube import schema, sensitive
from k8s_wiretap.kube.release import CURRENT, Release
from k8s_wiretap.lab import apimodules
from tests.conftest import load_script

TYPES = {"string", "int32", "int64", "bool", "bytes", "double", "float", "uint32", "uint64"}
FIELD_KEYS = {"json", "number", "type", "go", "omitempty"}
OPTIONAL_KEYS = {"message", "key", "value", "inline", "typeMeta", "omitzero"}
PATCH_KEYS = {"patchStrategy", "patchMergeKey", "listType", "listMapKeys"}


def generator() -> ModuleType:
    return load_script("generate_schema")


def check_field(field: dict[str, Any], messages: dict[str, Any]) -> None:
    assert FIELD_KEYS <= set(field) <= FIELD_KEYS | OPTIONAL_KEYS | PATCH_KEYS, field
    assert field["type"] in TYPES | {"message", "map"}
    assert field["go"] in {"value", "pointer", "slice", "map"}
    if field["type"] == "message":
        assert field["message"] in messages
    if field["type"] == "map":
        value = field["value"]
        assert field["key"] in TYPES
        assert value in TYPES if isinstance(value, str) else value["message"] in messages
    if field.get("inline"):
        assert field["json"] == "" and field["type"] == "message"


@pytest.mark.parametrize("release", schema.RELEASES)
def test_the_schema_keeps_its_contract(release: str) -> None:
    document = schema.schema(release)
    assert set(document) == {"source", "kinds", "messages"}
    assert f"Kubernetes {release}." in document["source"]
    messages = document["messages"]
    for entry in messages.values():
        assert set(entry) <= {"fields", "special"}
        for field in entry["fields"]:
            check_field(field, messages)
    for table in document["kinds"].values():
        assert set(table.values()) <= set(messages)


def test_the_schemas_are_of_every_release_from_1_20_on() -> None:
    newest = Release.parse(schema.NEWEST)
    assert tuple(f"1.{n}" for n in range(20, newest.minor + 1)) == schema.RELEASES
    assert "Kubernetes 1.20.2" in schema.schema("1.20")["source"]
    assert CURRENT.minor_version == schema.DEFAULT
    assert f"Kubernetes {CURRENT} " in schema.schema()["source"]
    for minor, pinned in apimodules.RELEASES.items():  # every pinned release has its schema
        assert f"Kubernetes {pinned} " in schema.schema(minor)["source"]


def test_the_schema_covers_the_groups_the_server_serves() -> None:
    kinds = schema.kinds("1.20")
    for api_version in ["v1", "apps/v1", "batch/v1beta1", "meta.k8s.io/v1", "meta.k8s.io/v1beta1"]:
        assert api_version in kinds
    assert kinds["apiextensions.k8s.io/v1"]["CustomResourceDefinition"].endswith(
        ".v1.CustomResourceDefinition"
    )
    assert kinds["apiregistration.k8s.io/v1beta1"]["APIService"].startswith(
        "k8s.io.kube_aggregator"
    )
    assert kinds["v1"]["Pod"] == "k8s.io.api.core.v1.Pod"
    newest = schema.kinds()
    assert "batch/v2alpha1" not in newest  # gone from k8s.io/api in 1.21
    assert "PodSecurityPolicy" not in newest["policy/v1beta1"]  # gone in 1.25
    assert newest["admissionregistration.k8s.io/v1"]["ValidatingAdmissionPolicy"].endswith(
        "v1.ValidatingAdmissionPolicy"
    )


def test_newer_releases_have_the_fields_they_added() -> None:
    def fields(release: str, message: str) -> dict[str, Any]:
        entry = schema.messages(release)[f"k8s.io.api.core.v1.{message}"]
        return {f["json"]: f for f in entry["fields"]}

    assert "restartPolicy" not in fields("1.27", "Container")  # sidecars: 1.28
    assert fields("1.28", "Container")["restartPolicy"]["go"] == "pointer"
    assert "resizePolicy" in fields("1.27", "Container")
    assert "hostIPs" in fields("1.28", "PodStatus") and "hostIPs" not in fields("1.27", "PodStatus")
    meta = "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    stamps = {
        release: next(f for f in schema.messages(release)[meta]["fields"] if f["number"] == 8)
        for release in ("1.33", "1.34")
    }
    assert "omitzero" not in stamps["1.33"] and stamps["1.34"]["omitzero"] is True


def test_fields_are_in_go_order_with_go_json_rules() -> None:
    messages = schema.messages("1.20")
    fields = messages["k8s.io.apimachinery.pkg.apis.meta.v1.OwnerReference"]["fields"]
    assert [f["json"] for f in fields][:2] == ["apiVersion", "kind"]  # numbers 5, 1
    pod = messages["k8s.io.api.core.v1.Pod"]["fields"]
    assert pod[0] == {
        "json": "",
        "number": 0,
        "type": "message",
        "message": "k8s.io.apimachinery.pkg.apis.meta.v1.TypeMeta",
        "go": "value",
        "omitempty": False,
        "inline": True,
    }
    ports = next(
        f for f in messages["k8s.io.api.core.v1.Container"]["fields"] if f["json"] == "ports"
    )
    assert ports["patchMergeKey"] == "containerPort"
    assert ports["listMapKeys"] == ["containerPort", "protocol"]


def test_kind_lookup_falls_back_to_meta_v1() -> None:
    meta = "k8s.io.apimachinery.pkg.apis.meta.v1"
    assert schema.lookup_kind("v1", "Status") == f"{meta}.Status"
    assert schema.lookup_kind("meta.k8s.io/v1", "APIGroupList") == f"{meta}.APIGroupList"
    assert schema.lookup_kind("example.com/v1", "WatchEvent") == f"{meta}.WatchEvent"
    assert schema.lookup_kind("example.com/v1", "Widget") is None


GO_SOURCE = """
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

/* A block comment with '*/' quoted: "not a type" */

// Widget is a test.
type Widget struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// +listType=map
	// +listMapKey=name
	Parts []Part `json:"parts" patchStrategy:"merge" patchMergeKey:"name" \
protobuf:"bytes,3,rep,name=parts"`
	Size *int32 `json:"size,omitempty" protobuf:"varint,2,opt,name=size"`
	Hidden string `json:"-"`
	Names Names `json:"names,omitempty" protobuf:"bytes,4,opt,name=names"`
}

type Part struct {
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
}

// Names is a named slice.
type Names []string

type (
	Color string
	Alias = Part
)

func (w Widget) MarshalText() ([]byte, error) { return nil, nil }
"""

PROTO_SOURCE = """
syntax = "proto2";
package k8s.io.api.demo.v1;
import "k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto";
// A comment
message Names {
  repeated string items = 1;
}
message Part {
  optional string name = 1;
}
message Widget {
  optional k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  optional int32 size = 2;
  repeated Part parts = 3;
  optional Names names = 4;
  map<string, bytes> blobs = 5;
}
"""


META_GO = """
package v1

type TypeMeta struct {
	Kind string `json:"kind,omitempty" protobuf:"bytes,1,opt,name=kind"`
	APIVersion string `json:"apiVersion,omitempty" protobuf:"bytes,2,opt,name=apiVersion"`
}

type ObjectMeta struct {
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
}
"""

META_PROTO = """
package k8s.io.apimachinery.pkg.apis.meta.v1;
message ObjectMeta {
  optional string name = 1;
}
message TypeMeta {
  optional string kind = 1;
  optional string apiVersion = 2;
}
"""


def demo_source(gen: ModuleType) -> Any:
    source = gen.Source(gen.Layout("demo", []))
    for path, go, proto in [
        ("k8s.io/apimachinery/pkg/apis/meta/v1", META_GO, META_PROTO),
        ("k8s.io/api/demo/v1", GO_SOURCE, PROTO_SOURCE),
    ]:
        package = gen.GoPackage(path)
        gen.parse_go_file(go, package)
        source.go[path] = package
        proto_package, messages = gen.parse_proto(proto)
        source.proto_package[path] = proto_package
        source.messages.update((m.full_name, m) for m in messages)
    return source


def test_go_declarations_are_read() -> None:
    gen = generator()
    package = gen.GoPackage("k8s.io/api/demo/v1")
    gen.parse_go_file(GO_SOURCE, package)
    assert sorted(package.decls) == ["Alias", "Color", "Names", "Part", "Widget"]
    widget = package.decls["Widget"]
    assert [f.name for f in widget.fields] == ["", "", "Parts", "Size", "Hidden", "Names"]
    assert widget.fields[0].type == ("named", "k8s.io/apimachinery/pkg/apis/meta/v1", "TypeMeta")
    assert widget.fields[2].markers == {"listType": ["map"], "listMapKey": ["name"]}
    assert widget.fields[3].type == ("ptr", ("builtin", "int32"))
    assert package.decls["Alias"].kind == "alias"
    assert package.json_marshalers == set()


def test_proto_messages_are_read() -> None:
    gen = generator()
    package, messages = gen.parse_proto(PROTO_SOURCE)
    widget = {m.full_name: m for m in messages}["k8s.io.api.demo.v1.Widget"]
    assert package == "k8s.io.api.demo.v1"
    assert widget.fields[1].type == "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    assert widget.fields[3].type == "k8s.io.api.demo.v1.Part"
    assert (widget.fields[5].label, widget.fields[5].key, widget.fields[5].type) == (
        "map",
        "string",
        "bytes",
    )


def test_a_message_entry_follows_go() -> None:
    gen = generator()
    source = demo_source(gen)
    with pytest.raises(gen.SchemaError, match="proto fields \\[5\\] have no Go field"):
        gen.message_entry(
            source, "k8s.io/api/demo/v1", source.messages["k8s.io.api.demo.v1.Widget"]
        )
    del source.messages["k8s.io.api.demo.v1.Widget"].fields[5]
    entry = gen.message_entry(
        source, "k8s.io/api/demo/v1", source.messages["k8s.io.api.demo.v1.Widget"]
    )
    fields = {f["json"]: f for f in entry["fields"][1:]}
    assert entry["fields"][0]["number"] == 0 and entry["fields"][0]["inline"]
    assert list(fields) == ["metadata", "parts", "size", "names"]  # Go order, "-" skipped
    assert (
        fields["parts"]["listMapKeys"] == ["name"] and fields["parts"]["patchStrategy"] == "merge"
    )
    assert fields["size"]["go"] == "pointer" and fields["size"]["omitempty"]
    assert fields["names"]["go"] == "slice"
    names = gen.message_entry(
        source, "k8s.io/api/demo/v1", source.messages["k8s.io.api.demo.v1.Names"]
    )
    assert names["special"] == "Slice"


def test_a_go_json_option_it_does_not_know_stops_the_generator() -> None:
    gen = generator()
    package = gen.GoPackage("k8s.io/api/demo/v1")
    gen.parse_go_file(
        'package v1\ntype Part struct {\n\tSize int64 `json:"size,string"`\n}\n', package
    )
    with pytest.raises(gen.SchemaError, match="json options \\['string'\\]"):
        gen.json_tag(package.decls["Part"].fields[0])


def test_omitzero_is_read_where_it_means_left_out_when_null() -> None:
    gen = generator()
    time = {
        "go": "value",
        "type": "message",
        "message": "k8s.io.apimachinery.pkg.apis.meta.v1.Time",
    }
    source = gen.Source(gen.Layout("demo", []))
    source.messages[time["message"]] = gen.ProtoMessage(time["message"])
    gen.check_omitzero(source, time, "ObjectMeta.CreationTimestamp")
    with pytest.raises(gen.SchemaError, match="omitzero on a pointer"):
        gen.check_omitzero(source, {**time, "go": "pointer"}, "X.Y")


def test_the_pack_stores_what_releases_share_once() -> None:
    gen = generator()
    part = {"fields": [], "special": "Time"}
    schemas: dict[str, dict[str, Any]] = {
        minor: {
            "source": f"Kubernetes {minor}.0",
            "kinds": {"v1": {"Part": "demo.Part"}},
            "messages": {},
        }
        for minor in ("1.20", "1.21", "1.22", "1.23")
    }
    for minor in ("1.20", "1.21", "1.23"):
        schemas[minor]["messages"]["demo.Part"] = part
    schemas["1.22"]["messages"]["demo.Part"] = {"fields": []}
    packed = gen.pack(schemas)
    assert packed["kinds"] == {"v1": [["1.20-1.23", {"Part": "demo.Part"}]]}
    assert packed["messages"] == {"demo.Part": [["1.20-1.21 1.23", part], ["1.22", {"fields": []}]]}
    assert gen.unpack(json.loads(gen.pack_text(packed))) == schemas


def test_the_committed_pack_is_what_packing_its_releases_makes() -> None:
    gen = generator()
    text = (Path(schema.__file__).parent / schema.SCHEMA_FILE).read_text()
    unpacked = {release: schema.schema(release) for release in schema.RELEASES}
    assert gen.pack_text(gen.pack(unpacked)) == text


def made(tmp_path: Path, *args: str) -> dict[str, Any]:
    output = tmp_path / "schema.json"
    assert generator().main([*args, "--output", str(output)]) == 0
    document: dict[str, Any] = json.loads(output.read_text())
    return document


def test_the_committed_1_20_schema_is_what_the_generator_makes(
    tmp_path: Path, k8s_source: Path
) -> None:
    document = made(tmp_path, str(k8s_source))
    assert document["kinds"] == schema.kinds("1.20")
    assert document["messages"] == schema.messages("1.20")


@pytest.mark.lab  # Go and the release's modules
def test_the_committed_newest_schema_is_what_the_generator_makes_from_its_modules(
    tmp_path: Path,
) -> None:
    document = made(tmp_path, "--release", schema.NEWEST)
    assert document == schema.schema(schema.NEWEST)


def proto_numbers(release: str, api_version: str, kind: str, *names: str) -> tuple[int, ...]:
    message: str | None = schema.kinds(release)[api_version][kind]
    numbers = []
    for name in names:
        assert message is not None
        found = next(f for f in schema.messages(release)[message]["fields"] if f["json"] == name)
        numbers.append(int(found["number"]))
        message = found.get("message")
    return tuple(numbers)


@pytest.mark.parametrize(
    "path",
    [
        ("v1", "Secret", "metadata", "annotations"),
        ("v1", "Secret", "data"),
        ("v1", "Secret", "stringData"),
        ("v1", "SecretList", "items"),
        ("authentication.k8s.io/v1", "TokenRequest", "status", "token"),
        ("authentication.k8s.io/v1", "TokenReview", "spec", "token"),
        ("meta.k8s.io/v1", "PartialObjectMetadataList", "items"),
    ],
)
def test_what_redaction_finds_by_number_is_where_it_is_in_every_release(
    path: tuple[str, ...],
) -> None:
    """kube/sensitive.py looks the numbers up in the default (newest) schema once; recordings
    of any release are redacted with them."""
    assert {proto_numbers(release, *path) for release in schema.RELEASES} == {
        sensitive.proto_path(*path)
    }
