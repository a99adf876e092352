"""Reduce a Kubernetes OpenAPI v2 document to what patching needs.

Usage:

    python scripts/reduce_openapi.py SWAGGER_JSON [OUTPUT] [--go-openapi ZZ_GENERATED_GO]...

SWAGGER_JSON is an OpenAPI v2 document as the API server serves it at /openapi/v2 or as the
Kubernetes source tree holds it (api/openapi-spec/swagger.json). OUTPUT defaults to
k8s_wiretap/kube/data/openapi-v2-1.20.json, the table `PatchSchema.builtin()` loads. It was
made from Kubernetes 1.20.2 with

    S=staging/src/k8s.io
    python scripts/reduce_openapi.py api/openapi-spec/swagger.json \
        --go-openapi pkg/generated/openapi/zz_generated.openapi.go \
        --go-openapi $S/apiextensions-apiserver/pkg/generated/openapi/zz_generated.openapi.go \
        --go-openapi $S/kube-aggregator/pkg/generated/openapi/zz_generated.openapi.go

(654 definitions). `--go-openapi` adds the scalar `default`s of properties from the API server's
generated Go definitions: the server's field manager uses those (a container port's protocol
defaults to "TCP", required strings to ""), and a list item that omits a list-map key with a
default is keyed by the default instead of being rejected. /openapi/v2 does not publish them.

Kept: every definition, and in every schema below it `type`, `format`, `default`, `$ref`,
`items`, `additionalProperties`, `allOf`, `properties` and the `x-kubernetes-*` extensions
(patch strategy and merge key, list type and map keys, map type, preserve-unknown-fields,
int-or-string, embedded-resource, unions, group-version-kind). Dropped: paths, parameters,
descriptions, `required` and every other validation keyword. The output is sorted, compact
JSON with one definition per line, so a diff between two versions reads well.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

DEFAULT_OUTPUT = (
    Path(__file__).resolve().parent.parent / "k8s_wiretap/kube/data/openapi-v2-1.20.json"
)
KEPT = ("type", "format", "default", "$ref")
NESTED = ("items", "additionalProperties")


def reduce_schema(schema: Any) -> Any:
    """`schema` with only the keys patching reads (recursively)."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {k: schema[k] for k in KEPT if k in schema}
    for key in NESTED:
        if key in schema:
            value = schema[key]
            out[key] = (
                [reduce_schema(v) for v in value]
                if isinstance(value, list)
                else (reduce_schema(value))
            )
    if "allOf" in schema:
        out["allOf"] = [reduce_schema(member) for member in schema["allOf"]]
    if "properties" in schema:
        out["properties"] = {k: reduce_schema(v) for k, v in schema["properties"].items()}
    out.update({k: v for k, v in schema.items() if k.startswith("x-kubernetes-")})
    return out


def reduce_document(document: dict[str, Any]) -> dict[str, Any]:
    definitions = document.get("definitions", {})
    return {
        "swagger": document.get("swagger", "2.0"),
        "info": document.get("info", {}),
        "definitions": {name: reduce_schema(definitions[name]) for name in sorted(definitions)},
    }


def dump(document: dict[str, Any]) -> str:
    """Compact JSON, one definition per line."""
    head = {k: v for k, v in document.items() if k != "definitions"}
    lines = [json.dumps(head, sort_keys=True)[:-1] + ', "definitions": {']
    names = list(document["definitions"])
    for index, name in enumerate(names):
        comma = "," if index < len(names) - 1 else ""
        body = json.dumps(document["definitions"][name], sort_keys=True, separators=(",", ":"))
        lines.append(f"{json.dumps(name)}:{body}{comma}")
    lines.append("}}")
    return "\n".join(lines) + "\n"


GO_DEFINITION = re.compile(r'^\t\t"([^"]+)": +(schema_\w+)\(ref\),$', re.M)
GO_FUNCTION = re.compile(r"^func (schema_\w+)\(ref common\.ReferenceCallback\)", re.M)
GO_PROPERTY = re.compile(r'^\t{5}"([^"]+)": \{$', re.M)
GO_DEFAULT = re.compile(r"^\t{7}Default: +(.+),$", re.M)


def openapi_name(go_name: str) -> str:
    """k8s.io/api/core/v1.Pod → io.k8s.api.core.v1.Pod (the names swagger.json uses)."""
    package, _, kind = go_name.rpartition(".")
    domain, _, rest = package.partition("/")
    parts = [*reversed(domain.split(".")), *rest.split("/")]
    return ".".join([*parts, kind])


def go_literal(text: str) -> Any:
    if text in ("true", "false"):
        return text == "true"
    try:
        return json.loads(text)
    except ValueError:
        return None  # composite literals (map[string]interface{}{}) are not scalars


def go_defaults(source: str) -> dict[str, dict[str, Any]]:
    """definition → property → scalar default, from a zz_generated.openapi.go."""
    functions = {m.group(1): m.start() for m in GO_FUNCTION.finditer(source)}
    starts = [*sorted(functions.values()), len(source)]
    defaults: dict[str, dict[str, Any]] = {}
    for go_name, function in GO_DEFINITION.findall(source):
        if function not in functions:
            continue
        start = functions[function]
        body = source[start : starts[starts.index(start) + 1]]
        found = defaults.setdefault(openapi_name(go_name), {})
        properties = list(GO_PROPERTY.finditer(body))
        ends = [p.start() for p in properties[1:]] + [len(body)] if properties else []
        for here, end in zip(properties, ends, strict=True):
            block = body[here.end() : end]
            match = GO_DEFAULT.search(block)
            value = go_literal(match.group(1)) if match else None
            if value is not None:
                found[here.group(1)] = value
    return defaults


def add_defaults(document: dict[str, Any], defaults: dict[str, dict[str, Any]]) -> int:
    count = 0
    for name, properties in defaults.items():
        definition = document["definitions"].get(name, {})
        for prop, value in properties.items():
            if prop in definition.get("properties", {}):
                definition["properties"][prop]["default"] = value
                count += 1
    return count


def main(argv: list[str]) -> int:
    go_files = [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "--go-openapi"]
    positional = [
        a
        for i, a in enumerate(argv)
        if a != "--go-openapi" and (i == 0 or argv[i - 1] != "--go-openapi")
    ]
    if not 1 <= len(positional) <= 2:
        print(__doc__, file=sys.stderr)
        return 2
    source = Path(positional[0])
    output = Path(positional[1]) if len(positional) == 2 else DEFAULT_OUTPUT
    reduced = reduce_document(json.loads(source.read_text()))
    for go_file in go_files:
        added = add_defaults(reduced, go_defaults(Path(go_file).read_text()))
        print(f"{go_file}: {added} defaults", file=sys.stderr)
    output.write_text(dump(reduced))
    print(f"{output}: {len(reduced['definitions'])} definitions", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
