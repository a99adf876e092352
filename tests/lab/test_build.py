"""Build helpers that can be checked without a long compile (the compiles themselves run in
`make test` through `k8s-wiretap lab build` on a machine without cached binaries)."""

from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path

import pytest

from k8s_wiretap.kube.release import CURRENT, Release
from k8s_wiretap.lab import build, debian, gomodules
from k8s_wiretap.lab.buildsteps import BuildError, SourceEdit, apply_edits, run, stream
from k8s_wiretap.lab.golang import DEBIAN_GO, module_go_env
from k8s_wiretap.lab.releases import DEBIAN_RELEASE, built, cache_name


def test_deb_src_detection_reads_both_source_formats() -> None:
    assert debian._mentions_deb_src("Types: deb deb-src\nURIs: http://deb.debian.org/debian\n")
    assert debian._mentions_deb_src("deb-src http://deb.debian.org/debian bookworm main\n")
    assert not debian._mentions_deb_src("Types: deb\nURIs: http://deb.debian.org/debian\n")
    assert not debian._mentions_deb_src("# deb-src http://deb.debian.org/debian bookworm main\n")


@pytest.mark.parametrize("edits", [debian.SOURCE_EDITS, gomodules.MODULE_EDITS])
def test_source_edits_refuse_a_tree_they_do_not_fit(
    tmp_path: Path, edits: tuple[SourceEdit, ...]
) -> None:
    for edit in edits:
        (tmp_path / edit.path).parent.mkdir(parents=True, exist_ok=True)
        if edit.old:
            (tmp_path / edit.path).write_text("package changed\n")
    with pytest.raises(BuildError, match="no longer applies"):
        apply_edits(tmp_path, edits)


@pytest.mark.parametrize("release", [DEBIAN_RELEASE, CURRENT])
def test_a_complete_cache_is_reused_without_building(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, release: Release
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = tmp_path / f"k8s-wiretap/kube/{cache_name(release)}/bin"
    folder.mkdir(parents=True)
    for name in built(release):
        (folder / name).write_text("")
        (folder / name).chmod(0o755)
    out = io.StringIO()
    assert build.build(release, out) == folder
    assert f"reusing Kubernetes {release} binaries in {folder}" in out.getvalue()


def test_1_20_builds_with_debians_go_whatever_path_and_goroot_say(tmp_path: Path) -> None:
    """The 1.20 tree's make runs the first `go` on PATH; here /usr/local/go/bin (Go 1.26)
    comes first on PATH, and an inherited GOROOT or GOTOOLCHAIN would point Go 1.19 at the
    wrong standard library. The make environment must give Debian's Go 1.19 regardless."""
    inherited = {
        **os.environ,
        "PATH": f"/usr/local/go/bin:{os.environ['PATH']}",
        "GOROOT": "/usr/local/go",
        "GOTOOLCHAIN": "go1.26.8",
        "GOFLAGS": "-mod=mod",
    }
    env = debian.make_env(tmp_path / "tree", tmp_path, inherited)
    assert env["PATH"].split(os.pathsep)[0] == str(DEBIAN_GO)
    assert "GOROOT" not in env and "GOFLAGS" not in env
    assert env["CGO_ENABLED"] == "0"
    found = subprocess.run(
        ["sh", "-c", "command -v go && go version && go env GOROOT"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    assert found[0] == str(DEBIAN_GO / "go")
    assert found[1].startswith("go version go1.19.")
    assert found[2] == "/usr/lib/go-1.19"


def test_module_builds_never_switch_toolchains_or_take_inherited_flags() -> None:
    env = module_go_env(Path("/usr/local/go/bin/go"), {"PATH": "/usr/bin", "GOFLAGS": "-x"})
    assert env["PATH"].split(os.pathsep)[0] == "/usr/local/go/bin"
    assert env["GOTOOLCHAIN"] == "local" and env["CGO_ENABLED"] == "0"
    assert "GOFLAGS" not in env


KUBERNETES_GO_MOD = """module k8s.io/kubernetes

go 1.26.0

godebug default=go1.26

require (
\tk8s.io/api v0.0.0
\tk8s.io/kubelet v0.0.0
)

replace (
\tk8s.io/api => ./staging/src/k8s.io/api
\tk8s.io/kubelet => ./staging/src/k8s.io/kubelet
)
"""


def test_the_build_module_pins_every_staging_module_to_its_published_release() -> None:
    text = gomodules.kube_go_mod(Release.parse("1.33.2"), KUBERNETES_GO_MOD)
    assert "\ngo 1.26.0\ngodebug default=go1.26\n" in text
    assert "\nrequire k8s.io/kubernetes v1.33.2\n" in text
    assert "\tk8s.io/api => k8s.io/api v0.33.2\n" in text
    assert "\tk8s.io/kubelet => k8s.io/kubelet v0.33.2\n" in text
    beta = gomodules.kube_go_mod(Release.parse("1.33.0-beta.0"), KUBERNETES_GO_MOD)
    assert "\nrequire k8s.io/kubernetes v1.33.0-beta.0\n" in beta
    assert "\tk8s.io/api => k8s.io/api v0.33.0-beta.0\n" in beta
    assert "./staging" not in text


def test_etcd_version_comes_from_the_releases_own_script(tmp_path: Path) -> None:
    (tmp_path / "hack/lib").mkdir(parents=True)
    (tmp_path / "hack/lib/etcd.sh").write_text("# etcd\nETCD_VERSION=${ETCD_VERSION:-3.7.0}\n")
    assert gomodules.etcd_version(tmp_path) == "3.7.0"
    (tmp_path / "hack/lib/etcd.sh").write_text("ETCD_VERSION=latest\n")
    with pytest.raises(BuildError, match="no longer names the etcd version"):
        gomodules.etcd_version(tmp_path)


def test_a_failed_step_is_one_line_with_go_s_own_reason(tmp_path: Path) -> None:
    out = io.StringIO()
    script = "echo go: downloading x; echo 'go: k8s.io/kubernetes@v1.33.9: unknown revision' >&2"
    with pytest.raises(BuildError) as caught:
        run(["sh", "-c", f"{script}; exit 1"], out, "download")
    assert str(caught.value) == (
        "download failed (exit 1): go: k8s.io/kubernetes@v1.33.9: unknown revision"
    )
    assert "[build] | go: downloading x" in out.getvalue()
    with pytest.raises(BuildError, match=r"^compiling failed \(exit 2\): boom$"):
        stream(["sh", "-c", "echo one; echo boom; exit 2"], tmp_path, {}, out, "compiling")


def test_a_release_without_kubemark_builds_the_other_commands(tmp_path: Path) -> None:
    """1.38 removed cmd/kubemark: the build makes what the module has, in COMMANDS' order."""
    for name in ("kubectl", "kube-apiserver", "kube-scheduler", "kube-controller-manager"):
        (tmp_path / "cmd" / name).mkdir(parents=True)
    assert gomodules.shipped_commands(tmp_path) == [
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
        "kubectl",
    ]
    (tmp_path / "cmd" / gomodules.HOLLOW).mkdir()
    assert gomodules.shipped_commands(tmp_path) == list(gomodules.COMMANDS)
