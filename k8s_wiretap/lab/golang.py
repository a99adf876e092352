"""The Go toolchains the lab builds with, each pinned to what its release needs.

Kubernetes 1.20 (Debian's source package) builds with Debian's Go 1.19 and nothing else: the
tree's `make` runs whatever `go` is first on PATH, and a newer Go there (this machine has Go
1.26 in /usr/local/go, first on PATH) builds a different 1.20, or none. So that build gets
Debian's toolchain folder first on PATH and no inherited GOROOT, GOTOOLCHAIN or GOFLAGS.

Releases built from Go modules need a Go at least as new as their go.mod's `go` line
(`go_requirement`). The first new enough of `$K8S_WIRETAP_GO`, /usr/local/go/bin/go and `go`
on PATH is used, with GOTOOLCHAIN=local so that Go never fetches another toolchain by itself.
When none is new enough (a release made with a Go newer than the machine's), the machine's
Go runs with GOTOOLCHAIN set to the oldest of APPROVED_TOOLCHAINS that is: the go command
then fetches that toolchain from the Go module proxy, as it fetches a module, once per
machine (`toolchain_for` decides, from the go.mod's line, never from the release's number).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from k8s_wiretap.errors import WiretapError

__all__ = [
    "APPROVED_TOOLCHAINS",
    "DEBIAN_GO",
    "LOCAL",
    "ToolchainError",
    "debian_go_env",
    "download_toolchain",
    "go_requirement",
    "go_version",
    "module_go",
    "module_go_env",
    "module_toolchain",
    "parse_go_version",
    "toolchain_for",
]

DEBIAN_GO = Path("/usr/lib/go-1.19/bin")  # Debian bookworm's golang-1.19-go
MODULE_GO_CANDIDATES = ("/usr/local/go/bin/go",)
# Toolchains the go command may fetch (GOTOOLCHAIN=<one>) for a module that needs a Go newer
# than the machine's: the versions approved for this machine, oldest first.
APPROVED_TOOLCHAINS = ("go1.27.3",)
LOCAL = "local"  # GOTOOLCHAIN: the go command that runs, never another
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


def go_requirement(go_mod: str) -> tuple[int, ...]:
    """The Go a go.mod's `go` line asks for ((1, 0) when it has none)."""
    match = re.search(r"^go\s+(\S+)\s*$", go_mod, re.M)
    return parse_go_version(match.group(1)) if match else (1, 0)


def toolchain_for(required: tuple[int, ...], local: tuple[int, ...]) -> str:
    """GOTOOLCHAIN for a module that needs Go `required` where the machine's Go is `local`:
    "local" when that is new enough, else the oldest approved toolchain that is."""
    if local >= required:
        return LOCAL
    for name in APPROVED_TOOLCHAINS:
        if parse_go_version(name) >= required:
            return name
    wanted = ".".join(map(str, required))
    raise ToolchainError(
        f"need Go {wanted} or newer: the machine has go{'.'.join(map(str, local))} and no "
        f"approved toolchain is new enough ({', '.join(APPROVED_TOOLCHAINS)})"
    )


def download_toolchain(answer: Mapping[str, object], go: Path) -> str | None:
    """For a `go mod download -json` answer that failed because the module's go.mod asks for
    a Go newer than `go` (the answer still names the go.mod it read): the GOTOOLCHAIN to
    download it with, else None."""
    go_mod = answer.get("GoMod")
    if not answer.get("Error") or not isinstance(go_mod, str) or not Path(go_mod).is_file():
        return None
    local = go_version(str(go))
    required = go_requirement(Path(go_mod).read_text())
    if local is None or local >= required:
        return None
    return toolchain_for(required, local)


def module_toolchain(required: tuple[int, ...] = (1, 0)) -> tuple[Path, str]:
    """The go command and the GOTOOLCHAIN to build a module that needs Go `required`: a
    new enough local toolchain ("local"), else the newest local one and an approved one."""
    try:
        return module_go(required), LOCAL
    except ToolchainError:
        go = module_go()
        version = go_version(str(go))
        assert version is not None  # module_go only returns toolchains that run
        return go, toolchain_for(required, version)


def _scrubbed(environ: os._Environ[str] | dict[str, str]) -> dict[str, str]:
    return {key: value for key, value in environ.items() if key not in _SCRUBBED}


def debian_go_env(base: dict[str, str]) -> dict[str, str]:
    """`base` changed so that `go` is Debian's Go 1.19, whatever PATH and GO* said."""
    env = _scrubbed(base)
    env["PATH"] = os.pathsep.join([str(DEBIAN_GO), env.get("PATH", "/usr/bin:/bin")])
    env["GOENV"] = "off"  # the user's go env file is for their own (newer) Go
    env["GOTOOLCHAIN"] = "local"
    return env


def module_go_env(go: Path, base: dict[str, str], toolchain: str = LOCAL) -> dict[str, str]:
    """`base` for building with `go`: that command first on PATH, running `toolchain` (its
    own, or an approved one it fetches: `module_toolchain`) and never another one."""
    env = _scrubbed(base)
    env["PATH"] = os.pathsep.join([str(go.parent), env.get("PATH", "/usr/bin:/bin")])
    env["GOTOOLCHAIN"] = toolchain
    env["GOWORK"] = "off"
    env["CGO_ENABLED"] = "0"
    return env
