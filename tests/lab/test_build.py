"""Build helpers that can be checked without an 8-minute compile (the compile itself runs in
`make test` through `k8s-wiretap lab build` on a machine without cached binaries)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from k8s_wiretap.lab import build
from k8s_wiretap.lab.binaries import BUILD_TAG, BUILT_BINARIES


def test_deb_src_detection_reads_both_source_formats() -> None:
    assert build._mentions_deb_src("Types: deb deb-src\nURIs: http://deb.debian.org/debian\n")
    assert build._mentions_deb_src("deb-src http://deb.debian.org/debian bookworm main\n")
    assert not build._mentions_deb_src("Types: deb\nURIs: http://deb.debian.org/debian\n")
    assert not build._mentions_deb_src("# deb-src http://deb.debian.org/debian bookworm main\n")


def test_source_edits_refuse_a_tree_they_do_not_fit(tmp_path: Path) -> None:
    for edit in build.SOURCE_EDITS:
        (tmp_path / edit.path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / edit.path).write_text("package changed\n")
    with pytest.raises(build.BuildError, match="no longer applies"):
        build._apply_edits(tmp_path)


def test_a_complete_cache_is_reused_without_building(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = tmp_path / f"k8s-wiretap/kube/1.20.2-{BUILD_TAG}/bin"
    folder.mkdir(parents=True)
    for name in BUILT_BINARIES:
        (folder / name).write_text("")
        (folder / name).chmod(0o755)
    out = io.StringIO()
    assert build.build(out) == folder
    assert f"reusing binaries in {folder}" in out.getvalue()
