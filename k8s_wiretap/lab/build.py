"""Build the control-plane binaries of one Kubernetes release, once, into the cache.

1.20.2 comes from Debian's source package with Debian's Go 1.19 (debian.py); 1.30 and later
from the `k8s.io/kubernetes` Go module with the machine's current Go (gomodules.py). Either
way the result goes to `<cache>/kube/<version>-<tag>/bin`, written through a temporary folder
and renamed into place under one file lock, so two builds racing each other produce one cache
and the loser reuses it. The tag names the source changes the build makes; a cached build of
another tag is rebuilt, not trusted.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import TextIO

from k8s_wiretap.kube.release import Release
from k8s_wiretap.lab import apimodules
from k8s_wiretap.lab.binaries import built_cache_root, cached_bin_dir, cached_releases, find_binary
from k8s_wiretap.lab.buildsteps import BuildError, lock
from k8s_wiretap.lab.debian import apt_install, build_debian_release
from k8s_wiretap.lab.gomodules import build_module_release
from k8s_wiretap.lab.releases import DEBIAN_RELEASE, cache_name, from_debian

__all__ = ["BuildError", "build", "ensure_binaries"]


def ensure_binaries(release: Release = DEBIAN_RELEASE, out: TextIO = sys.stderr) -> Path:
    """Make sure every binary of `release` exists; build what is missing. Returns the
    release's cached bin folder."""
    if from_debian(release) and find_binary("etcd", release=release) is None:
        apt_install(("etcd-server",), out)
    return build(release, out)


def build(release: Release = DEBIAN_RELEASE, out: TextIO = sys.stderr) -> Path:
    """Build into the cache unless a complete build is already there."""
    root = built_cache_root()
    root.mkdir(parents=True, exist_ok=True)
    existing = cached_bin_dir(release)
    if existing:
        print(f"reusing Kubernetes {release} binaries in {existing}", file=out, flush=True)
        return existing
    with lock(root / "build.lock", out):
        existing = cached_bin_dir(release)  # a build that held the lock may have made it
        if existing:
            print(f"reusing Kubernetes {release} binaries in {existing}", file=out, flush=True)
            return existing
        return _build_locked(release, root, out)


def _build_locked(release: Release, root: Path, out: TextIO) -> Path:
    work = root / f"work-{release}-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    target = root / cache_name(release)
    try:
        if from_debian(release):
            return build_debian_release(release, target, work, out)
        return build_module_release(
            release, target, work, out, lambda: _hollow_kubelet(release, root, out)
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _hollow_kubelet(release: Release, root: Path, out: TextIO) -> Path:
    """kubemark for `release`, whose module ships none: that of the newest older release
    built here, else of the previous minor's pinned release, built now (the lock is held)."""
    for older in cached_releases():
        folder = cached_bin_dir(older)
        if older < release and folder and (folder / "kubemark").is_file():
            return folder / "kubemark"
    previous = f"{release.major}.{release.minor - 1}"
    if previous not in apimodules.RELEASES:
        raise BuildError(f"Kubernetes {release} ships no kubemark and {previous} is not pinned")
    return _build_locked(apimodules.release(previous), root, out) / "kubemark"
