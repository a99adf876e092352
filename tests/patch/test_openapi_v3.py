"""Patch metadata from OpenAPI v3: a real document, and the tables shipped per release.

The fixture is a lab API server's `/openapi/v3/apis/apps/v1` exactly as its kubectl fetched
it (JSON, gzip'd; the release in its name): `tests/patch/test_story_1_37.py` records the same
document on the default release and checks its shipped table against the running lab.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.kube.release import CURRENT
from k8s_wiretap.patch import Node, PatchSchema
from k8s_wiretap.patch.smd_schema import item_element, list_semantics, resolve

FIXTURE = next((Path(__file__).parent / "fixtures" / "openapi-v3").glob("apps-v1-*.json.gz"))
FIXTURE_RELEASE = FIXTURE.name.removeprefix("apps-v1-").removesuffix(".json.gz")
FACTS = ("kind", "go_kind", "strategies", "merge_key", "list_type", "map_keys", "map_type")


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    value = json.loads(gzip.decompress(FIXTURE.read_bytes()))
    assert isinstance(value, dict)
    return value


@pytest.fixture(scope="module")
def schema(document: dict[str, Any]) -> PatchSchema:
    return PatchSchema.from_openapi(document)


def walk(node: Node | None, *names: str) -> Node:
    for name in names:
        assert node is not None, name
        node = node.item() if name == "[]" else node.field(name)
    assert node is not None, names
    return node


def test_a_v3_document_walks_a_deployment(document: dict[str, Any], schema: PatchSchema) -> None:
    assert len(schema.definitions) == len(document["components"]["schemas"])
    deployment = schema.for_kind("apps/v1", "Deployment")
    assert deployment is not None and deployment.name == "Deployment"
    containers = walk(deployment, "spec", "template", "spec", "containers")
    assert (containers.strategies, containers.merge_key) == (("merge",), "name")
    assert (containers.list_type, containers.map_keys) == ("map", ("name",))
    ports = walk(containers, "[]", "ports")
    assert (ports.list_type, ports.map_keys) == ("map", ("containerPort", "protocol"))
    # v3 publishes the defaults /openapi/v2 leaves out: a port item keyed without protocol
    protocol = walk(ports, "[]", "protocol")
    assert protocol.default == "TCP"
    lst = resolve(ports).lst
    assert lst is not None
    assert item_element(lst, 0, {"containerPort": 80}) == item_element(
        lst, 0, {"containerPort": 80, "protocol": "TCP"}
    )
    volumes = walk(deployment, "spec", "template", "spec", "volumes")
    assert volumes.strategies == ("merge", "retainKeys")
    assert walk(deployment, "spec", "strategy").strategies == ("retainKeys",)
    finalizers = walk(deployment, "metadata", "finalizers")
    assert list_semantics(finalizers) == ("associative", ())
    owners = walk(deployment, "metadata", "ownerReferences")
    assert list_semantics(owners) == ("associative", ("uid",))
    assert walk(owners, "[]").map_type == "atomic"


def test_allof_refs_are_the_named_definitions(schema: PatchSchema) -> None:
    """A v3 property of a named type is `allOf: [{$ref}]` beside its description and
    default; it is that definition's node, as a v2 `$ref` is."""
    pod = walk(schema.for_kind("apps/v1", "Deployment"), "spec", "template", "spec")
    affinity = walk(pod, "affinity")
    assert affinity is schema.definition("io.k8s.api.core.v1.Affinity")
    assert affinity.kind == "struct" and affinity.has_field("nodeAffinity")
    template = walk(schema.for_kind("apps/v1", "Deployment"), "spec", "template")
    assert template.definition == "io.k8s.api.core.v1.PodTemplateSpec"


def test_one_of_scalars_are_v2s_strings(schema: PatchSchema) -> None:
    """IntOrString and Quantity are `oneOf` two scalar types in v3, a string in v2."""
    surge = walk(
        schema.for_kind("apps/v1", "Deployment"), "spec", "strategy", "rollingUpdate", "maxSurge"
    )
    assert (surge.kind, surge.go_kind, surge.format) == ("scalar", "struct", "int-or-string")
    assert resolve(surge).scalar == "untyped"
    limits = walk(
        schema.for_kind("apps/v1", "Deployment"),
        *("spec", "template", "spec", "containers", "[]", "resources", "limits", "[]"),
    )
    assert limits.definition == "io.k8s.apimachinery.pkg.api.resource.Quantity"
    assert (limits.kind, limits.go_kind) == ("scalar", "struct")
    builtin = PatchSchema.builtin().definition(limits.definition)
    assert builtin is not None and (builtin.kind, builtin.go_kind) == (limits.kind, "struct")


def test_the_scale_subresource_is_in_its_group_versions_document(schema: PatchSchema) -> None:
    scale = schema.for_kind("autoscaling/v1", "Scale")
    assert scale is not None and walk(scale, "spec", "replicas").scalar_type == "integer"


def facts(node: Node) -> tuple[Any, ...]:
    return tuple(getattr(node, name) for name in FACTS)


def same_facts(one: Node | None, other: Node | None, path: str, depth: int = 0) -> list[str]:
    """Where two schemas disagree on what patching reads, along every field of `one`."""
    if one is None or other is None or depth > 12:
        return [] if one is other or depth > 12 else [f"{path}: only in one"]
    if facts(one) != facts(other):
        return [f"{path}: {facts(one)} != {facts(other)}"]
    if one.kind == "struct":
        found = []
        for name in one.field_names():
            found += same_facts(one.field(name), other.field(name), f"{path}.{name}", depth + 1)
        return found
    return same_facts(one.item(), other.item(), f"{path}[]", depth + 1)


def test_the_shipped_table_reads_as_the_server_document(schema: PatchSchema) -> None:
    """The reduced, merged table keeps everything patching reads of apps/v1."""
    shipped = PatchSchema.bundled(FIXTURE_RELEASE)
    assert shipped is not PatchSchema.builtin()
    for group, version, kind in schema.gvk_index():
        api_version = f"{group}/{version}" if group else version
        ours, theirs = schema.for_kind(api_version, kind), shipped.for_kind(api_version, kind)
        if kind.endswith("List") or kind in ("DeleteOptions", "Status", "WatchEvent"):
            continue  # meta kinds that many group versions declare
        assert same_facts(ours, theirs, f"{api_version} {kind}") == []


def test_the_shipped_table_nearest_to_the_release() -> None:
    newest = PatchSchema.bundled(CURRENT)
    assert PatchSchema.bundled(CURRENT.minor_version) is newest
    assert PatchSchema.bundled("v1.33.0") is newest
    assert PatchSchema.bundled("v1.20.2") is PatchSchema.builtin()
    assert PatchSchema.bundled("v1.28.1") is PatchSchema.builtin()
    assert PatchSchema.bundled(None) is PatchSchema.builtin()
    assert PatchSchema.bundled("not a release") is PatchSchema.builtin()
    # what the default release has and 1.20 does not
    assert newest.for_kind("networking.k8s.io/v1", "ServiceCIDR") is not None
    assert PatchSchema.builtin().for_kind("networking.k8s.io/v1", "ServiceCIDR") is None
    conditions = walk(newest.for_kind("v1", "Pod"), "status", "conditions", "[]")
    assert conditions.has_field("observedGeneration")
