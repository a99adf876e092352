"""The gnostic protobuf form of /openapi/v2 (what kubectl downloads) read back as JSON."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from k8s_wiretap.decode.gnostic import ACCEPT, openapi_from_gnostic
from k8s_wiretap.lab.layout import Layout
from k8s_wiretap.lab.readiness import admin_client
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.patch import PatchSchema
from k8s_wiretap.wire.protowire import BYTES, FIXED64, VARINT, Field, ProtoError, encode


def message(*fields: tuple[int, bytes | str | int]) -> bytes:
    out = []
    for number, value in fields:
        if isinstance(value, str):
            value = value.encode()
        wire = BYTES if isinstance(value, bytes) else VARINT
        out.append(Field(number, wire, value))
    return encode(out)


def named(name: str, value: bytes) -> bytes:
    return message((1, name), (2, value))


def test_a_small_document() -> None:
    maximum = encode([Field(7, FIXED64, struct.pack("<d", 5.0))])
    integer = message((22, message((1, "integer"))), (2, "int32"), (19, "x"), (16, 1))
    ref = message((1, message((1, "#/definitions/Item"))))
    items = message((23, ref), (22, message((1, "array"))))
    extension = named("x-kubernetes-list-type", message((2, "map\n")))
    gvk_yaml = "- group: apps\n  kind: D\n  version: v1\n"
    gvk = named("x-kubernetes-group-version-kind", message((2, gvk_yaml)))
    properties = message(
        (1, named("replicas", integer + maximum)),
        (1, named("list", items + message((31, extension)))),
    )
    schema = message(
        (22, message((1, "object"))), (25, properties), (31, gvk), (21, message((2, 1)))
    )
    info = message((1, "T"), (2, "v9"))
    data = message((1, "2.0"), (2, info), (9, message((1, named("D", schema)))))
    assert openapi_from_gnostic(data) == {
        "swagger": "2.0",
        "info": {"title": "T", "version": "v9"},
        "definitions": {
            "D": {
                "type": "object",
                "properties": {
                    "replicas": {
                        "type": "integer",
                        "format": "int32",
                        "required": ["x"],
                        "uniqueItems": True,
                        "maximum": 5,
                    },
                    "list": {
                        "items": {"$ref": "#/definitions/Item"},
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                    },
                },
                "additionalProperties": True,
                "x-kubernetes-group-version-kind": [
                    {"group": "apps", "kind": "D", "version": "v1"}
                ],
            }
        },
    }


def test_what_is_not_gnostic() -> None:
    for data in (b"\xff\xff", message((1, b"\xff")), message((9, 7))):
        with pytest.raises(ProtoError):
            openapi_from_gnostic(data)


def test_the_lab_api_server_protobuf_matches_its_json(lab: LabState) -> None:
    client = admin_client(Layout(Path(lab.kubeconfig).parent, lab.ports))
    binary = client.get("/openapi/v2", timeout=60, accept=ACCEPT)
    assert binary.status == 200 and binary.body[:1] != b"{"
    served = client.get("/openapi/v2", timeout=60).json()
    converted = openapi_from_gnostic(binary.body)
    assert converted["swagger"] == served["swagger"]
    assert converted["info"] == served["info"]
    assert converted["definitions"] == served["definitions"]
    schema = PatchSchema.from_openapi(converted)
    pod = schema.for_kind("v1", "Pod")
    assert pod is not None
    containers = pod.field("spec").field("containers")  # type: ignore[union-attr]
    assert containers is not None and containers.merge_key == "name"
    ports = containers.item().field("ports")  # type: ignore[union-attr]
    assert ports is not None and ports.map_keys == ("containerPort", "protocol")


def test_contact_and_license_keep_their_extensions() -> None:
    """Field 4 of Contact and 3 of License: vendor (v2) or specification (v3) extensions."""
    contact = message((1, "SIG"), (3, "a@b.c"), (4, named("x-team", message((2, "api\n")))))
    license_ = message((1, "Apache 2.0"), (3, named("x-spdx", message((2, "Apache-2.0\n")))))
    info = message((1, "T"), (2, "v9"), (5, contact), (6, license_))
    assert openapi_from_gnostic(message((1, "2.0"), (2, info)))["info"] == {
        "title": "T",
        "version": "v9",
        "contact": {"name": "SIG", "email": "a@b.c", "x-team": "api"},
        "license": {"name": "Apache 2.0", "x-spdx": "Apache-2.0"},
    }
