"""gnostic's message table: generated from its protos, and read the way gnostic names keys."""

from __future__ import annotations

import pytest

from k8s_wiretap.decode import gnostic, gnostic_v3
from k8s_wiretap.decode.gnostic_proto import TABLE, json_name
from k8s_wiretap.kube import datafiles
from k8s_wiretap.kube.release import CURRENT
from tests.conftest import load_script


@pytest.mark.lab  # gnostic-models and k8s.io/kubernetes from Go's module cache
def test_the_table_is_what_gnostic_models_protos_say() -> None:
    generate = load_script("generate_gnostic")
    document = generate.table(CURRENT.minor_version)
    assert datafiles.path(TABLE).read_text() == generate.text_of(document)
    assert "gnostic-models v0.7.0" in document["source"]


def test_the_parser_reads_fields_repeated_and_oneof() -> None:
    generate = load_script("generate_gnostic")
    proto = """syntax = "proto3";
package openapi.v9;
// a comment
message Item {
  oneof oneof {
    Schema schema = 1;  // the schema
    bool boolean = 2;
  }
  repeated google.protobuf.Any extra = 3;
}
"""
    assert generate.parse_proto(proto) == {
        "openapi.v9.Item": [
            [1, "schema", "openapi.v9.Schema", "oneof"],
            [2, "boolean", "bool", "oneof"],
            [3, "extra", "google.protobuf.Any", "repeated"],
        ]
    }
    with pytest.raises(generate.ProtoError, match="not a field"):
        generate.parse_proto("package p;\nmessage M {\n  map<string, string> m = 1;\n}\n")


def test_keys_as_openapi_spells_them() -> None:
    assert json_name("_ref") == "$ref"
    assert json_name("multiple_of") == "multipleOf"
    assert json_name("terms_of_service") == "termsOfService"
    assert json_name("not") == "not"
    assert json_name("_enum") == "enum"


def test_every_converted_message_and_field_is_in_the_table() -> None:
    messages = datafiles.load(TABLE)["messages"]
    for converted in (gnostic.CONVERTED, gnostic_v3.CONVERTED):
        for name, kept in converted.items():
            assert name in messages, name
            assert set(kept or ()) <= {field[1] for field in messages[name]}, name
