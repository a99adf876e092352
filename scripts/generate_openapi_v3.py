"""Generate k8s_wiretap/kube/data/openapi-v3-MINOR.json from a real kube-apiserver's OpenAPI v3.

    python scripts/generate_openapi_v3.py [--kube-version V] [OUTPUT]

V defaults to the default release (kube.release.CURRENT).

Starts a lab of its own (etcd and the API server only) of that release in a temporary
folder, reads `/openapi/v3` (the index), then every group version's document as kubectl does
(`GET /openapi/v3/apis/apps/v1?hash=...`, JSON), and merges their `components.schemas` (a
definition has one name in every document that holds it, `io.k8s.api.core.v1.PodSpec`).
Each schema is reduced as scripts/reduce_openapi.py reduces v2 (kept: type, format,
default, $ref, items, additionalProperties, allOf, properties, the x-kubernetes-*
extensions), plus `oneOf` (IntOrString and Quantity are `oneOf` scalar types in v3). Unlike
/openapi/v2, v3 publishes the properties' defaults (a container port's protocol "TCP"), so
no Go sources are needed. `PatchSchema.bundled(release)` loads the file for recordings of
that release that hold no OpenAPI document of their own; tests/patch/test_openapi_v3.py
checks it against the test lab.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from reduce_openapi import KEPT, NESTED  # noqa: E402

from k8s_wiretap.kube.client import ApiClient  # noqa: E402
from k8s_wiretap.kube.release import CURRENT, Release  # noqa: E402

DATA = ROOT / "k8s_wiretap/kube/data"


def reduce_v3(schema: Any) -> Any:
    """`schema` with only the keys patching reads, as reduce_openapi.reduce_schema, and
    `oneOf` (recursively)."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {k: schema[k] for k in KEPT if k in schema}
    for key in NESTED:
        if key in schema:
            out[key] = reduce_v3(schema[key])
    for key in ("allOf", "oneOf"):
        if key in schema:
            out[key] = [reduce_v3(member) for member in schema[key]]
    if "properties" in schema:
        out["properties"] = {k: reduce_v3(v) for k, v in schema["properties"].items()}
    out.update({k: v for k, v in schema.items() if k.startswith("x-kubernetes-")})
    return out


def group_version(path: str) -> bool:
    """`api/v1`, `apis/apps/v1`: not `apis/apps` (the group), `openid/...` or `.well-known`."""
    parts = path.split("/")
    return (parts[0], len(parts)) in (("api", 2), ("apis", 3))


def schemas(client: ApiClient, only: list[str] | None = None) -> tuple[dict[str, Any], list[str]]:
    """Every group version's components.schemas (or those of `only`), merged and reduced;
    and the group versions."""
    index = client.get("/openapi/v3").json()["paths"]
    merged: dict[str, Any] = {}
    served = []
    for path, entry in sorted(index.items()):
        if not group_version(path) or (only is not None and path not in only):
            continue
        served.append(path)
        document = client.get(entry["serverRelativeURL"]).json()
        for name, schema in document.get("components", {}).get("schemas", {}).items():
            merged.setdefault(name, reduce_v3(schema))
    return {name: merged[name] for name in sorted(merged)}, served


def dump(version: str, served: list[str], found: dict[str, Any]) -> str:
    """Compact JSON, one schema per line (a diff between two releases reads well)."""
    head = {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": version},
        "x-wiretap-source": f"kube-apiserver {version} /openapi/v3, scripts/generate_openapi_v3.py",
        "x-wiretap-group-versions": served,
    }
    lines = [json.dumps(head, sort_keys=True)[:-1] + ', "components": {"schemas": {']
    names = list(found)
    for index, name in enumerate(names):
        comma = "," if index < len(names) - 1 else ""
        body = json.dumps(found[name], sort_keys=True, separators=(",", ":"))
        lines.append(f"{json.dumps(name)}:{body}{comma}")
    lines.append("}}}")
    return "\n".join(lines) + "\n"


def from_lab(version: str) -> tuple[str, dict[str, Any], list[str]]:
    from k8s_wiretap.lab import Lab, UpOptions

    with tempfile.TemporaryDirectory(prefix="k8s-wiretap-openapi-") as folder:
        lab = Lab(Path(folder))
        state = lab.up(UpOptions(components=("apiserver",), kube_version=version))
        pki = Path(folder) / "pki"
        try:
            client = ApiClient(state.server, pki / "ca.crt", pki / "admin.crt", pki / "admin.key")
            git_version = client.get("/version").json()["gitVersion"]
            found, served = schemas(client)
            return git_version, found, served
        finally:
            lab.down()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kube-version", default=str(CURRENT))
    parser.add_argument("output", nargs="?", type=Path)
    args = parser.parse_args(argv)
    git_version, found, served = from_lab(args.kube_version)
    minor = Release.parse(git_version).minor_version
    output = args.output or DATA / f"openapi-v3-{minor}.json"
    output.write_text(dump(git_version, served, found))
    print(f"{output}: {len(found)} schemas from {len(served)} group versions", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
