"""`make demo`'s install step (the Makefile's `$(STAMP)` recipe) prints nothing when all
is well: not setuptools' "Editable installation" banner, which it prints for every
editable install even under `pip -q`; and a real error still shows."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def install_line() -> str:
    """The recipe's editable install, as make runs it."""
    shown = subprocess.run(
        ["make", "-n", "-B", "-C", str(ROOT), f"PYTHON={sys.executable}", ".venv/.installed-stamp"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "MAKEFLAGS": ""},
    ).stdout
    return next(line for line in shown.splitlines() if "pip install" in line and " -e " in line)


def run_install(tree: Path, venv: Path) -> subprocess.CompletedProcess[str]:
    """The recipe's line in `tree` with `venv`'s pip; the project alone (--no-deps): the
    dependencies are the lock's business, the banner comes from building the project."""
    line = install_line().replace(".venv/bin/python", shlex.quote(str(venv / "bin" / "python")))
    line = line.replace("-c constraints.txt -e '.[dev]'", "--no-deps -e .")
    return subprocess.run(
        ["sh", "-c", line], cwd=tree, capture_output=True, text=True, timeout=600, check=False
    )


@pytest.mark.lab  # builds the project with setuptools fetched by pip (the network)
def test_the_editable_install_is_quiet_and_errors_still_show(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    upgrade = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--upgrade", "pip"]
    subprocess.run(upgrade, check=True, timeout=600)  # as the recipe does first
    tree = tmp_path / "tree"
    files = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True, check=True
    ).stdout.split()
    for name in files:  # the checkout as committed, its links (recordings/, addons/) too
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, tree / name, follow_symlinks=False)
    done = run_install(tree, venv)
    assert done.returncode == 0, done.stderr
    assert "Editable installation" not in done.stderr and "****" not in done.stderr
    assert done.stdout + done.stderr == ""
    pyproject = tree / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('license = "Apache-2.0"', 'license = "?"'))
    broken = run_install(tree, venv)
    assert broken.returncode != 0 and "error" in broken.stderr.lower()
