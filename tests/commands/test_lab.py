"""`lab up --dir DIR` names DIR when DIR cannot be made, before anything else is checked
(with `--via-proxy` the recording's folder is DIR: it is not `--record` that is wrong)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import cli


@pytest.mark.parametrize("via_proxy", [(), ("--via-proxy",)], ids=["plain", "via-proxy"])
def test_a_dir_that_cannot_be_made_is_said_as_dir(tmp_path: Path, via_proxy: tuple[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    lab = blocker / "lab"
    done = cli("lab", "up", "--no-build", "--dir", str(lab), *via_proxy)
    assert done.returncode == 2
    assert done.stderr == f"k8s-wiretap: --dir {lab}: cannot make the folder: Not a directory\n"
