"""The binary search order: --bin-dir, KUBEBUILDER_ASSETS, the release's cache, then PATH
for what the release does not build."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from k8s_wiretap.kube.release import CURRENT, Release
from k8s_wiretap.lab.binaries import MissingBinaryError, find_binary, locate
from k8s_wiretap.lab.releases import DEBIAN_RELEASE, built, cache_name


def executable(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("KUBEBUILDER_ASSETS", "K8S_WIRETAP_BIN_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "path"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


def cache(isolated: Path, release: Release) -> Path:
    folder = isolated / f"cache/k8s-wiretap/kube/{cache_name(release)}/bin"
    for name in built(release):
        executable(folder, name)
    return folder


def test_search_order(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    on_path = executable(isolated / "path", "kube-apiserver")
    etcd = executable(isolated / "path", "etcd")
    assert find_binary("kube-apiserver") is None  # of unknown version: not 1.20's
    cached = cache(isolated, DEBIAN_RELEASE)
    assert find_binary("kube-apiserver") == cached / "kube-apiserver"
    assert find_binary("etcd") == etcd  # 1.20 runs Debian's etcd
    assert on_path.exists()
    assets = executable(isolated / "assets", "kube-apiserver")
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(isolated / "assets"))
    assert find_binary("kube-apiserver") == assets
    explicit = executable(isolated / "explicit", "kube-apiserver")
    assert find_binary("kube-apiserver", isolated / "explicit") == explicit
    monkeypatch.setenv("K8S_WIRETAP_BIN_DIR", str(isolated / "explicit"))
    assert find_binary("kube-apiserver") == explicit


def test_a_current_release_never_takes_etcd_from_path(isolated: Path) -> None:
    """PATH has Debian's etcd 3.4 on these machines; the default release is tested with its
    own etcd."""
    executable(isolated / "path", "etcd")
    release = CURRENT
    assert find_binary("etcd", release=release) is None
    cached = cache(isolated, release)
    assert find_binary("etcd", release=release) == cached / "etcd"
    assert find_binary("kubectl", release=release) == cached / "kubectl"
    with pytest.raises(
        MissingBinaryError, match=r"--kube-version 1\.20\.2` to build them from Debian"
    ):
        locate(["kube-apiserver"])


def test_incomplete_cache_is_ignored(isolated: Path) -> None:
    executable(isolated / "cache/k8s-wiretap/kube/partial/bin", "kube-apiserver")
    assert find_binary("kube-apiserver") is None


def test_non_executable_files_do_not_count(isolated: Path) -> None:
    (isolated / "path").mkdir()
    (isolated / "path" / "etcd").write_text("")
    assert find_binary("etcd") is None


def test_missing_names_every_absent_binary_and_the_remedy(isolated: Path) -> None:
    executable(isolated / "path", "etcd")
    with pytest.raises(MissingBinaryError) as caught:
        locate(["etcd", "kube-apiserver", "kubemark"], isolated / "nowhere")
    message = str(caught.value)
    assert message.startswith(
        "missing kube-apiserver, kubemark of Kubernetes 1.20.2 (looked in: --bin-dir "
    )
    assert "k8s-wiretap lab build" in message
    assert os.linesep not in message


def test_builds_made_before_the_current_source_changes_are_not_trusted(isolated: Path) -> None:
    old = isolated / "cache/k8s-wiretap/kube/1.20.2-wiretap1/bin"
    for name in ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubemark"):
        executable(old, name)
    assert find_binary("kube-apiserver") is None
