"""Find the control-plane binaries the lab runs.

Each binary is looked for, in this order: an explicit folder (`--bin-dir` or
`K8S_WIRETAP_BIN_DIR`), an envtest-style `KUBEBUILDER_ASSETS` folder, `PATH`, then the
project's cache of binaries built from Debian's source package (see `build.py`). Binaries can
come from different places (envtest ships etcd and kube-apiserver only).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from k8s_wiretap.errors import WiretapError
from k8s_wiretap.paths import cache_dir

__all__ = [
    "BUILT_BINARIES",
    "MissingBinaryError",
    "built_cache_root",
    "cached_bin_dirs",
    "find_binary",
    "locate",
]

# What `build.py` compiles from the Kubernetes source tree; etcd comes from Debian's etcd-server.
BUILT_BINARIES = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubemark")
# Names the source changes `build.py` makes; cached builds carry it (`<version>-<tag>`).
BUILD_TAG = "wiretap3"


class MissingBinaryError(WiretapError):
    """A binary no source could provide."""


def built_cache_root() -> Path:
    """Folder holding one `<version>/bin` folder per build."""
    return cache_dir() / "kube"


def cached_bin_dirs() -> list[Path]:
    """Complete cached builds of the current BUILD_TAG, newest first (older builds, made
    without today's source changes, are ignored rather than trusted)."""
    root = built_cache_root()
    if not root.is_dir():
        return []
    complete = [
        d / "bin"
        for d in root.iterdir()
        if d.name.endswith(f"-{BUILD_TAG}") and _has_all(d / "bin", BUILT_BINARIES)
    ]
    return sorted(complete, key=lambda p: p.stat().st_mtime, reverse=True)


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


def find_binary(name: str, bin_dir: Path | None = None) -> Path | None:
    """The first executable called `name` in the search order, or None."""
    for _, folder in _search_dirs(bin_dir):
        if _executable(folder / name):
            return folder / name
    on_path = shutil.which(name)
    if on_path:
        return Path(on_path)
    for folder in cached_bin_dirs():
        if _executable(folder / name):
            return folder / name
    return None


def locate(names: Iterable[str], bin_dir: Path | None = None) -> dict[str, Path]:
    """Every binary in `names`, or one error naming all that are missing and how to get them."""
    found = {name: find_binary(name, bin_dir) for name in names}
    missing = [name for name, path in found.items() if path is None]
    if missing:
        raise MissingBinaryError(_missing_message(missing, bin_dir))
    return {name: path for name, path in found.items() if path is not None}


def _missing_message(missing: list[str], bin_dir: Path | None) -> str:
    looked = [f"{label} {folder}" for label, folder in _search_dirs(bin_dir)]
    looked += ["PATH", f"cache {built_cache_root()}"]
    return (
        f"missing {', '.join(missing)} (looked in: {'; '.join(looked)}); "
        "run `k8s-wiretap lab build` to build them from Debian's kubernetes source package, "
        "or point --bin-dir / KUBEBUILDER_ASSETS at a folder that has them"
    )
