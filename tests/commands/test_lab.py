"""`lab up --dir DIR` names DIR when DIR cannot be made, before anything else is checked
(with `--via-proxy` the recording's folder is DIR: it is not `--record` that is wrong);
a wrong `--bin-dir` is refused before any release is looked for; `--kube-version`'s help."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from k8s_wiretap.lab.releases import DEBIAN_RELEASE, DEFAULT
from tests.conftest import cli


@pytest.mark.parametrize("via_proxy", [(), ("--via-proxy",)], ids=["plain", "via-proxy"])
def test_a_dir_that_cannot_be_made_is_said_as_dir(tmp_path: Path, via_proxy: tuple[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    lab = blocker / "lab"
    done = cli("lab", "up", "--no-build", "--dir", str(lab), *via_proxy)
    assert done.returncode == 2
    assert done.stderr == f"k8s-wiretap: --dir {lab}: cannot make the folder: Not a directory\n"


def test_kube_version_help_says_which_release_is_built_from_debians_source() -> None:
    """The help is made from the release data: 1.20 is Debian's, the default is not."""
    wide = {**os.environ, "COLUMNS": "1000"}  # one line per option
    for command in (("lab", "up"), ("lab", "build")):
        done = cli(*command, "--help", env=wide)
        assert done.returncode == 0, done.stderr
        said = next(
            line
            for line in done.stdout.splitlines()
            if line.lstrip().startswith("--kube-version V")
        )
        assert f"{DEBIAN_RELEASE.minor_version} (built from Debian's source)" in said, said
        assert f"{DEFAULT} (the default; built from Go modules)" in said, said


def test_a_bin_dir_that_is_no_folder_is_refused_before_any_release_is_sought(
    tmp_path: Path,
) -> None:
    """With an empty cache (no build of any release), the wrong option is what is said."""
    missing = tmp_path / "no-such-bin"
    empty = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    lab = tmp_path / "lab"
    done = cli("lab", "up", "--no-build", "--dir", str(lab), "--bin-dir", str(missing), env=empty)
    assert done.returncode == 2
    assert done.stderr == f"k8s-wiretap: --bin-dir {missing}: no such folder\n"
    assert not lab.exists()  # nothing was started
