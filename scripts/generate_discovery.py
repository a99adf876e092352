"""Generate k8s_wiretap/kube/data/discovery-MINOR.json from a real kube-apiserver.

    python scripts/generate_discovery.py [--kube-version V]
    python scripts/generate_discovery.py --server URL --ca CA --cert CRT --key KEY

Without a server, starts a lab of its own (etcd and the API server only, of release V, by
default the lab's default) in a temporary folder and writes that release's file. The file
keeps, for every group version the server serves, each resource's group, version, plural,
kind, scope, verbs, subresources and short names, and each group's preferred version: what
`k8s_wiretap.kube.resources` needs to tell resource, kind and scope apart without guessing.
`tests/kube/test_resources.py` fetches the same from the test lab and compares.
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

from k8s_wiretap.kube.client import ApiClient  # noqa: E402
from k8s_wiretap.kube.release import Release  # noqa: E402
from k8s_wiretap.kube.resources import discovery_file, resources_of  # noqa: E402


def group_versions(client: ApiClient) -> tuple[list[str], dict[str, str]]:
    """Every served group version (`v1`, `apps/v1`, ...) and each group's preferred one."""
    versions = [f"{v}" for v in client.get("/api").json()["versions"]]
    preferred = {"": versions[0]}
    for group in client.get("/apis").json()["groups"]:
        versions += [v["groupVersion"] for v in group["versions"]]
        preferred[group["name"]] = group["preferredVersion"]["version"]
    return versions, preferred


def discovery(client: ApiClient) -> dict[str, Any]:
    versions, preferred = group_versions(client)
    resources = []
    for group_version in versions:
        path = f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"
        for item in resources_of(client.get(path).json()):
            resources.append(
                {
                    "group": item.group,
                    "version": item.version,
                    "resource": item.resource,
                    "kind": item.kind,
                    "namespaced": item.namespaced,
                    "verbs": list(item.verbs),
                    "subresources": list(item.subresources),
                    **({"short_names": list(item.short_names)} if item.short_names else {}),
                }
            )
    version = client.get("/version").json()["gitVersion"]
    return {
        "source": f"kube-apiserver {version} discovery, by scripts/generate_discovery.py",
        "preferred": preferred,
        "resources": resources,
    }


def write(document: dict[str, Any], path: Path) -> None:
    lines = [json.dumps(r, separators=(",", ":")) for r in document["resources"]]
    head = {k: v for k, v in document.items() if k != "resources"}
    text = json.dumps(head, separators=(",", ":"))[:-1] + ',"resources":[\n'
    path.write_text(text + ",\n".join(lines) + "\n]}\n")


def from_lab(version: str | None) -> dict[str, Any]:
    from k8s_wiretap.lab import Lab, UpOptions

    with tempfile.TemporaryDirectory(prefix="k8s-wiretap-discovery-") as folder:
        lab = Lab(Path(folder))
        state = lab.up(UpOptions(components=("apiserver",), kube_version=version))
        pki = Path(folder) / "pki"
        try:
            client = ApiClient(state.server, pki / "ca.crt", pki / "admin.crt", pki / "admin.key")
            return discovery(client)
        finally:
            lab.down()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server")
    parser.add_argument("--ca", type=Path)
    parser.add_argument("--cert", type=Path)
    parser.add_argument("--key", type=Path)
    parser.add_argument("--kube-version", help="the lab's release (default: the lab's default)")
    parser.add_argument("-o", "--output", type=Path, help="default: discovery-MINOR.json")
    args = parser.parse_args()
    if args.server:
        document = discovery(ApiClient(args.server, args.ca, args.cert, args.key))
    else:
        document = from_lab(args.kube_version)
    served_by = Release.parse(document["source"].split()[1])  # "kube-apiserver v1.30.2 ..."
    output = args.output or discovery_file(served_by.minor_version)
    write(document, output)
    print(f"{output}: {len(document['resources'])} resources", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
