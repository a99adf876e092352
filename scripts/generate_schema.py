"""Generate the protobuf decoding schemas of Kubernetes releases from their own sources.

    python scripts/generate_schema.py [--release MINOR|all ...]      # from Go modules
    python scripts/generate_schema.py SOURCE_TREE [--release MINOR]  # from a source tree
    python scripts/generate_schema.py --debian                       # Debian's 1.20.2
    ... [--output FILE]                                              # one release, alone

A release's sources are its Go modules (k8s_wiretap/lab/apimodules.py pins a patch release of
each minor; `go mod download` fetches k8s.io/api, apimachinery, apiextensions-apiserver,
kube-aggregator and k8s.io/kubernetes into Go's module cache), or a Kubernetes source tree
(staging/src, vendor and pkg/apis; `--debian`: Debian's `kubernetes` source package, 1.20.2,
fetched once into the project's cache by `k8s_wiretap.lab.apisource`). Without a source tree
or --release, every pinned release is read. The schemas are written into the pack
k8s_wiretap.kube.schema reads (k8s_wiretap/kube/schema/kubernetes.json), replacing the
releases read and keeping the others; with --output, one release's schema goes to FILE alone.

Reads each API package's `generated.proto` (field numbers, proto types, maps) and its Go
sources (JSON names, `omitempty`/`omitzero`, inlining, Go field order, pointer/slice/map/value
kinds, patch tags and `+listType`/`+listMapKey` markers, registered kinds from `register.go`).
One release's schema:

    {"source": "...",
     "kinds": {"<apiVersion>": {"<Kind>": "<message full name>"}},
     "messages": {"<full name>": {"fields": [<field>, ...], "special": "<name>"?}}}

A field, in Go (= JSON) order: {"json", "number", "type", "message"?, "key"?, "value"?, "go",
"omitempty", "omitzero"?, "inline"?, "typeMeta"?, "patchStrategy"?, "patchMergeKey"?,
"listType"?, "listMapKeys"?}. `type` is the proto scalar type, "message" or "map"; `go` is how
Go's encoding/json sees the field (value, pointer, slice or map, named types resolved); a
"slice" of a scalar or message type is a repeated field, except []byte ("bytes") and named
slices wrapped in a message. `number` 0 marks a Go field that protobuf never carries (TypeMeta
of top-level kinds: the envelope has it). `omitzero` (Go 1.24's encoding/json; Kubernetes
1.34+ put it on ObjectMeta.creationTimestamp) is accepted only on a value field of a type whose
JSON is null exactly when it is zero (Time, MicroTime): such a field is left out when it would
be null. `inline` fields have json "" and render their message's fields in place. `typeMeta`
{"kind", "apiVersion"} is what the API server sets on each element of the field although
protobuf cannot carry it (StatefulSet volumeClaimTemplates by conversion,
PartialObjectMetadataList items by the handlers). `special` names a type with its own JSON
form (a MarshalJSON in Go, or a named slice that protobuf wraps in a message
`{repeated items = 1}`: "Slice"). A JSON option, or a MarshalJSON, the generator does not
know stops it (SchemaError), as does a proto field without its Go field.

Kinds mirror the Go schemes: every `&T{}` of a package's register.go under its group version;
a `metav1.AddToGroupVersion` call adds meta/v1's WatchEvent and option kinds to that group
version, and its unversioned kinds (Status, APIVersions, ...) to "v1". "meta.k8s.io/v1" lists
every kind of meta/v1. Decoders fall back to "meta.k8s.io/v1" for a kind an apiVersion lacks.

The pack holds every release's schema, each message and each apiVersion's kind table once per
distinct value, with the releases that have it:

    {"releases": {"<minor>": "<source>"},
     "kinds": {"<apiVersion>": [["<releases>", {"<Kind>": "<message>"}], ...]},
     "messages": {"<full name>": [["<releases>", {"fields": [...], ...}], ...]}}

`<releases>` lists runs of consecutive releases: "1.20-1.29 1.31". One line per apiVersion
and per message, so a regeneration's diff shows what changed.

The Go parsing is line based and relies on gofmt'd sources, which Kubernetes' are.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the project's modules, installed or not

from k8s_wiretap.kube.release import Release  # noqa: E402  (standard library only)

SCHEMA_DIR = REPO / "k8s_wiretap" / "kube" / "schema"
PACK = SCHEMA_DIR / "kubernetes.json"

META = "k8s.io/apimachinery/pkg/apis/meta/v1"
# Go packages whose generated.proto we decode, besides every API group under k8s.io/api.
EXTRA_PACKAGES = (
    META,
    "k8s.io/apimachinery/pkg/apis/meta/v1beta1",
    "k8s.io/apimachinery/pkg/runtime",
    "k8s.io/apimachinery/pkg/util/intstr",
    "k8s.io/apimachinery/pkg/api/resource",
    "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1",
    "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1",
    "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1",
    "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1beta1",
)
# Go-only packages read to resolve named types (types.UID is a string).
HELPER_PACKAGES = ("k8s.io/apimachinery/pkg/types",)

APIEXT = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions"
# From 1.38 the apiextensions types are in k8s.io/apiextensions-api (a proto package of its
# own); k8s.io/apiextensions-apiserver keeps only aliases of them.
MOVED = {"k8s.io/apiextensions-apiserver/pkg/apis/": "k8s.io/apiextensions-api/pkg/apis/"}
APIEXT_MOVED = "k8s.io.apiextensions_api.pkg.apis.apiextensions"
# Types with their own MarshalJSON, by proto message: what the decoder renders instead.
SPECIAL = {
    "k8s.io.apimachinery.pkg.apis.meta.v1.Time": "Time",
    "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime": "MicroTime",
    "k8s.io.apimachinery.pkg.apis.meta.v1.Duration": "Duration",
    "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1": "FieldsV1",
    "k8s.io.apimachinery.pkg.apis.meta.v1.GroupVersion": "GroupVersion",
    "k8s.io.apimachinery.pkg.api.resource.Quantity": "Quantity",
    # A struct embedding Quantity (for command-line flags, 1.23+): Quantity's MarshalJSON.
    "k8s.io.apimachinery.pkg.api.resource.QuantityValue": "Quantity",
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": "IntOrString",
    "k8s.io.apimachinery.pkg.runtime.RawExtension": "RawExtension",
    "k8s.io.apimachinery.pkg.runtime.Unknown": "Unknown",
    **{
        f"{package}.{version}.{name}": name
        for package in (APIEXT, APIEXT_MOVED)
        for version in ("v1", "v1beta1")
        for name in (
            "JSON",
            "JSONSchemaPropsOrArray",
            "JSONSchemaPropsOrBool",
            "JSONSchemaPropsOrStringArray",
        )
    },
}

SCALARS = {"string", "int32", "int64", "bool", "bytes", "double", "float", "uint32", "uint64"}
GO_BUILTINS = {
    "string",
    "bool",
    "byte",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "rune",
    "error",
}
GO_TO_PROTO = {
    "string": "string",
    "bool": "bool",
    "int32": "int32",
    "int64": "int64",
    "int": "int64",
    "float64": "double",
}


class SchemaError(Exception):
    """The sources do not fit together the way this generator expects."""


# --- Go sources ---------------------------------------------------------------------------------

# A Go type expression, resolved: ("ptr", elem) | ("slice", elem) | ("map", key, value) |
# ("named", import path, name) | ("builtin", name) | ("other", text).
GoType = tuple[Any, ...]


@dataclass
class GoField:
    name: str  # "" for an embedded field
    type: GoType
    tags: dict[str, str]
    markers: dict[str, list[str]]


@dataclass
class GoDecl:
    name: str
    kind: str  # "struct", "named" (type X Y) or "alias" (type X = Y)
    fields: list[GoField] = field(default_factory=list)
    underlying: GoType = ("other", "")


@dataclass
class GoPackage:
    path: str
    decls: dict[str, GoDecl] = field(default_factory=dict)
    json_marshalers: set[str] = field(default_factory=set)


TAG = re.compile(r'(\w+):"((?:[^"\\]|\\.)*)"')
MARKER = re.compile(r"//\s*\+([\w.:-]+)(?:=(.*))?$")
IMPORT_LINE = re.compile(r'^(?:import\s+)?(?:([\w.]+)\s+)?"([^"]+)"$')
MARSHALER = re.compile(r"^func \(\w+ \*?(\w+)\) MarshalJSON\(\)")


# Go tokens that may contain comment markers, leftmost first: rune and string literals, raw
# strings, line comments, block comments.
GO_TOKENS = re.compile(
    "|".join(
        [
            r"'(?:[^'\\\n]|\\.)*'",
            r'"(?:[^"\\\n]|\\.)*"',
            r"`[^`]*`",
            r"//[^\n]*",
            r"/\*.*?\*/",
        ]
    ),
    re.S,
)


def strip_block_comments(text: str) -> str:
    """`text` with /* */ comments blanked (line count kept); strings and // comments as is."""

    def blank(match: re.Match[str]) -> str:
        token = match.group()
        return "\n" * token.count("\n") if token.startswith("/*") else token

    return GO_TOKENS.sub(blank, text)


def parse_imports(lines: list[str]) -> dict[str, str]:
    """Import alias → import path for one file."""
    imports: dict[str, str] = {}
    in_block = False
    for raw in lines:
        line = raw.strip()
        if line.startswith("import ("):
            in_block = True
            continue
        if in_block and line == ")":
            in_block = False
            continue
        if in_block or line.startswith("import "):
            match = IMPORT_LINE.match(line)
            if match:
                path = match.group(2)
                imports[match.group(1) or path.rsplit("/", 1)[-1]] = path
    return imports


def split_type(text: str) -> tuple[str, str]:
    """(`pkg`, `Name`) of a possibly qualified identifier."""
    if "." in text:
        pkg, name = text.split(".", 1)
        return pkg, name
    return "", text


def parse_type(text: str, imports: dict[str, str], package_path: str) -> GoType:
    text = text.strip()
    if text.startswith("*"):
        return ("ptr", parse_type(text[1:], imports, package_path))
    if text.startswith("[]"):
        return ("slice", parse_type(text[2:], imports, package_path))
    if text.startswith("map["):
        depth, index = 0, 3
        for index in range(3, len(text)):
            depth += {"[": 1, "]": -1}.get(text[index], 0)
            if depth == 0:
                break
        key = parse_type(text[4:index], imports, package_path)
        return ("map", key, parse_type(text[index + 1 :], imports, package_path))
    if not re.fullmatch(r"[\w.]+", text):
        return ("other", text)
    pkg, name = split_type(text)
    if pkg:
        if pkg not in imports:
            raise SchemaError(f"{package_path}: unknown import {pkg} in {text}")
        return ("named", imports[pkg], name)
    if name in GO_BUILTINS:
        return ("builtin", name)
    return ("named", package_path, name)


def parse_tags(text: str) -> dict[str, str]:
    return {key: value for key, value in TAG.findall(text)}


def parse_field(
    line: str, markers: dict[str, list[str]], imports: dict[str, str], path: str
) -> list[GoField]:
    tag_text = ""
    if "`" in line:
        line, tag_text = line.split("`", 1)
        tag_text = tag_text.rsplit("`", 1)[0]
    line = line.split("//", 1)[0].strip()
    tags = parse_tags(tag_text)
    names_and_type = re.match(r"^([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s+(\S.*)$", line)
    if names_and_type is None:  # embedded: the type is the whole line
        return [GoField("", parse_type(line, imports, path), tags, markers)]
    names = [name.strip() for name in names_and_type.group(1).split(",")]
    go_type = parse_type(names_and_type.group(2), imports, path)
    return [GoField(name, go_type, tags, markers) for name in names]


def add_marker(markers: dict[str, list[str]], line: str) -> None:
    match = MARKER.match(line)
    if match:
        markers.setdefault(match.group(1), []).append((match.group(2) or "").strip())


def parse_struct_body(
    lines: Iterator[str], imports: dict[str, str], path: str, decl: GoDecl
) -> None:
    markers: dict[str, list[str]] = {}
    depth = 1
    for raw in lines:
        line = raw.strip()
        if depth > 1:  # an anonymous struct type inside: skipped (API types have none)
            depth += line.count("{") - line.count("}")
            continue
        if line == "}":
            return
        if not line:
            markers = {}
        elif line.startswith("//"):
            add_marker(markers, line)
        elif line.endswith("{"):
            depth += 1
            print(f"warning: {path}.{decl.name}: anonymous struct skipped", file=sys.stderr)
        else:
            decl.fields.extend(parse_field(line, markers, imports, path))
            markers = {}


def parse_type_spec(spec: str, imports: dict[str, str], path: str) -> GoDecl | None:
    match = re.match(r"^(\w+)\s+(=\s*)?(.+)$", spec.split("//", 1)[0].strip())
    if match is None:
        return None
    name, alias, rest = match.groups()
    if rest.startswith(("struct", "interface")):
        return None
    kind = "alias" if alias else "named"
    return GoDecl(name, kind, underlying=parse_type(rest, imports, path))


def parse_go_file(text: str, package: GoPackage) -> None:
    lines = strip_block_comments(text).splitlines()
    imports = parse_imports(lines)
    iterator = iter(lines)
    for raw in iterator:
        line = raw.rstrip()
        marshaler = MARSHALER.match(line)
        if marshaler:
            package.json_marshalers.add(marshaler.group(1))
        struct = re.match(r"^type (\w+) struct\s*\{(\})?$", line)
        if struct:
            decl = GoDecl(struct.group(1), "struct")
            if not struct.group(2):
                parse_struct_body(iterator, imports, package.path, decl)
            package.decls[decl.name] = decl
        elif line == "type (":
            for inner in iterator:
                if inner.strip() == ")":
                    break
                spec = parse_type_spec(inner, imports, package.path)
                if spec:
                    package.decls[spec.name] = spec
        elif line.startswith("type "):
            spec = parse_type_spec(line[5:], imports, package.path)
            if spec:
                package.decls[spec.name] = spec


def go_files(directory: Path) -> Iterator[Path]:
    for path in sorted(directory.glob("*.go")):
        if path.name.endswith("_test.go") or path.name.startswith(("zz_generated", "generated")):
            continue
        yield path


def read_go_package(directory: Path, path: str) -> GoPackage:
    package = GoPackage(path)
    for file in go_files(directory):
        parse_go_file(file.read_text(), package)
    return package


# --- proto sources ------------------------------------------------------------------------------


@dataclass
class ProtoField:
    name: str
    number: int
    label: str  # optional, repeated, map
    type: str  # scalar name or message full name; map: value type
    key: str = ""


@dataclass
class ProtoMessage:
    full_name: str
    fields: dict[int, ProtoField] = field(default_factory=dict)


PROTO_FIELD = re.compile(r"^(optional|repeated|required)\s+([\w.]+)\s+(\w+)\s*=\s*(\d+)\s*;")
PROTO_MAP = re.compile(r"^map<\s*([\w.]+)\s*,\s*([\w.]+)\s*>\s+(\w+)\s*=\s*(\d+)\s*;")


def qualify(type_name: str, package: str) -> str:
    """The full name of a proto type ("." + full name is the same, as 1.31+ write them)."""
    if type_name.startswith("."):
        return type_name[1:]
    if type_name in SCALARS or "." in type_name:
        return type_name
    return f"{package}.{type_name}"


def parse_proto(text: str) -> tuple[str, list[ProtoMessage]]:
    package = ""
    messages: list[ProtoMessage] = []
    current: ProtoMessage | None = None
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if line.startswith("package "):
            package = line[len("package ") :].rstrip(";").strip()
        elif line.startswith("message "):
            current = ProtoMessage(f"{package}.{line.split()[1]}")
            messages.append(current)
        elif line == "}":
            current = None
        elif current is not None and line:
            current_field = proto_field(line, package)
            current.fields[current_field.number] = current_field
    return package, messages


def proto_field(line: str, package: str) -> ProtoField:
    match = PROTO_FIELD.match(line)
    if match:
        label, type_name, name, number = match.groups()
        return ProtoField(name, int(number), label, qualify(type_name, package))
    match = PROTO_MAP.match(line)
    if match:
        key, value, name, number = match.groups()
        return ProtoField(name, int(number), "map", qualify(value, package), qualify(key, package))
    raise SchemaError(f"unparsed proto line in {package}: {line}")


# --- schema -------------------------------------------------------------------------------------


@dataclass
class Layout:
    """Where one Kubernetes release's Go packages are.

    `roots` maps a Go import path prefix to the folder holding it: a module ("k8s.io/api" →
    its folder) or, with prefix "", a folder laid out by import path (a source tree's
    staging/src and vendor). `internal` is k8s.io/kubernetes' pkg/apis (conversion.go), if
    read.
    """

    label: str
    roots: list[tuple[str, Path]]
    internal: Path | None = None
    release: Release | None = None


def tree_layout(root: Path) -> Layout:
    """A Kubernetes source tree: staging/src, vendor and pkg/apis."""
    match = re.search(r"kubernetes-(\d+\.\d+\.\d+)", str(root.resolve()))
    release = Release.parse(match.group(1)) if match else None
    version = f"Kubernetes {release}" if release else "Kubernetes"
    label = f"{version} sources ({root.resolve().name}), by scripts/generate_schema.py"
    roots = [("", root / "staging" / "src"), ("", root / "vendor")]
    return Layout(label, roots, root / "pkg" / "apis", release)


def apimodules() -> ModuleType:
    """k8s_wiretap/lab/apimodules.py, loaded by its path (with kube.release and lab.golang,
    which choose the Go toolchain a module's go.mod asks for)."""
    path = REPO / "k8s_wiretap" / "lab" / "apimodules.py"
    spec = importlib.util.spec_from_file_location("apimodules", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("apimodules", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def module_layout(minor: str) -> Layout:
    """Kubernetes `minor`'s Go modules (k8s_wiretap/lab/apimodules.py), fetched if missing."""
    modules = apimodules()
    if minor not in modules.RELEASES:
        raise SchemaError(f"no pinned release {minor} in k8s_wiretap/lab/apimodules.py")
    chosen = modules.release(minor)
    try:
        roots = sorted(modules.api_modules(chosen).items())
        internal = modules.module(chosen, modules.KUBERNETES) / "pkg" / "apis"
    except modules.GoModuleError as error:
        raise SchemaError(str(error)) from None
    names = ", ".join(f"{path}@{chosen.staging_version}" for path, _ in roots)
    label = (
        f"Kubernetes {chosen} Go modules ({names}; {modules.KUBERNETES}@{chosen.git_version}),"
        " by scripts/generate_schema.py"
    )
    return Layout(label, roots, internal, chosen)


@dataclass
class Source:
    layout: Layout
    go: dict[str, GoPackage] = field(default_factory=dict)
    proto_package: dict[str, str] = field(default_factory=dict)  # Go path → proto package
    messages: dict[str, ProtoMessage] = field(default_factory=dict)
    # (message, Go field) → (kind, apiVersion) conversion sets on the field's elements
    type_meta: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)

    def directory(self, path: str) -> Path:
        for prefix, base in self.layout.roots:
            if not prefix:
                candidate = base / path
            elif path == prefix or path.startswith(prefix + "/"):
                candidate = base / path[len(prefix) :].lstrip("/")
            else:
                continue
            if candidate.is_dir():
                return candidate
        where = ", ".join(str(base) for _, base in self.layout.roots)
        raise SchemaError(f"{path} not found under {where}")

    def load(self, path: str) -> None:
        directory = self.directory(path)
        self.go[path] = read_go_package(directory, path)
        proto = directory / "generated.proto"
        if proto.exists():
            package, messages = parse_proto(proto.read_text())
            self.proto_package[path] = package
            self.messages.update((m.full_name, m) for m in messages)

    def decl(self, path: str, name: str) -> GoDecl | None:
        package = self.go.get(path)
        return package.decls.get(name) if package else None

    def message_name(self, path: str, name: str) -> str | None:
        """The proto message for Go type `path.name` (following aliases), if there is one."""
        decl = self.decl(path, name)
        if decl and decl.kind == "alias" and decl.underlying[0] == "named":
            return self.message_name(decl.underlying[1], decl.underlying[2])
        package = self.proto_package.get(path)
        full = f"{package}.{name}"
        return full if package and full in self.messages else None


def api_packages(source: Source) -> list[str]:
    """Every API group version of k8s.io/api (a folder <group>/<version> with generated.proto)."""
    api = source.directory("k8s.io/api")
    found = sorted(p.parent.relative_to(api) for p in api.glob("*/*/generated.proto"))
    return [f"k8s.io/api/{p.as_posix()}" for p in found]


def extra_packages(source: Source) -> list[str]:
    """EXTRA_PACKAGES, each where the release keeps it (MOVED: a package's later home)."""
    found = []
    for path in EXTRA_PACKAGES:
        moved = next(
            (new + path[len(old) :] for old, new in MOVED.items() if path.startswith(old)), None
        )
        try:
            found.append(moved if moved and source.directory(moved) else path)
        except SchemaError:
            found.append(path)
    return found


def go_kind(source: Source, go_type: GoType, seen: int = 0) -> str:
    """pointer, slice, map or value: how encoding/json sees the field (named types resolved)."""
    if go_type[0] == "ptr":
        return "pointer"
    if go_type[0] in ("slice", "map"):
        return "slice" if go_type[0] == "slice" else "map"
    if go_type[0] == "named" and seen < 10:
        decl = source.decl(go_type[1], go_type[2])
        if decl and decl.kind in ("named", "alias"):
            return go_kind(source, decl.underlying, seen + 1)
    return "value"


JSON_OPTIONS = {"omitempty", "omitzero", "inline"}
# Special types whose MarshalJSON writes null exactly when their IsZero is true: `omitzero`
# (Go 1.24's encoding/json calls IsZero) leaves them out when they would be null.
NULL_WHEN_ZERO = {"Time", "MicroTime"}


def json_tag(go_field: GoField) -> tuple[str | None, set[str]]:
    """(JSON name or None when skipped, options); "" means inlined."""
    name, *options = go_field.tags.get("json", "").split(",")
    if name == "-" and not options:
        return None, set()
    if not name and go_field.name:
        name = go_field.name
    unknown = set(options) - JSON_OPTIONS - {""}
    if unknown:
        raise SchemaError(f"{go_field.name or go_field.type}: json options {sorted(unknown)}")
    return name, set(options)


def check_omitzero(source: Source, entry: dict[str, Any], where: str) -> None:
    """`omitzero` is read for what Kubernetes uses it on: a value field of a type whose JSON
    is null exactly when it is zero (ObjectMeta.creationTimestamp, 1.34+)."""
    message = source.messages.get(entry.get("message", ""))
    special = SPECIAL.get(message.full_name) if message else None
    if entry["go"] != "value" or special not in NULL_WHEN_ZERO:
        raise SchemaError(f"{where}: omitzero on a {entry['go']} {entry['type']} {special}")


def proto_number(go_field: GoField) -> int:
    tag = go_field.tags.get("protobuf", "")
    if not tag or tag == "-":
        return 0
    return int(tag.split(",")[1])


def type_entry(proto: ProtoField) -> dict[str, Any]:
    if proto.label == "map":
        value: Any = proto.type if proto.type in SCALARS else {"message": proto.type}
        return {"type": "map", "key": proto.key, "value": value}
    if proto.type in SCALARS:
        return {"type": proto.type}
    return {"type": "message", "message": proto.type}


def go_only_type(source: Source, go_field: GoField, where: str) -> dict[str, Any]:
    """The type entry of a Go field protobuf does not carry (TypeMeta)."""
    go_type = go_field.type
    if go_type[0] == "named":
        message = source.message_name(go_type[1], go_type[2])
        if message:
            return {"type": "message", "message": message}
    if go_type[0] == "builtin" and go_type[1] in GO_TO_PROTO:
        return {"type": GO_TO_PROTO[go_type[1]]}
    raise SchemaError(f"{where}: Go-only field of unsupported type {go_type}")


def patch_metadata(go_field: GoField) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    for tag in ("patchStrategy", "patchMergeKey"):
        if tag in go_field.tags:
            entry[tag] = go_field.tags[tag]
    if "listType" in go_field.markers:
        entry["listType"] = go_field.markers["listType"][-1]
    if "listMapKey" in go_field.markers:
        entry["listMapKeys"] = go_field.markers["listMapKey"]
    return entry


def schema_field(source: Source, message: ProtoMessage, go_field: GoField) -> dict[str, Any] | None:
    name, options = json_tag(go_field)
    if name is None or (go_field.name and not go_field.name[0].isupper()):
        return None
    where = f"{message.full_name}.{go_field.name or go_field.type}"
    number = proto_number(go_field)
    entry: dict[str, Any] = {"json": name, "number": number}
    if number:
        if number not in message.fields:
            raise SchemaError(f"{where}: proto field {number} missing")
        entry.update(type_entry(message.fields[number]))
    else:
        entry.update(go_only_type(source, go_field, where))
    entry["go"] = go_kind(source, go_field.type)
    if number:
        check_shape(source, message.fields[number], entry["go"], where)
    entry["omitempty"] = "omitempty" in options
    if "omitzero" in options:
        check_omitzero(source, entry, where)
        entry["omitzero"] = True
    if name == "":
        if go_field.name or entry["type"] != "message":
            raise SchemaError(f"{where}: inline only works for embedded structs")
        entry["inline"] = True
    entry.update(patch_metadata(go_field))
    type_meta = source.type_meta.get((message.full_name, go_field.name))
    if type_meta:
        entry["typeMeta"] = {"kind": type_meta[0], "apiVersion": type_meta[1]}
    return entry


def check_shape(source: Source, proto: ProtoField, go: str, where: str) -> None:
    """Proto label and Go kind agree, the way decoders read them: repeated is a Go slice (and
    a Go slice is repeated, but for []byte and named slices wrapped in a message), a proto
    map a Go map. Repeated bytes would be ambiguous in the schema: none exist."""
    inner = source.messages[proto.type].fields if proto.type in source.messages else {}
    wrapped = list(inner) == [1] and inner[1].label == "repeated"
    expected = {
        "repeated": go == "slice" and proto.type != "bytes",
        "map": go == "map",
        "optional": go != "map" and (go != "slice" or proto.type == "bytes" or wrapped),
    }
    if not expected.get(proto.label, False):
        raise SchemaError(f"{where}: proto {proto.label} {proto.type} against a Go {go}")


def struct_fields(source: Source, message: ProtoMessage, decl: GoDecl) -> list[dict[str, Any]]:
    fields = [schema_field(source, message, f) for f in decl.fields]
    result = [f for f in fields if f is not None]
    covered = {f["number"] for f in result}
    missing = set(message.fields) - covered
    if missing:
        raise SchemaError(f"{message.full_name}: proto fields {sorted(missing)} have no Go field")
    return result


def proto_only_fields(message: ProtoMessage) -> list[dict[str, Any]]:
    """Fields of a message whose Go type is not a struct (special and wrapper types)."""
    fields = []
    for proto in sorted(message.fields.values(), key=lambda f: f.number):
        entry = {"json": proto.name, "number": proto.number, **type_entry(proto)}
        entry["go"] = {"repeated": "slice", "map": "map"}.get(proto.label, "value")
        entry["omitempty"] = False
        fields.append(entry)
    return fields


def struct_decl(source: Source, decl: GoDecl | None) -> GoDecl | None:
    """`decl`, or for `type List metav1.List` the struct it is defined as."""
    if decl and decl.kind == "named" and decl.underlying[0] == "named":
        underlying = source.decl(decl.underlying[1], decl.underlying[2])
        if underlying and underlying.kind == "struct":
            return underlying
    return decl


def message_entry(source: Source, path: str, message: ProtoMessage) -> dict[str, Any]:
    name = message.full_name.rsplit(".", 1)[1]
    decl = struct_decl(source, source.decl(path, name))
    special = SPECIAL.get(message.full_name)
    if decl is None:
        raise SchemaError(f"{message.full_name}: no Go type {path}.{name}")
    if special is None and decl.kind == "named" and go_kind(source, decl.underlying) == "slice":
        if list(message.fields) != [1] or message.fields[1].label != "repeated":
            raise SchemaError(f"{message.full_name}: a named slice but not {{items = 1}}")
        special = "Slice"
    if special is None and name in source.go[path].json_marshalers:
        raise SchemaError(f"{message.full_name}: has MarshalJSON but no special rendering")
    if special is None and decl.kind != "struct":
        raise SchemaError(f"{message.full_name}: Go type {name} is not a struct")
    if special:
        return {"fields": proto_only_fields(message), "special": special}
    return {"fields": struct_fields(source, message, decl)}


def build_messages(source: Source, paths: list[str]) -> dict[str, Any]:
    messages: dict[str, Any] = {}
    for path in paths:
        package = source.proto_package.get(path)
        for full_name in sorted(source.messages):
            if full_name.rsplit(".", 1)[0] == package:
                message = source.messages[full_name]
                messages[full_name] = message_entry(source, path, message)
    return dict(sorted(messages.items()))


# --- conversions -------------------------------------------------------------------------------

CONVERT_TO = re.compile(r"^func Convert_\w+\(in \*\w+\.\w+, out \*(\w+)\.(\w+), ", re.M)
SET_ELEMENT = re.compile(r'out\.(\w+)\[i\]\.(APIVersion|Kind) = "([^"]+)"')


# The API server's handlers set each item's TypeMeta when they answer with a list of partial
# objects (apiserver pkg/endpoints/handlers/response.go, asPartialObjectMetadataList).
HANDLER_TYPE_META = {
    (f"k8s.io.apimachinery.pkg.apis.meta.{version}.PartialObjectMetadataList", "Items"): (
        "PartialObjectMetadata",
        f"meta.k8s.io/{version}",
    )
    for version in ("v1", "v1beta1")
}


def conversion_type_meta(source: Source) -> None:
    """TypeMeta that internal → versioned conversions set on nested list elements.

    pkg/apis/apps/*/conversion.go fills in kind and apiVersion of StatefulSet
    volumeClaimTemplates (http://issue.k8s.io/87583); protobuf has no TypeMeta for them, the
    JSON of the same object does.
    """
    internal = source.layout.internal
    files = sorted(internal.glob("*/*/conversion.go")) if internal else []
    for file in files:
        text = strip_block_comments(file.read_text())
        imports = parse_imports(text.splitlines())
        starts = [m for m in CONVERT_TO.finditer(text)]
        for index, match in enumerate(starts):
            end = starts[index + 1].start() if index + 1 < len(starts) else len(text)
            path = imports.get(match.group(1), "")
            message = source.message_name(path, match.group(2))
            found: dict[str, dict[str, str]] = {}
            for name, which, value in SET_ELEMENT.findall(text[match.end() : end]):
                found.setdefault(name, {})[which] = value
            for name, values in found.items():
                if message and {"APIVersion", "Kind"} <= set(values):
                    source.type_meta[(message, name)] = (values["Kind"], values["APIVersion"])


# --- kinds --------------------------------------------------------------------------------------


def call_arguments(text: str, call: str) -> Iterator[str]:
    """The argument text of every `call(...)` in `text` (balanced parentheses)."""
    start = text.find(call + "(")
    while start >= 0:
        index = start + len(call) + 1
        depth = 1
        while depth and index < len(text):
            depth += {"(": 1, ")": -1}.get(text[index], 0)
            index += 1
        yield text[start + len(call) + 1 : index - 1]
        start = text.find(call + "(", index)


def function_body(text: str, name: str) -> str:
    match = re.search(rf"^func {name}\(.*?\{{$(.*?)^\}}$", text, flags=re.S | re.M)
    return match.group(1) if match else ""


def object_refs(text: str) -> list[tuple[str, str]]:
    """(`alias`, `Name`) of every `&alias.Name{}` / `&Name{}` in `text`."""
    return [split_type(ref) for ref in re.findall(r"&([\w.]+)\{\}", text)]


def api_version(register: str) -> str:
    group = re.search(r'const GroupName = "([^"]*)"', register)
    version = re.search(
        r"SchemeGroupVersion = schema\.GroupVersion\{.*Version: \"(\w+)\"", register
    )
    if group is None or version is None:
        raise SchemaError("register.go without GroupName or SchemeGroupVersion")
    return f"{group.group(1)}/{version.group(1)}" if group.group(1) else version.group(1)


@dataclass
class MetaKinds:
    """What metav1.AddToGroupVersion registers: per group version, and unversioned ("v1")."""

    versioned: list[str]
    unversioned: list[str]


def meta_kinds(source: Source) -> MetaKinds:
    text = strip_block_comments((source.directory(META) / "register.go").read_text())
    body = function_body(text, "AddToGroupVersion")
    options = re.search(r"var optionsTypes = \[\]runtime\.Object\{(.*?)\n\}", text, re.S)
    unversioned_text = "".join(call_arguments(body, "AddUnversionedTypes"))
    unversioned = [name for _, name in object_refs(unversioned_text)]
    versioned = [name for _, name in object_refs(body) if name not in unversioned]
    if "optionsTypes..." in body and options:
        versioned += [name for _, name in object_refs(options.group(1))]
    return MetaKinds(versioned, unversioned)


def register_kinds(source: Source, path: str, meta: MetaKinds) -> dict[str, dict[str, str]]:
    """{apiVersion: {kind: message}} that one package's register.go sets up."""
    register_file = source.directory(path) / "register.go"
    if not register_file.exists():
        return {}
    text = strip_block_comments(register_file.read_text())
    if "const GroupName" not in text:  # runtime: helpers, no API group
        return {}
    version = api_version(text)
    imports = parse_imports(text.splitlines())
    kinds: dict[str, dict[str, str]] = {}

    def add(version: str, go_path: str, name: str) -> None:
        message = source.message_name(go_path, name)
        if message:
            kinds.setdefault(version, {})[name] = message

    for alias, name in object_refs(text):
        add(version, imports.get(alias, path) if alias else path, name)
    if path == META:
        for name in meta.versioned + meta.unversioned:
            add(version, META, name)
    elif "metav1.AddToGroupVersion(" in text:
        for name in meta.versioned:
            add(version, META, name)
        for name in meta.unversioned:
            add("v1", META, name)
    return kinds


def build_kinds(source: Source, paths: list[str]) -> dict[str, dict[str, str]]:
    meta = meta_kinds(source)
    kinds: dict[str, dict[str, str]] = {}
    for path in paths:
        for version, names in register_kinds(source, path, meta).items():
            kinds.setdefault(version, {}).update(names)
    return kinds


# --- main ---------------------------------------------------------------------------------------


def generate(layout: Layout) -> dict[str, Any]:
    source = Source(layout)
    paths = api_packages(source) + extra_packages(source)
    for path in [*paths, *HELPER_PACKAGES]:
        source.load(path)
    conversion_type_meta(source)
    source.type_meta.update(HANDLER_TYPE_META)
    return {
        "source": layout.label,
        "kinds": build_kinds(source, paths),
        "messages": build_messages(source, paths),
    }


# --- the pack of every release -----------------------------------------------------------------


def release_ranges(minors: list[str], order: list[str]) -> str:
    """ "1.20-1.29 1.31": `minors` as runs of consecutive releases of `order`."""
    runs: list[list[str]] = []
    for minor in sorted(minors, key=order.index):
        if runs and order.index(minor) == order.index(runs[-1][-1]) + 1:
            runs[-1].append(minor)
        else:
            runs.append([minor])
    return " ".join(run[0] if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


def variants(values: dict[str, Any], order: list[str]) -> list[list[Any]]:
    """[[releases, value], ...]: each distinct value once, with the releases that have it."""
    groups: list[tuple[list[str], Any]] = []
    for minor in order:
        if minor not in values:
            continue
        for minors, value in groups:
            if value == values[minor]:
                minors.append(minor)
                break
        else:
            groups.append(([minor], values[minor]))
    return [[release_ranges(minors, order), value] for minors, value in groups]


def pack(schemas: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One document for every release's schema: a message (or an apiVersion's kind table)
    that several releases share is written once, with the releases it is in."""
    order = sorted(schemas, key=Release.parse)

    def table(section: str) -> dict[str, list[list[Any]]]:
        names = sorted({name for document in schemas.values() for name in document[section]})
        return {
            name: variants(
                {m: schemas[m][section][name] for m in order if name in schemas[m][section]},
                order,
            )
            for name in names
        }

    return {
        "releases": {minor: schemas[minor]["source"] for minor in order},
        "kinds": table("kinds"),
        "messages": table("messages"),
    }


def unpack(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every release's schema from a pack (what k8s_wiretap.kube.schema reads)."""
    order = sorted(document["releases"], key=Release.parse)

    def members(ranges: str) -> set[str]:
        found: set[str] = set()
        for run in ranges.split():
            first, _, last = run.partition("-")
            found.update(order[order.index(first) : order.index(last or first) + 1])
        return found

    schemas: dict[str, dict[str, Any]] = {
        minor: {"source": source, "kinds": {}, "messages": {}}
        for minor, source in document["releases"].items()
    }
    for section in ("kinds", "messages"):
        for name, entries in document[section].items():
            for ranges, value in entries:
                for minor in members(ranges):
                    schemas[minor][section][name] = value
    return schemas


def pack_text(document: dict[str, Any]) -> str:
    """The pack as JSON with one line per apiVersion and per message, for readable diffs."""

    def compact(value: Any) -> str:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)

    def section(name: str) -> str:
        lines = [f"{compact(key)}:{compact(value)}" for key, value in document[name].items()]
        return f"{compact(name)}:{{\n" + ",\n".join(lines) + "\n}"

    releases = compact(document["releases"])
    return f'{{"releases":{releases},\n{section("kinds")},\n{section("messages")}}}\n'


# --- main ---------------------------------------------------------------------------------------


def _debian_source() -> Path:
    sys.path.insert(0, str(REPO))
    from k8s_wiretap.lab.apisource import api_source

    return api_source()


def tree_minor(layout: Layout) -> str | None:
    return layout.release.minor_version if layout.release else None


def summary(schema: dict[str, Any]) -> str:
    kinds = sum(len(names) for names in schema["kinds"].values())
    return f"{len(schema['messages'])} messages, {kinds} kinds"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, nargs="?", help="a Kubernetes source tree")
    parser.add_argument(
        "--release",
        action="append",
        help="a release (e.g. 1.30) to read from its Go modules; 'all': every pinned one;"
        " with a source tree: the tree's release (default: from its folder name)",
    )
    parser.add_argument(
        "--debian", action="store_true", help="read Debian's kubernetes source package (1.20)"
    )
    parser.add_argument(
        "--output", type=Path, help="write this one release's schema here instead of the pack"
    )
    args = parser.parse_args(argv)
    try:
        schemas = read_schemas(args, parser)
    except SchemaError as error:
        print(f"generate_schema: {error}", file=sys.stderr)
        return 1
    if args.output:
        if len(schemas) != 1:
            parser.error("--output takes exactly one release")
        ((minor, schema),) = schemas.items()
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(schema, separators=(",", ":")) + "\n")
        print(f"{args.output}: Kubernetes {minor}, {summary(schema)}")
        return 0
    current = unpack(json.loads(PACK.read_text())) if PACK.exists() else {}
    current.update(schemas)
    PACK.write_text(pack_text(pack(current)))
    for minor, schema in sorted(schemas.items(), key=lambda item: Release.parse(item[0])):
        print(f"{PACK}: Kubernetes {minor}, {summary(schema)}")
    return 0


def read_schemas(args: argparse.Namespace, parser: argparse.ArgumentParser) -> dict[str, Any]:
    """The schemas the command line asks for, by minor."""
    if args.source or args.debian:
        if args.source and args.debian:
            parser.error("a source tree or --debian, not both")
        layout = tree_layout(args.source or _debian_source())
        minors = args.release or [tree_minor(layout)]
        if len(minors) != 1 or minors[0] in (None, "all"):
            parser.error("a source tree is one release: name it with --release MINOR")
        return {minors[0]: generate(layout)}
    pinned = sorted(apimodules().RELEASES, key=Release.parse)
    wanted = args.release or ["all"]
    minors = pinned if "all" in wanted else wanted
    return {minor: generate(module_layout(minor)) for minor in minors}


if __name__ == "__main__":
    raise SystemExit(main())
