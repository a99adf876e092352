"""Which release a `--kube-version` means: `1.20`, `1.20.2`, `1.30`, `1.30.2`, `1.30.0-rc.1`
or `latest`.

A patch release is taken as given. A minor means its newest patch already built here (so
`lab up --kube-version 1.30` reuses a cached 1.30.2 instead of building 1.30.3), else the
newest patch the Go module proxy serves. `latest` is the newest release the module proxy
serves whose go.mod the machine's Go can build, else the newest one built here. The module
proxy is asked through `go list -m`, as any Go user asks it, and only when the cache cannot
answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile

from k8s_wiretap.kube.release import Release, ReleaseError
from k8s_wiretap.lab.binaries import cached_releases
from k8s_wiretap.lab.golang import ToolchainError, go_version, module_go, module_go_env
from k8s_wiretap.lab.golang import parse_go_version as _go
from k8s_wiretap.lab.releases import DEFAULT, MODULE_MINIMUM, KubeVersionError, parse_spec

__all__ = ["published_releases", "resolve_release"]

KUBERNETES_MODULE = "k8s.io/kubernetes"
LATEST_TRIES = 4  # releases looked at, newest first, for one the machine's Go can build


def resolve_release(spec: str | None = None, lookup: bool = True) -> Release:
    """The release `spec` (default: DEFAULT) names; KubeVersionError (one line) if none.

    `lookup=False` never asks the module proxy: only cached builds can answer for a minor.
    """
    wanted = parse_spec(spec or DEFAULT)
    if wanted is None:
        return _latest(lookup)
    if wanted.patch is not None:
        return wanted
    cached = [release for release in cached_releases() if release.minor_release == wanted]
    if cached:
        return cached[0]
    name = wanted.minor_version
    if not lookup:
        raise KubeVersionError(
            f"no build of Kubernetes {name} here; `k8s-wiretap lab build --kube-version {name}` "
            "makes one"
        )
    published = [r for r in published_releases() if r.minor_release == wanted]
    if not published:
        raise KubeVersionError(f"the Go module proxy serves no release of Kubernetes {name}")
    return published[0]


def _latest(lookup: bool) -> Release:
    cached = cached_releases()
    if lookup:
        try:
            return _newest_buildable()
        except KubeVersionError:
            if not cached:
                raise
    if cached:
        return cached[0]
    raise KubeVersionError(
        "--kube-version latest: no release built here yet; "
        "`k8s-wiretap lab build --kube-version latest` makes one"
    )


def published_releases() -> list[Release]:
    """Releases (no pre-releases) of k8s.io/kubernetes the module proxy serves that the lab
    can run, newest first."""
    data = _go_list("-versions", KUBERNETES_MODULE)
    releases = []
    versions = data.get("Versions")
    for version in versions if isinstance(versions, list) else []:
        try:
            release = Release.parse(str(version))
        except ReleaseError:
            continue
        if release.patch is not None and not release.suffix and release >= MODULE_MINIMUM:
            releases.append(release)
    return sorted(releases, reverse=True)


def _newest_buildable() -> Release:
    local = _local_go()
    for release in published_releases()[:LATEST_TRIES]:
        info = _go_list(f"{KUBERNETES_MODULE}@{release.git_version}")
        if _go(str(info.get("GoVersion") or "1.0")) <= local:
            return release
    raise KubeVersionError(
        f"no recent Kubernetes release builds with the machine's Go {'.'.join(map(str, local))}"
    )


def _local_go() -> tuple[int, ...]:
    try:
        version = go_version(str(module_go()))
    except ToolchainError as error:
        raise KubeVersionError(f"cannot look releases up: {error}") from error
    assert version is not None  # module_go only returns toolchains that run
    return version


def _go_list(*query: str) -> dict[str, object]:
    """`go list -m -json QUERY` outside any module; KubeVersionError with go's reason."""
    try:
        go = module_go()
    except ToolchainError as error:
        raise KubeVersionError(f"cannot look releases up: {error}") from error
    with tempfile.TemporaryDirectory(prefix="k8s-wiretap-go-") as empty:
        result = subprocess.run(
            [str(go), "list", "-m", "-json", *query],
            cwd=empty,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
            env=module_go_env(go, dict(os.environ)),
        )
    if result.returncode != 0:
        reason = (result.stderr.strip().splitlines() or ["no output"])[-1].strip()
        raise KubeVersionError(f"go list -m {' '.join(query)} failed: {reason}")
    data: dict[str, object] = json.loads(result.stdout)
    return data
