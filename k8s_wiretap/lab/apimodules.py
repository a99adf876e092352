"""Kubernetes' API Go modules of each release, fetched with `go mod download` (Go's module cache).

Every Kubernetes release v1.N.P tags its staging modules v0.N.P: `k8s.io/api` (the API types,
their `generated.proto`, and `testdata/`: the compatibility fixtures of HEAD and of earlier
`v1.M.0` releases), `k8s.io/apimachinery` (meta/v1, runtime, intstr, resource),
`k8s.io/apiextensions-apiserver` and `k8s.io/kube-aggregator` (CustomResourceDefinition,
APIService); the main module `k8s.io/kubernetes` v1.N.P has the internal API packages
(`pkg/apis/*/*/conversion.go`). `scripts/generate_schema.py` and the conformance tests read
them from here, each release pinned in RELEASES.

`go mod download -json module@version` is the ordinary way to get them: it asks the module
proxy of `go env GOPROXY` once, checks the download against the checksum database, unpacks it
read-only into the module cache (`go env GOMODCACHE`) and afterwards answers from there with
no network. It takes the cache's own lock, so racing fetches are safe. A fetch that fails
raises GoModuleError with go's message.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from k8s_wiretap.kube.release import CURRENT, Release
from k8s_wiretap.lab.golang import download_toolchain

__all__ = [
    "API_MODULES",
    "KUBERNETES",
    "LATER_API_MODULES",
    "NEWEST",
    "PINNED",
    "RELEASES",
    "GoModuleError",
    "api_modules",
    "api_testdata",
    "go_binary",
    "module",
    "module_dir",
    "release",
]

# Kubernetes minor → the patch release whose modules are read: 1.20.2 is the release of
# Debian's source package (the lab's binaries); for the others, a recent patch that the
# module proxy serves for every one of the release's modules, k8s.io/kubernetes included.
# API types do not change between patches of a minor. The default release's minor is not
# in PINNED: it is kube.release.CURRENT. `make release` (scripts/release.py) edits PINNED:
# a pre-release is added here, a final release moves CURRENT and pins the one before.
PINNED: dict[str, str] = {
    "1.20": "1.20.2",
    "1.21": "1.21.1",
    "1.22": "1.22.5",
    "1.23": "1.23.6",
    "1.24": "1.24.3",
    "1.25": "1.25.9",
    "1.26": "1.26.9",
    "1.27": "1.27.4",
    "1.28": "1.28.3",
    "1.29": "1.29.15",
    "1.30": "1.30.14",
    "1.31": "1.31.14",
    "1.32": "1.32.13",
    "1.33": "1.33.13",
    "1.34": "1.34.4",
    "1.35": "1.35.4",
    "1.36": "1.36.3",
    "1.38": "1.38.0-beta.0",
}
RELEASES: dict[str, str] = dict(
    sorted(
        {**PINNED, CURRENT.minor_version: str(CURRENT)}.items(), key=lambda i: Release.parse(i[0])
    )
)
NEWEST = max(RELEASES, key=Release.parse)

# The modules whose packages the schema covers, by import path.
API_MODULES = (
    "k8s.io/api",
    "k8s.io/apimachinery",
    "k8s.io/apiextensions-apiserver",
    "k8s.io/kube-aggregator",
)
# Modules only some releases have, each taken where the release's k8s.io/kubernetes go.mod
# names it: from 1.38 the apiextensions types (CustomResourceDefinition, ConversionReview)
# are in k8s.io/apiextensions-api, and k8s.io/apiextensions-apiserver only aliases them.
LATER_API_MODULES = ("k8s.io/apiextensions-api",)
KUBERNETES = "k8s.io/kubernetes"
TIMEOUT = 900.0  # seconds for one download (k8s.io/kubernetes is about 20 MB)


class GoModuleError(Exception):
    """A module could not be fetched (no go, no network, no such version)."""


def go_binary() -> str:
    """The go command: on PATH, else Go's default install location."""
    found = shutil.which("go") or "/usr/local/go/bin/go"
    if not Path(found).exists():
        raise GoModuleError("go not found (on PATH or /usr/local/go/bin/go)")
    return found


@cache
def module_dir(path: str, version: str) -> Path:
    """The unpacked module `path@version` in Go's module cache, downloaded if missing; one
    whose go.mod asks for a Go newer than the machine's is downloaded with GOTOOLCHAIN set to
    an approved toolchain that is new enough (golang.download_toolchain)."""
    answer, result = _download(path, version, "local")
    toolchain = download_toolchain(answer, Path(go_binary()))
    if toolchain:
        answer, result = _download(path, version, toolchain)
    problem = answer.get("Error") or (result.stderr.strip() if result.returncode else "")
    directory = str(answer.get("Dir") or "")
    if problem or not directory or not Path(directory).is_dir():
        reason = problem or "no directory in go's answer"
        raise GoModuleError(f"go mod download {path}@{version}: {reason}")
    return Path(directory)


def _download(
    path: str, version: str, toolchain: str
) -> tuple[dict[str, object], subprocess.CompletedProcess[str]]:
    """go's answer to `go mod download -json path@version` with GOTOOLCHAIN=`toolchain`."""
    with tempfile.TemporaryDirectory(prefix="apimodules-") as scratch:  # outside any go.mod
        env = {**os.environ, "GO111MODULE": "on", "GOTOOLCHAIN": toolchain}
        try:
            result = subprocess.run(
                [go_binary(), "mod", "download", "-json", f"{path}@{version}"],
                cwd=scratch,
                env=env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise GoModuleError(f"go mod download {path}@{version}: {error}") from None
    try:
        answer = json.loads(result.stdout) if result.stdout.strip() else {}
    except json.JSONDecodeError:
        answer = {}
    return answer, result


def release(minor: str) -> Release:
    """The pinned release of Kubernetes `minor` ("1.30"); KeyError if not in RELEASES."""
    return Release.parse(RELEASES[minor])


def module(release: Release, path: str) -> Path:
    """One module of `release` (KUBERNETES: v1.N.P, the staging modules v0.N.P)."""
    version = release.git_version if path == KUBERNETES else release.staging_version
    return module_dir(path, version)


def api_modules(release: Release) -> dict[str, Path]:
    """Import path → directory of each of API_MODULES, and of those of LATER_API_MODULES
    the release has."""
    go_mod = (module(release, KUBERNETES) / "go.mod").read_text()
    later = [
        path for path in LATER_API_MODULES if re.search(rf"^\s*{re.escape(path)}\s", go_mod, re.M)
    ]
    return {path: module(release, path) for path in (*API_MODULES, *later)}


def api_testdata(release: Release) -> Path:
    """k8s.io/api's testdata: HEAD/ and the v1.M.0/ compatibility sets."""
    return module(release, "k8s.io/api") / "testdata"
