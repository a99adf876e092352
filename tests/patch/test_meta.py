"""Patch metadata from OpenAPI v2: the built-in 1.20 table and documents of its shape."""

from __future__ import annotations

import json
from typing import Any

from k8s_wiretap.kube.datafiles import path
from k8s_wiretap.patch import PatchSchema
from k8s_wiretap.patch.meta import BUILTIN_DATA, split_api_version


def test_builtin_table_walks_a_deployment() -> None:
    schema = PatchSchema.builtin()
    assert schema is PatchSchema.builtin()
    shipped = json.loads(path(BUILTIN_DATA).read_text(encoding="utf-8"))["definitions"]
    assert len(schema.definitions) == len(shipped)  # every one the data file holds
    deployment = schema.for_kind("apps/v1", "Deployment")
    assert deployment is not None and deployment.name == "Deployment"
    spec = deployment.field("spec")
    assert spec is not None
    pod = spec.field("template").field("spec")  # type: ignore[union-attr]
    assert pod is not None
    containers = pod.field("containers")
    assert containers is not None and containers.kind == "list"
    assert (containers.strategies, containers.merge_key) == (("merge",), "name")
    container = containers.item()
    assert container is not None and container.name == "Container"
    ports = container.field("ports")
    assert ports is not None
    assert (ports.list_type, ports.map_keys) == ("map", ("containerPort", "protocol"))
    assert ports.item().field("protocol").default == "TCP"  # type: ignore[union-attr]
    volumes = pod.field("volumes")
    assert volumes is not None and volumes.strategies == ("merge", "retainKeys")
    strategy = spec.field("strategy")
    assert strategy is not None and strategy.strategies == ("retainKeys",)
    assert spec.field("bogus") is None


def test_kinds_by_group_version() -> None:
    schema = PatchSchema.builtin()
    pod = schema.for_kind("v1", "Pod")
    assert pod is not None and pod.definition == "io.k8s.api.core.v1.Pod"
    assert schema.for_kind("apps/v1", "Pod") is None
    assert schema.for_kind("example.com/v1", "Widget") is None
    assert split_api_version("v1") == ("", "v1")
    assert split_api_version("rbac.authorization.k8s.io/v1") == ("rbac.authorization.k8s.io", "v1")


def test_maps_scalars_and_opaque_types() -> None:
    schema = PatchSchema.builtin()
    meta = schema.definition("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
    assert meta is not None
    labels = meta.field("labels")
    assert labels is not None and labels.kind == "map" and labels.go_kind == "map"
    assert labels.item().kind == "scalar"  # type: ignore[union-attr]
    finalizers = meta.field("finalizers")
    assert finalizers is not None and finalizers.strategies == ("merge",)
    assert finalizers.merge_key == ""
    raw = schema.definition("io.k8s.apimachinery.pkg.runtime.RawExtension")
    assert raw is not None and raw.opaque and raw.go_kind == "struct"
    quantity = schema.definition("io.k8s.apimachinery.pkg.api.resource.Quantity")
    assert quantity is not None and quantity.kind == "scalar" and quantity.go_kind == "struct"


def test_lookup_is_case_insensitive_like_go() -> None:
    deployment = PatchSchema.builtin().for_kind("apps/v1", "Deployment")
    assert deployment is not None
    assert deployment.lookup("Spec") is deployment.field("spec")
    assert deployment.field("Spec") is None


def document(definitions: dict[str, Any]) -> dict[str, Any]:
    return {"swagger": "2.0", "definitions": definitions}


def test_refs_allof_and_property_extensions() -> None:
    schema = PatchSchema.from_openapi(
        document(
            {
                "Base": {
                    "properties": {"name": {"type": "string"}},
                    "x-kubernetes-map-type": "atomic",
                },
                "Item": {
                    "allOf": [
                        {"$ref": "#/definitions/Base"},
                        {"properties": {"v": {"type": "integer"}}},
                    ],
                },
                "Root": {
                    "properties": {
                        "items": {
                            "type": "array",
                            "items": {"$ref": "#/definitions/Item"},
                            "x-kubernetes-patch-strategy": "merge",
                            "x-kubernetes-patch-merge-key": "name",
                        },
                        "one": {
                            "$ref": "#/definitions/Base",
                            "x-kubernetes-patch-strategy": "replace",
                        },
                        "dict": {
                            "type": "object",
                            "additionalProperties": {"$ref": "#/definitions/Base"},
                        },
                        "missing": {"$ref": "#/definitions/Nowhere"},
                    },
                    "x-kubernetes-group-version-kind": [
                        {"group": "g", "version": "v1", "kind": "R"}
                    ],
                },
            }
        )
    )
    root = schema.for_kind("g/v1", "R")
    assert root is not None
    item = root.field("items").item()  # type: ignore[union-attr]
    assert item is not None and sorted(item.field_names()) == ["name", "v"]
    assert item.map_type == "atomic" and item.definition == "Item"
    one = root.field("one")
    assert one is not None and one.strategies == ("replace",) and one.has_field("name")
    assert schema.definition("Base").strategies == ()  # type: ignore[union-attr]
    value = root.field("dict").item()  # type: ignore[union-attr]
    assert value is not None and value.definition == "Base"
    assert root.field("missing").kind == "any"  # type: ignore[union-attr]


def test_recursive_types_are_walked_lazily() -> None:
    props = PatchSchema.builtin().definition(
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"
    )
    assert props is not None
    deep = props.field("properties").item().field("items")  # type: ignore[union-attr]
    assert deep is not None and deep.opaque
