"""Generate k8s_wiretap/kube/data/reset-fields-MINOR.json from a release's registry strategies.

    python scripts/generate_reset_fields.py [--kube-version MINOR] [--discovery FILE] [-o FILE]

The release defaults to the default one (kube.release.CURRENT); its discovery and the output
to kube/data's files of that minor.

Since 1.22 every REST strategy of a kind with a status subresource names the fields its
writes reset (`GetResetFields`): the main resource resets `status`, the status subresource
`spec` (and often `metadata`, or parts of it). The API server's field manager leaves them
out of what a server-side apply owns and of what conflicts (structured-merge-diff's
`IgnoreFilter`), and the strategy then restores them from the stored object. This script
reads `pkg/registry/<group>/<kind>/strategy.go` of the `k8s.io/kubernetes` module (and the
apiextensions and aggregator registries) with regular expressions: each
`func (<type>) GetResetFields()` with its `"<group>/<version>": fieldpath.NewSet(
fieldpath.MakePathOrDie(...), ...)` entries, the subresource "status" (or "approval") when the
type's name ends so. The kind is the strategy's folder (`apps/deployment` → Deployment) as the
release's discovery (kube/data/discovery-MINOR.json) spells it. Custom resources follow one
rule of their own (kube/resetfields.py).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from k8s_wiretap.kube.release import CURRENT  # noqa: E402
from k8s_wiretap.lab.apimodules import module, release  # noqa: E402

FUNCTION = re.compile(r"^func \((?:\w+ )?\*?(\w+)\) GetResetFields\(\) map\[.*?^}", re.M | re.S)
ENTRY = re.compile(r'"([^"]+)": fieldpath\.NewSet\((.*?)\n\t+\)', re.S)
PATH = re.compile(r"fieldpath\.MakePathOrDie\(([^)]*)\)")
# folders not named after their kind
FOLDER_KINDS = {
    "certificates": "certificatesigningrequest",
    "storagemigration": "storageversionmigration",
}
SUBRESOURCE = re.compile(r"(Status|status|Approval)Strategy$")
SOURCES = {
    "k8s.io/kubernetes": "pkg/registry",
    "k8s.io/apiextensions-apiserver": "pkg/registry",
    "k8s.io/kube-aggregator": "pkg/registry",
}


def kinds(minor: str, discovery: Path | None = None) -> dict[tuple[str, str], str]:
    """(group, lower-case kind) → kind, from the release's discovery (`discovery`, else
    kube/data's file of `minor`)."""
    discovery = discovery or ROOT / f"k8s_wiretap/kube/data/discovery-{minor}.json"
    document = json.loads(discovery.read_text())
    return {(r["group"], r["kind"].lower()): r["kind"] for r in document["resources"]}


def strategies(folder: Path) -> list[tuple[Path, str, dict[str, list[list[str]]]]]:
    """(file, type name, group version → reset paths) of every literal GetResetFields."""
    found = []
    for path in sorted(folder.rglob("strategy.go")) + sorted(folder.rglob("status_strategy.go")):
        for function in FUNCTION.finditer(path.read_text()):
            entries = {
                group_version: [json.loads(f"[{args}]") for args in PATH.findall(body)]
                for group_version, body in ENTRY.findall(function.group(0))
            }
            if entries:
                found.append((path, function.group(1), entries))
    return found


def table(minor: str, discovery: Path | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    known = kinds(minor, discovery)
    rows: list[dict[str, Any]] = []
    unknown = []
    for path_of_module, under in SOURCES.items():
        folder = module(release(minor), path_of_module) / under
        for path, type_name, entries in strategies(folder):
            named = SUBRESOURCE.search(type_name)
            subresource = named.group(1).lower() if named else ""
            for group_version, paths in entries.items():
                group = group_version.rpartition("/")[0]
                folder_kind = FOLDER_KINDS.get(path.parent.name, path.parent.name)
                kind = known.get((group, folder_kind))
                if kind is None:
                    unknown.append(f"{path.relative_to(folder)} {type_name} {group_version}")
                    continue
                row = {"group_version": group_version, "kind": kind, "subresource": subresource}
                rows.append({**row, "reset": sorted(paths)})
    rows.sort(key=lambda r: (r["group_version"], r["kind"], r["subresource"]))
    return rows, unknown


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kube-version", default=CURRENT.minor_version)
    parser.add_argument("--discovery", type=Path, help="default: kube/data/discovery-MINOR.json")
    parser.add_argument("-o", "--output", type=Path, help="default: reset-fields-MINOR.json")
    args = parser.parse_args(argv)
    minor = args.kube_version
    rows, unknown = table(minor, args.discovery)
    for line in unknown:
        print(f"no kind in discovery-{minor}.json (not served by default): {line}", file=sys.stderr)
    output = args.output or ROOT / f"k8s_wiretap/kube/data/reset-fields-{minor}.json"
    head = {"source": f"Kubernetes {release(minor)} GetResetFields, by {Path(__file__).name}"}
    lines = [json.dumps(r, separators=(",", ":")) for r in rows]
    text = json.dumps(head, separators=(",", ":"))[:-1] + ',"resets":[\n'
    output.write_text(text + ",\n".join(lines) + "\n]}\n")
    print(f"{output}: {len(rows)} strategies", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
