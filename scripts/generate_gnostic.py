"""Generate k8s_wiretap/kube/data/gnostic-openapi.json from gnostic's OpenAPI protos.

    python scripts/generate_gnostic.py [--kube-version MINOR] [-o FILE]

The API server serves `/openapi/v2` and `/openapi/v3/...` in protobuf as gnostic's messages
(`openapi.v2.Document`, `openapi.v3.Document`), from the Go module
github.com/google/gnostic-models at the version the release's k8s.io/kubernetes go.mod
requires (the default release's, kube.release.CURRENT, unless told). This script reads that
module's openapiv2/OpenAPIv2.proto and openapiv3/OpenAPIv3.proto (fetched with `go mod
download`, k8s_wiretap/lab/apimodules.py) and writes every message's fields, one message a
line:

    {"source": "...",
     "messages": {"openapi.v2.Schema": [[1, "_ref", "string", ""], ...], ...}}

A field is [number, proto name, type, label]: the type is a proto scalar or the message's
full name ("openapi.v2.Schema", "google.protobuf.Any"), the label "repeated", "oneof" (a
member of the message's oneof) or "". k8s_wiretap/decode/gnostic_proto.py reads the
documents with it. The protos are plain proto3 (no nested messages, maps or options inside
messages), read line by line; anything else stops the script.
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

from k8s_wiretap.kube import datafiles  # noqa: E402
from k8s_wiretap.kube.release import CURRENT  # noqa: E402
from k8s_wiretap.lab.apimodules import KUBERNETES, module, module_dir, release  # noqa: E402

GNOSTIC = "github.com/google/gnostic-models"
PROTOS = ("openapiv2/OpenAPIv2.proto", "openapiv3/OpenAPIv3.proto")
OUTPUT = "gnostic-openapi.json"
FIELD = re.compile(r"(repeated\s+)?([\w.]+)\s+(\w+)\s*=\s*(\d+)\s*;")
SCALARS = {"string", "bool", "int32", "int64", "uint32", "uint64", "double", "float", "bytes"}


class ProtoError(Exception):
    """A proto this script does not read."""


def gnostic_version(minor: str) -> str:
    """The gnostic-models version Kubernetes `minor`'s go.mod requires."""
    go_mod = (module(release(minor), KUBERNETES) / "go.mod").read_text()
    found = re.search(rf"^\s*{re.escape(GNOSTIC)} (v\S+)", go_mod, re.M)
    if found is None:
        raise ProtoError(f"Kubernetes {minor}'s go.mod requires no {GNOSTIC}")
    return found.group(1)


def parse_proto(text: str) -> dict[str, list[list[Any]]]:
    """Message full name → its fields, [number, name, type, label], in file order."""
    text = re.sub(r"//[^\n]*", "", text)
    package = re.search(r"^package ([\w.]+);", text, re.M)
    if package is None:
        raise ProtoError("no package")
    messages: dict[str, list[list[Any]]] = {}
    current: list[list[Any]] | None = None
    oneof = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if current is None:
            opened = re.fullmatch(r"message (\w+) \{", line)
            if opened:
                current = messages.setdefault(f"{package.group(1)}.{opened.group(1)}", [])
            continue
        if line == "}":
            if oneof:
                oneof = False
            else:
                current = None
            continue
        if re.fullmatch(r"oneof \w+ \{", line):
            oneof = True
            continue
        field = FIELD.fullmatch(line)
        if field is None:
            raise ProtoError(f"not a field: {line!r}")
        repeated, kind, name, number = field.groups()
        if kind not in SCALARS and "." not in kind:
            kind = f"{package.group(1)}.{kind}"
        label = "repeated" if repeated else "oneof" if oneof else ""
        current.append([int(number), name, kind, label])
    return messages


def table(minor: str) -> dict[str, Any]:
    """The document this script writes, for Kubernetes `minor`'s gnostic-models."""
    version = gnostic_version(minor)
    folder = module_dir(GNOSTIC, version)
    messages: dict[str, list[list[Any]]] = {}
    for proto in PROTOS:
        messages.update(parse_proto((folder / proto).read_text()))
    source = (
        f"{GNOSTIC} {version} ({', '.join(PROTOS)}; required by Kubernetes "
        f"{release(minor)}), by scripts/{Path(__file__).name}"
    )
    return {"source": source, "messages": dict(sorted(messages.items()))}


def text_of(document: dict[str, Any]) -> str:
    """The document as JSON, one message a line (a regeneration's diff reads well)."""

    def compact(value: Any) -> str:
        return json.dumps(value, separators=(",", ":"))

    lines = [f"{compact(name)}:{compact(fields)}" for name, fields in document["messages"].items()]
    head = f'{{"source":{compact(document["source"])},\n"messages":{{\n'
    return head + ",\n".join(lines) + "\n}}\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kube-version", default=CURRENT.minor_version)
    parser.add_argument("-o", "--output", type=Path, help=f"default: kube/data/{OUTPUT}")
    args = parser.parse_args(argv)
    document = table(args.kube_version)
    output = args.output or datafiles.path(OUTPUT)
    output.write_text(text_of(document))
    print(f"{output}: {len(document['messages'])} messages", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
