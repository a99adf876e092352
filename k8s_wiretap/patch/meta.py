"""Patch metadata of Kubernetes kinds, read from an OpenAPI document: v2 (`/openapi/v2`) or v3
(`/openapi/v3/apis/apps/v1`, one document per group version).

`PatchSchema.from_openapi(document)` indexes the document's definitions (v2) or
`components.schemas` (v3) by `x-kubernetes-group-version-kind`; `.for_kind("apps/v1",
"Deployment")` returns the root `Node` and nodes are walked by JSON field name:
`node.field("spec").field("template")`, `node.item()` for list items and map values. Every
node carries what patching needs:

- `kind`: "struct" (properties), "map" (additionalProperties), "list", "scalar" or "any";
- strategic merge patch: `strategies` (`x-kubernetes-patch-strategy` split on ","),
  `merge_key` (`x-kubernetes-patch-merge-key`);
- server-side apply: `list_type`/`map_keys` (`x-kubernetes-list-type`,
  `x-kubernetes-list-map-keys`), `map_type` (`x-kubernetes-map-type`),
  `preserve_unknown` (`x-kubernetes-preserve-unknown-fields`).

Nodes are built lazily and cached, so recursive types (JSONSchemaProps) cost nothing until
walked. `$ref`s are followed (a property's own extensions win over its target's), `allOf`
members are merged. v3 documents differ from v2 in three ways that matter here, each read
as the v2 form: `$ref`s point into `#/components/schemas/`, a property of a named struct
type is `allOf: [{$ref}]` (with its default and description beside it; schemaconv's
`makeOpenAPIRef` reads it as the `$ref`), and IntOrString and Quantity are `oneOf` two
scalar types instead of `type: string`. The API server finds SMP metadata in Go struct
tags, not in OpenAPI; the OpenAPI document is generated from those tags, and the few places
where a Go type and its OpenAPI shape differ are recorded here: a named definition that is
an object without properties or additionalProperties (RawExtension, FieldsV1, JSON) is a Go
struct without JSON fields (`opaque`), and a named scalar (Quantity, Time, IntOrString) is
a Go struct.

`PatchSchema.builtin()` is the Kubernetes 1.20 table shipped in `data/openapi-v2-1.20.json`
(see scripts/reduce_openapi.py); `PatchSchema.bundled(release)` the shipped table nearest
to a release (1.20, or each `data/openapi-v3-MINOR.json` present: the default release's, see
scripts/generate_openapi_v3.py), used when a recording holds no OpenAPI document.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from k8s_wiretap.kube import datafiles
from k8s_wiretap.kube.release import Release, ReleaseError, ReleaseLike

__all__ = [
    "BUILTIN_DATA",
    "BUNDLED_DATA",
    "DEFAULT_RELEASE",
    "Node",
    "PatchSchema",
    "ref_name",
    "split_api_version",
]

BUILTIN_DATA = "openapi-v2-1.20.json"
# What a release of None means to the patch engines: the oldest release the lab runs.
DEFAULT_RELEASE = Release(1, 20)
# Shipped tables by minor release; a release uses the nearest one.
BUNDLED_DATA = {
    DEFAULT_RELEASE: BUILTIN_DATA,
    **{
        Release.parse(minor): f"openapi-v3-{minor}.json"
        for minor in datafiles.releases("openapi-v3", ".json")
    },
}
REF_PREFIXES = ("#/definitions/", "#/components/schemas/")
SCALARS = frozenset({"string", "integer", "number", "boolean"})

_EMPTY: Mapping[str, Any] = {}


def split_api_version(api_version: str) -> tuple[str, str]:
    """("apps", "v1") for "apps/v1", ("", "v1") for "v1"."""
    group, _, version = api_version.rpartition("/")
    return group, version


def _short(definition: str) -> str:
    return definition.rsplit(".", 1)[-1] if definition else ""


def ref_name(ref: Any) -> str | None:
    """The definition a local `$ref` names (v2 or v3 form), None for anything else."""
    if isinstance(ref, str):
        for prefix in REF_PREFIXES:
            if ref.startswith(prefix):
                return ref[len(prefix) :]
    return None


def _types(schema: Mapping[str, Any]) -> list[str]:
    value = schema.get("type")
    if value is None:
        return ["string"] if _scalar_one_of(schema) else []
    return [value] if isinstance(value, str) else [str(t) for t in value]


def _scalar_one_of(schema: Mapping[str, Any]) -> bool:
    """v3's IntOrString and Quantity: `oneOf` scalar types, which v2 calls a string."""
    members = schema.get("oneOf")
    return (
        isinstance(members, list)
        and bool(members)
        and all(isinstance(m, Mapping) and m.get("type") in SCALARS for m in members)
    )


def _single_ref(schema: Mapping[str, Any]) -> str | None:
    """The `$ref` of a v3 `allOf: [{$ref}]` property, None for any other schema."""
    members = schema.get("allOf")
    if not isinstance(members, list) or len(members) != 1 or "properties" in schema:
        return None
    member = members[0]
    return member.get("$ref") if isinstance(member, Mapping) else None


def _scalar_go_kind(schema: Mapping[str, Any], kind: str) -> str:
    fmt = schema.get("format", "")
    if kind == "string":
        return "slice" if fmt == "byte" else "string"
    if kind == "integer":
        return fmt if fmt in ("int32", "int64") else "int"
    if kind == "number":
        return "float32" if fmt == "float" else "float64"
    return "bool" if kind == "boolean" else "interface"


class Node:
    """What patching needs to know about the value at one place in an object."""

    __slots__ = (
        "_children",
        "_fields",
        "_item",
        "_item_schema",
        "_lower",
        "default",
        "definition",
        "extensions",
        "format",
        "go_kind",
        "kind",
        "list_type",
        "map_keys",
        "map_type",
        "memo",
        "merge_key",
        "opaque",
        "owner",
        "preserve_unknown",
        "scalar_type",
        "strategies",
    )

    def __init__(self, owner: PatchSchema, schema: Mapping[str, Any], definition: str = "") -> None:
        self.owner = owner
        self.definition = definition
        self.extensions = {k: v for k, v in schema.items() if k.startswith("x-")}
        self._fields: Mapping[str, Any] = _EMPTY
        self._item_schema: Mapping[str, Any] | None = None
        self._children: dict[str, Node | None] = {}
        self._item: Node | None = None
        self._lower: dict[str, str] | None = None
        self.memo: dict[str, Any] = {}  # derived facts other modules cache per node
        self.format = str(schema.get("format", ""))
        self.default: Any = schema.get("default")
        self.scalar_type = ""
        self.opaque = False
        self._classify(schema)
        self._read_extensions()

    def _classify(self, schema: Mapping[str, Any]) -> None:
        types = _types(schema)
        kind = types[0] if len(types) == 1 else ""
        if len(types) > 1:
            self.kind = "any"
        elif "properties" in schema and kind in ("", "object"):
            self.kind = "struct"
            self._fields = schema["properties"] or _EMPTY
        elif kind == "object":
            self.kind = "map"
            extra = schema.get("additionalProperties")
            self._item_schema = extra if isinstance(extra, Mapping) else {}
            self.opaque = bool(self.definition) and "additionalProperties" not in schema
        elif kind == "array":
            self.kind = "list"
            items = schema.get("items")
            if isinstance(items, list):
                items = items[0] if len(items) == 1 else {}
            self._item_schema = items if isinstance(items, Mapping) else {}
        elif kind:
            self.kind = "scalar"
            self.scalar_type = kind
        else:
            self.kind = "any"
            self.opaque = bool(self.definition)
        self.go_kind = self._go_kind(schema)

    def _go_kind(self, schema: Mapping[str, Any]) -> str:
        if self.kind == "struct" or self.opaque:
            return "struct"
        if self.kind == "map":
            return "map"
        if self.kind == "list":
            return "slice"
        if self.kind == "scalar":
            return "struct" if self.definition else _scalar_go_kind(schema, self.scalar_type)
        return "interface"

    def _read_extensions(self) -> None:
        ext = self.extensions
        strategy = ext.get("x-kubernetes-patch-strategy")
        self.strategies: tuple[str, ...] = (
            tuple(strategy.split(",")) if isinstance(strategy, str) else ()
        )
        key = ext.get("x-kubernetes-patch-merge-key")
        self.merge_key = key if isinstance(key, str) else ""
        list_type = ext.get("x-kubernetes-list-type")
        self.list_type: str | None = list_type if isinstance(list_type, str) else None
        keys = ext.get("x-kubernetes-list-map-keys")
        self.map_keys: tuple[str, ...] = (
            tuple(k for k in keys if isinstance(k, str)) if isinstance(keys, list) else ()
        )
        map_type = ext.get("x-kubernetes-map-type")
        self.map_type: str | None = map_type if isinstance(map_type, str) else None
        self.preserve_unknown = ext.get("x-kubernetes-preserve-unknown-fields") is True

    @property
    def name(self) -> str:
        """The Go type's name as errors print it ("PodSpec"), or the Go kind when inline."""
        return _short(self.definition) or self.go_kind

    def field_names(self) -> list[str]:
        return list(self._fields)

    def has_field(self, name: str) -> bool:
        return name in self._fields

    def field(self, name: str) -> Node | None:
        """The node of struct field `name` (exact JSON name), None when there is none."""
        try:
            return self._children[name]
        except KeyError:
            pass
        schema = self._fields.get(name)
        node = self.owner.node(schema) if isinstance(schema, Mapping) else None
        self._children[name] = node
        return node

    def lookup(self, name: str) -> Node | None:
        """A struct field as Go's JSON lookup finds it: exact name first, else case-folded."""
        if name in self._fields:
            return self.field(name)
        if self._lower is None:
            self._lower = {}
            for field_name in reversed(list(self._fields)):
                self._lower[field_name.casefold()] = field_name
        match = self._lower.get(name.casefold())
        return self.field(match) if match is not None else None

    def item(self) -> Node | None:
        """List items' node or map values' node; None for structs, scalars and "any"."""
        if self._item is None and self._item_schema is not None:
            self._item = self.owner.node(self._item_schema)
        return self._item

    def __repr__(self) -> str:
        return f"Node({self.kind} {self.name})"


class PatchSchema:
    """The definitions of one OpenAPI document (v2 or v3), walkable as `Node`s."""

    def __init__(self, definitions: Mapping[str, Any]) -> None:
        self.definitions = definitions
        self._named: dict[str, Node | None] = {}
        self._gvk: dict[tuple[str, str, str], str] | None = None

    @classmethod
    def from_openapi(cls, document: Mapping[str, Any]) -> PatchSchema:
        """The schema of a v2 document (`definitions`) or a v3 one (`components.schemas`)."""
        definitions = document.get("definitions")
        if definitions is None:
            components = document.get("components")
            definitions = components.get("schemas") if isinstance(components, Mapping) else None
        return cls(definitions if isinstance(definitions, Mapping) else {})

    @classmethod
    def builtin(cls) -> PatchSchema:
        """Kubernetes 1.20's table (loaded on first use, then shared)."""
        return _bundled(BUILTIN_DATA)

    @classmethod
    def bundled(cls, release: ReleaseLike) -> PatchSchema:
        """The shipped table nearest to `release` ("v1.30.2", "1.33"); 1.20's when None or
        not a release."""
        try:
            wanted = Release.of(release)
        except ReleaseError:
            wanted = None
        if wanted is None:
            return cls.builtin()
        nearest = min(BUNDLED_DATA, key=lambda shipped: (_distance(shipped, wanted), shipped))
        return _bundled(BUNDLED_DATA[nearest])

    def definition(self, name: str) -> Node | None:
        """The node of definition `name` ("io.k8s.api.core.v1.Pod"), None if unknown."""
        if name not in self._named:
            schema = self.definitions.get(name)
            self._named[name] = (
                Node(self, self._flatten(schema), name) if isinstance(schema, Mapping) else None
            )
        return self._named[name]

    def for_kind(self, api_version: str, kind: str) -> Node | None:
        """The root node of `kind` in `api_version`, None when no definition declares it."""
        group, version = split_api_version(api_version)
        name = self.gvk_index().get((group, version, kind))
        return self.definition(name) if name else None

    def gvk_index(self) -> dict[tuple[str, str, str], str]:
        """(group, version, kind) → definition name, from x-kubernetes-group-version-kind."""
        if self._gvk is None:
            self._gvk = {}
            for name, schema in self.definitions.items():
                for gvk in (schema or {}).get("x-kubernetes-group-version-kind") or ():
                    if isinstance(gvk, Mapping) and gvk.get("kind"):
                        key = (gvk.get("group", ""), gvk.get("version", ""), gvk["kind"])
                        self._gvk.setdefault(key, name)
        return self._gvk

    def node(self, schema: Mapping[str, Any]) -> Node:
        """The node of an inline schema (a property, items, additionalProperties)."""
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self._ref_node(ref, schema)
        ref = _single_ref(schema)
        if isinstance(ref, str):
            return self._ref_node(ref, schema)
        if "allOf" in schema:
            merged, definition = self._merge_all_of(schema)
            return Node(self, merged, definition)
        return Node(self, schema)

    def _ref_node(self, ref: str, schema: Mapping[str, Any]) -> Node:
        name = ref_name(ref) or ref
        own = {k: v for k, v in schema.items() if k.startswith("x-")}
        target = self.definitions.get(name)
        if not isinstance(target, Mapping):
            return Node(self, own, name)
        if not own:
            named = self.definition(name)
            assert named is not None
            return named
        flat = self._flatten(target)
        return Node(self, {**flat, **own}, name)

    def _flatten(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        """A definition with its `allOf` members merged and a lone `$ref` followed once."""
        if "allOf" in schema:
            return self._merge_all_of(schema)[0]
        name = ref_name(schema.get("$ref"))
        if name is not None:
            target = self.definitions.get(name)
            if isinstance(target, Mapping) and target is not schema:
                own = {k: v for k, v in schema.items() if k.startswith("x-")}
                return {**target, **own}
        return schema

    def _merge_all_of(self, schema: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
        merged: dict[str, Any] = {}
        properties: dict[str, Any] = {}
        definition = ""
        for member in schema.get("allOf") or ():
            if not isinstance(member, Mapping):
                continue
            name = ref_name(member.get("$ref"))
            if name is not None:
                definition = definition or name
                member = self.definitions.get(name) or {}
            member = self._flatten(member)
            properties.update(member.get("properties") or {})
            for key, value in member.items():
                merged.setdefault(key, value)
        merged.update({k: v for k, v in schema.items() if k != "allOf"})
        if properties:
            merged["properties"] = {**properties, **(schema.get("properties") or {})}
        return merged, definition


def _distance(shipped: Release, wanted: Release) -> int:
    """How many minors apart two 1.x releases are (another major: farther than any)."""
    if shipped.major != wanted.major:
        return 1 << 16
    return abs(shipped.minor - wanted.minor)


@cache
def _bundled(data: str) -> PatchSchema:
    return PatchSchema.from_openapi(datafiles.load(data))
