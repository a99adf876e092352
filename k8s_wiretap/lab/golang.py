"""The Go toolchains the lab builds with, each pinned to what its release needs.

Kubernetes 1.20 (Debian's source package) builds with Debian's Go 1.19 and nothing else: the
tree's `make` runs whatever `go` is first on PATH, and a newer Go there (this machine has Go
1.26 in /usr/local/go, first on PATH) builds a different 1.20, or none. So that build gets
Debian's toolchain folder first on PATH and no inherited GOROOT, GOTOOLCHAIN or GOFLAGS.

Releases built from Go modules need a Go at least as new as their go.mod's `go` line; the
first new enough of `$K8S_WIRETAP_GO`, /usr/local/go/bin/go and `go` on PATH is used, with
GOTOOLCHAIN=local so that Go never fetches another toolchain by itself.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

from k8s_wiretap.errors import WiretapError

__all__ = [
    "DEBIAN_GO",
    "ToolchainError",
    "debian_go_env",
    "go_version",
    "module_go",
    "module_go_env",
    "parse_go_version",
]

DEBIAN_GO = Path("/usr/lib/go-1.19/bin")  # Debian bookworm's golang-1.19-go
MODULE_GO_CANDIDATES = ("/usr/local/go/bin/go",)
# Inherited settings that would make a build use another toolchain or other flags.
_SCRUBBED = ("GOROOT", "GOTOOLCHAIN", "GOFLAGS", "GOBIN", "GOOS", "GOARCH", "GOWORK", "GOENV")


class ToolchainError(WiretapError):
    """No Go toolchain fit to build a release."""


def parse_go_version(text: str) -> tuple[int, ...]:
    """`go1.26.8`, `1.26.0`, `1.26` → (1, 26, 8), (1, 26, 0), (1, 26)."""
    match = re.match(r"(?:go)?(\d+)\.(\d+)(?:\.(\d+))?", text.strip())
    if not match:
        raise ValueError(f"not a Go version: {text!r}")
    return tuple(int(part) for part in match.groups() if part is not None)


@cache
def go_version(go: str) -> tuple[int, ...] | None:
    """The version of the `go` binary at `go`, or None when it does not run."""
    try:
        result = subprocess.run(
            [go, "env", "GOVERSION"],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
            env=_scrubbed(os.environ) | {"GOTOOLCHAIN": "local"},
        )
    except OSError:
        return None
    if result.returncode != 0:
        return None
    try:
        return parse_go_version(result.stdout)
    except ValueError:
        return None


def _candidates() -> list[str]:
    explicit = os.environ.get("K8S_WIRETAP_GO")
    if explicit:
        return [explicit]
    on_path = shutil.which("go")
    found = [*MODULE_GO_CANDIDATES, *([on_path] if on_path else [])]
    return list(dict.fromkeys(found))


def module_go(required: tuple[int, ...] = (1, 0)) -> Path:
    """The first Go toolchain at least `required`; ToolchainError naming what was found."""
    seen = []
    for candidate in _candidates():
        version = go_version(candidate)
        if version is None:
            continue
        if version >= required:
            return Path(candidate)
        seen.append(f"{candidate} is go{'.'.join(map(str, version))}")
    wanted = ".".join(map(str, required))
    found = "; ".join(seen) or "no go found ($K8S_WIRETAP_GO, /usr/local/go/bin/go, PATH)"
    raise ToolchainError(f"need Go {wanted} or newer to build this release ({found})")


def _scrubbed(environ: os._Environ[str] | dict[str, str]) -> dict[str, str]:
    return {key: value for key, value in environ.items() if key not in _SCRUBBED}


def debian_go_env(base: dict[str, str]) -> dict[str, str]:
    """`base` changed so that `go` is Debian's Go 1.19, whatever PATH and GO* said."""
    env = _scrubbed(base)
    env["PATH"] = os.pathsep.join([str(DEBIAN_GO), env.get("PATH", "/usr/bin:/bin")])
    env["GOENV"] = "off"  # the user's go env file is for their own (newer) Go
    env["GOTOOLCHAIN"] = "local"
    return env


def module_go_env(go: Path, base: dict[str, str]) -> dict[str, str]:
    """`base` for building with `go`: that toolchain first on PATH, never another one."""
    env = _scrubbed(base)
    env["PATH"] = os.pathsep.join([str(go.parent), env.get("PATH", "/usr/bin:/bin")])
    env["GOTOOLCHAIN"] = "local"
    env["GOWORK"] = "off"
    env["CGO_ENABLED"] = "0"
    return env
