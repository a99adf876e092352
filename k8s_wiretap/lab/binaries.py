"""Find the control-plane binaries of one Kubernetes release.

Each binary is looked for, in this order: an explicit folder (`--bin-dir` or
`K8S_WIRETAP_BIN_DIR`), an envtest-style `KUBEBUILDER_ASSETS` folder, the release's own
cached build (`<cache>/kube/<version>-<tag>/bin`, see build.py), then `PATH` — but PATH only
for what the release's build does not make: a `kube-apiserver` or `etcd` of unknown version
on PATH must not stand in for the release asked for (this machine has Debian's etcd 3.4 on
PATH, right for 1.20, wrong for the others). Binaries can come from different places (envtest ships
etcd and kube-apiserver only); the explicit folders are trusted to hold the release asked for.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from k8s_wiretap.errors import WiretapError
from k8s_wiretap.kube.release import Release, ReleaseError
from k8s_wiretap.lab.releases import DEBIAN_RELEASE, MODULE_TAG, built, cache_name, from_debian
from k8s_wiretap.paths import cache_dir

__all__ = [
    "MissingBinaryError",
    "built_cache_root",
    "cached_bin_dir",
    "cached_releases",
    "find_binary",
    "locate",
]


class MissingBinaryError(WiretapError):
    """A binary no source could provide."""


def built_cache_root() -> Path:
    """Folder holding one `<version>-<tag>/bin` folder per build."""
    return cache_dir() / "kube"


def cached_bin_dir(release: Release) -> Path | None:
    """The release's complete cached build (one of another tag, made without today's source
    changes, is not trusted), or None."""
    folder = built_cache_root() / cache_name(release) / "bin"
    return folder if _has_all(folder, built(release)) else None


def cached_releases() -> list[Release]:
    """Every module release with a complete cached build, newest first."""
    root = built_cache_root()
    found = []
    for folder in root.iterdir() if root.is_dir() else ():
        version, _, tag = folder.name.rpartition("-")  # "1.30.0-rc.1-wiretap1": rc.1 kept
        try:
            release = Release.parse(version)
        except ReleaseError:
            continue
        if tag != MODULE_TAG or release.patch is None or str(release) != version:
            continue
        if not from_debian(release) and cached_bin_dir(release):
            found.append(release)
    return sorted(found, reverse=True)


def _has_all(folder: Path, names: Iterable[str]) -> bool:
    return all(_executable(folder / name) for name in names)


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _search_dirs(bin_dir: Path | None) -> list[tuple[str, Path]]:
    places: list[tuple[str, Path]] = []
    explicit = bin_dir or _env_path("K8S_WIRETAP_BIN_DIR")
    if explicit:
        places.append(("--bin-dir", explicit))
    assets = _env_path("KUBEBUILDER_ASSETS")
    if assets:
        places.append(("KUBEBUILDER_ASSETS", assets))
    return places


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value) if value else None


def find_binary(
    name: str, bin_dir: Path | None = None, release: Release = DEBIAN_RELEASE
) -> Path | None:
    """The first executable called `name` in the search order, or None."""
    for _, folder in _search_dirs(bin_dir):
        if _executable(folder / name):
            return folder / name
    cached = cached_bin_dir(release)
    if cached and _executable(cached / name):
        return cached / name
    if name not in built(release):
        on_path = shutil.which(name)
        if on_path:
            return Path(on_path)
    return None


def locate(
    names: Iterable[str], bin_dir: Path | None = None, release: Release = DEBIAN_RELEASE
) -> dict[str, Path]:
    """Every binary in `names`, or one error naming all that are missing and how to get them."""
    found = {name: find_binary(name, bin_dir, release) for name in names}
    missing = [name for name, path in found.items() if path is None]
    if missing:
        raise MissingBinaryError(_missing_message(missing, bin_dir, release))
    return {name: path for name, path in found.items() if path is not None}


def _missing_message(missing: list[str], bin_dir: Path | None, release: Release) -> str:
    looked = [f"{label} {folder}" for label, folder in _search_dirs(bin_dir)]
    looked.append(f"cache {built_cache_root() / cache_name(release) / 'bin'}")
    if any(name not in built(release) for name in missing):
        looked.append("PATH")
    source = (
        "Debian's kubernetes source package"
        if from_debian(release)
        else "the k8s.io/kubernetes Go module"
    )
    return (
        f"missing {', '.join(missing)} of Kubernetes {release} (looked in: {'; '.join(looked)}); "
        f"run `k8s-wiretap lab build --kube-version {release}` to build them from {source}, "
        "or point --bin-dir / KUBEBUILDER_ASSETS at a folder that has them"
    )
