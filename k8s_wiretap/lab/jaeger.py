"""Build Jaeger v2 (the all-in-one `jaeger` binary) once, into the cache, to test the OTLP export.

Jaeger v2 is `./cmd/jaeger` of the `github.com/jaegertracing/jaeger` Go module, an
OpenTelemetry Collector distribution. Its go.mod has a `replace` directive, so
`go install ...@version` refuses it; the build downloads the module (`go mod download -json`)
and runs `go build ./cmd/jaeger` inside the downloaded source, whose go.mod and go.sum then
apply as the Jaeger project's own. No `ui` build tag: the query API is served, the web UI is
Jaeger's placeholder page (the tests read traces through the API only).

The binary goes to `<cache>/jaeger/<version>/jaeger`, written beside it and renamed into
place under `<cache>/jaeger/build.lock`; a second build reuses it. `python -m
k8s_wiretap.lab.jaeger` builds or reuses it (`make jaeger`); `--jobs N` is go build's `-p`
(1 is kinder to a busy machine).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

from k8s_wiretap.lab.buildsteps import BuildError, lock, run, stream
from k8s_wiretap.lab.golang import module_go, module_go_env, parse_go_version
from k8s_wiretap.paths import cache_dir

__all__ = ["JAEGER_MODULE", "JAEGER_VERSION", "cached_jaeger", "ensure_jaeger", "jaeger_path"]

JAEGER_MODULE = "github.com/jaegertracing/jaeger"
JAEGER_VERSION = "v1.75.0"  # the v1-numbered module tag; its cmd/jaeger is Jaeger v2
_LDFLAGS = "-s -w"


def jaeger_path(version: str = JAEGER_VERSION) -> Path:
    """Where the cached build of `version` is (or would be)."""
    return cache_dir() / "jaeger" / version / "jaeger"


def cached_jaeger(version: str = JAEGER_VERSION) -> Path | None:
    """The cached `jaeger` binary of `version`, or None when it is not built yet."""
    path = jaeger_path(version)
    return path if path.is_file() and os.access(path, os.X_OK) else None


def ensure_jaeger(
    version: str = JAEGER_VERSION, out: TextIO = sys.stderr, jobs: int | None = None
) -> Path:
    """The cached `jaeger` binary of `version`, built first if missing."""
    existing = cached_jaeger(version)
    if existing:
        print(f"reusing Jaeger {version} in {existing}", file=out, flush=True)
        return existing
    root = jaeger_path(version).parent.parent
    root.mkdir(parents=True, exist_ok=True)
    with lock(root / "build.lock", out):
        existing = cached_jaeger(version)  # a build that held the lock may have made it
        if existing:
            print(f"reusing Jaeger {version} in {existing}", file=out, flush=True)
            return existing
        return _build(version, out, jobs)


def _build(version: str, out: TextIO, jobs: int | None) -> Path:
    started = time.monotonic()
    target = jaeger_path(version)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="jaeger-build-") as scratch:
        source = _download(version, Path(scratch), out)
        go = _go_for(source)
        env = module_go_env(go, dict(os.environ))
        staging = target.parent / f"jaeger.tmp-{os.getpid()}"
        argv = [str(go), "build", "-trimpath", f"-ldflags={_LDFLAGS}", "-v"]
        argv += [f"-p={jobs}"] if jobs else []
        argv += ["-o", str(staging), "./cmd/jaeger"]
        print(f"[build] compiling Jaeger {version} with {go}", file=out, flush=True)
        stream(argv, source, env, out, f"compiling Jaeger {version}", unit="packages compiled")
    if not staging.is_file():
        raise BuildError(f"building Jaeger {version} made no binary")
    staging.rename(target)
    print(f"[build] Jaeger {version} built in {time.monotonic() - started:.0f} s", file=out)
    return target


def _download(version: str, work: Path, out: TextIO) -> Path:
    """The module's source in the module cache (fetched if missing)."""
    go = module_go()
    env = module_go_env(go, dict(os.environ))
    argv = [str(go), "mod", "download", "-json", f"{JAEGER_MODULE}@{version}"]
    text = run(argv, out, "download", cwd=work, env=env)
    folder = json.loads(text).get("Dir")
    if not folder:
        raise BuildError(f"go mod download {JAEGER_MODULE}@{version} gave no source")
    return Path(folder)


def _go_for(source: Path) -> Path:
    """A Go new enough for the module's go.mod `go` line."""
    for line in (source / "go.mod").read_text().splitlines():
        if line.startswith("go "):
            return module_go(parse_go_version(line.split()[1]))
    return module_go()


def main(argv: list[str] | None = None) -> int:
    """`python -m k8s_wiretap.lab.jaeger [--jobs N]`: build or reuse; print the binary's path."""
    parser = argparse.ArgumentParser(prog="python -m k8s_wiretap.lab.jaeger")
    parser.add_argument("--jobs", type=int, default=None, help="go build -p (default: Go's)")
    args = parser.parse_args(argv)
    try:
        print(ensure_jaeger(jobs=args.jobs))
    except BuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
