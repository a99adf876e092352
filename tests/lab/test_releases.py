"""--kube-version: what each spelling means, without asking the module proxy."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from k8s_wiretap.kube.release import CURRENT as DEFAULT_RELEASE
from k8s_wiretap.kube.release import Release
from k8s_wiretap.lab.releases import (
    CURRENT,
    DEBIAN_RELEASE,
    DEFAULT,
    KubeVersionError,
    built,
    cache_name,
    from_debian,
    parse_spec,
    token_secrets,
)
from k8s_wiretap.lab.versions import resolve_release
from tests.conftest import cli


def cached(root: Path, release: Release) -> None:
    folder = root / "k8s-wiretap/kube" / cache_name(release) / "bin"
    folder.mkdir(parents=True)
    for name in built(release):
        (folder / name).write_text("")
        (folder / name).chmod(0o755)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path


def test_spellings() -> None:
    assert parse_spec("1.20") == Release(1, 20, 2)
    assert parse_spec("1.20.2") == Release(1, 20, 2)
    assert parse_spec("1.33") == Release(1, 33)
    assert parse_spec("v1.33.2") == Release(1, 33, 2)
    assert parse_spec("1.33.0-rc.1") == Release.parse("1.33.0-rc.1") != Release(1, 33, 0)
    assert parse_spec("latest") is None
    for wrong in ("1.20.5", "1.25", "1.33.x", "33", "1.33.2-gke.1", "1.33-beta.0"):
        with pytest.raises(KubeVersionError):
            parse_spec(wrong)


def test_the_default_is_the_current_release(cache: Path) -> None:
    assert DEFAULT == CURRENT == DEFAULT_RELEASE.minor_version
    cached(cache, DEFAULT_RELEASE)
    release = resolve_release(None, lookup=False)
    assert release == DEFAULT_RELEASE and not from_debian(release)


def test_1_20_comes_from_debian(cache: Path) -> None:
    release = resolve_release("1.20", lookup=False)
    assert release == DEBIAN_RELEASE and from_debian(release)
    assert cache_name(release) == "1.20.2-wiretap3"  # caches made before versions still count
    assert "etcd" not in built(release) and "kubectl" not in built(release)


def test_a_minor_means_its_newest_cached_patch(cache: Path) -> None:
    for version in ("1.33.1", "1.33.2", "1.32.3", "1.33.3-rc.0"):
        cached(cache, Release.parse(version))
    assert resolve_release("1.33", lookup=False) == Release.parse("1.33.3-rc.0")
    assert resolve_release("1.32", lookup=False) == Release.parse("1.32.3")
    assert resolve_release("1.33.1", lookup=False) == Release.parse("1.33.1")
    assert resolve_release("latest", lookup=False) == Release.parse("1.33.3-rc.0")


def test_a_minor_without_a_cached_build_needs_a_lookup(cache: Path) -> None:
    with pytest.raises(KubeVersionError, match=r"no build of Kubernetes 1\.35 here"):
        resolve_release("1.35", lookup=False)


def test_module_releases_build_their_own_etcd_and_kubectl() -> None:
    release = Release.parse("1.33.2")
    assert not from_debian(release) and not token_secrets(release)
    assert release.staging_version == "v0.33.2" and release.git_version == "v1.33.2"
    assert {"etcd", "kubectl", "kubemark"} <= set(built(release))


def test_make_binaries_builds_the_default_and_the_current_release() -> None:
    """The Makefile asks Python for the default release's minor (its one constant)."""
    said = subprocess.run(
        ["make", "-n", "-s", "binaries"],
        cwd=Path(__file__).parents[2],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()[-1]
    assert said.endswith(f"lab build --kube-version 1.20 --kube-version {CURRENT}"), said


def test_a_release_the_lab_does_not_run_is_a_one_line_usage_error(tmp_path: Path) -> None:
    for command in (("up", "--dir", str(tmp_path)), ("build",)):
        result = cli("lab", *command, "--kube-version", "1.25")
        assert result.returncode == 2
        assert result.stderr.strip().splitlines() == [
            "k8s-wiretap: --kube-version 1.25: the lab runs 1.20 (Debian's source package) "
            "or 1.30 and later (Go modules)"
        ]
