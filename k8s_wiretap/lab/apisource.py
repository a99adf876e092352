"""The Kubernetes API sources the protobuf schema is generated from, fetched once and cached.

`scripts/generate_schema.py` reads each API package's `generated.proto` and Go files, and tests
regenerate the committed schema and fixtures from them. They come from the same Debian
`kubernetes` source package the lab's binaries are built from. Only the folders the generator
and the fixture scripts read are kept (the API types, apimachinery and every `pkg/apis`
folder: about 40 MB instead of the whole tree), in `<cache>/kube/sources/kubernetes-<version>`,
written through a temporary folder under the build lock, so racing fetches produce one copy.
`python -m k8s_wiretap.lab.apisource` fetches it (or finds it) and prints its path: `make
test` runs it before the suite, whose tests only find the tree (`cached_api_source`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path
from typing import TextIO

from k8s_wiretap.lab.binaries import built_cache_root
from k8s_wiretap.lab.buildsteps import lock
from k8s_wiretap.lab.debian import download_source, unpack_source

__all__ = ["api_source", "cached_api_source", "main"]

KEPT = ("/staging/src/k8s.io/api/", "/staging/src/k8s.io/apimachinery/", "/pkg/apis/")
# A copy is complete once renamed into place; these tell it from a stray folder.
MARKERS = ("staging/src/k8s.io/api", "staging/src/k8s.io/apimachinery")


def cached_api_source() -> Path | None:
    """A complete cached tree, if one exists."""
    trees = sorted(built_cache_root().glob("sources/kubernetes-*"))
    complete = [tree for tree in trees if all((tree / m).exists() for m in MARKERS)]
    return complete[-1] if complete else None


def api_source(out: TextIO = sys.stderr) -> Path:
    """The cached API source tree, fetched from Debian's source package when missing."""
    root = built_cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with lock(root / "build.lock", out):
        return cached_api_source() or _fetch(root, out)


def _fetch(root: Path, out: TextIO) -> Path:
    work = root / f"source-work-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    try:
        tarball = download_source(work, out)
        tree, _ = unpack_source(tarball, work, out, keep=_kept)
        target = root / "sources" / tree.name
        shutil.rmtree(target, ignore_errors=True)
        target.parent.mkdir(exist_ok=True)
        tree.rename(target)
        print(f"[build] API sources in {target}", file=out, flush=True)
        return target
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _kept(name: str) -> bool:
    return any(folder in name for folder in KEPT)


def main(argv: list[str] | None = None) -> int:
    """`python -m k8s_wiretap.lab.apisource`: fetch or reuse; print the tree's path."""
    argparse.ArgumentParser(prog="python -m k8s_wiretap.lab.apisource").parse_args(argv)
    print(api_source())
    return 0


if __name__ == "__main__":
    sys.exit(main())
