"""The committed schema keeps its contract, and scripts/generate_schema.py reads Go and proto.

The generator needs a Kubernetes source tree, which CI does not have: its parsers are tested
on small sources here, and a full regeneration from the real 1.20 sources (K8S_SOURCE, else
Debian's source package, fetched once into the cache) must equal the committed schema.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from k8s_wiretap.kube import schema
from tests.conftest import load_script

TYPES = {"string", "int32", "int64", "bool", "bytes", "double", "float", "uint32", "uint64"}
FIELD_KEYS = {"json", "number", "type", "go", "omitempty"}
OPTIONAL_KEYS = {"message", "key", "value", "inline", "typeMeta"}
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


def test_the_schema_keeps_its_contract() -> None:
    document = schema.schema()
    assert set(document) == {"source", "kinds", "messages"}
    assert "Kubernetes 1.20.2" in document["source"]
    messages = document["messages"]
    for entry in messages.values():
        assert set(entry) <= {"fields", "special"}
        for field in entry["fields"]:
            check_field(field, messages)
    for table in document["kinds"].values():
        assert set(table.values()) <= set(messages)


def test_the_schema_covers_the_groups_the_server_serves() -> None:
    kinds = schema.kinds()
    for api_version in ["v1", "apps/v1", "batch/v1beta1", "meta.k8s.io/v1", "meta.k8s.io/v1beta1"]:
        assert api_version in kinds
    assert kinds["apiextensions.k8s.io/v1"]["CustomResourceDefinition"].endswith(
        ".v1.CustomResourceDefinition"
    )
    assert kinds["apiregistration.k8s.io/v1beta1"]["APIService"].startswith(
        "k8s.io.kube_aggregator"
    )
    assert kinds["v1"]["Pod"] == "k8s.io.api.core.v1.Pod"


def test_fields_are_in_go_order_with_go_json_rules() -> None:
    fields = schema.messages()["k8s.io.apimachinery.pkg.apis.meta.v1.OwnerReference"]["fields"]
    assert [f["json"] for f in fields][:2] == ["apiVersion", "kind"]  # numbers 5, 1
    pod = schema.messages()["k8s.io.api.core.v1.Pod"]["fields"]
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
        f
        for f in schema.messages()["k8s.io.api.core.v1.Container"]["fields"]
        if f["json"] == "ports"
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
    source = gen.Source(Path("/nowhere"))
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


def test_the_committed_schema_is_what_the_generator_makes(tmp_path: Path, k8s_source: Path) -> None:
    source = str(k8s_source)
    gen = generator()
    assert gen.main([source, "--output", str(tmp_path / "schema.json")]) == 0
    made = json.loads((tmp_path / "schema.json").read_text())
    assert made["kinds"] == schema.kinds()
    assert made["messages"] == schema.messages()
