"""`lab up --audit-webhook KUBECONFIG`: the API server's flags, which both releases take, and
a file that cannot be read refused before anything starts.

A lab started with it, posting to a real receiver, is tested in
tests/importers/test_webhook.py.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from k8s_wiretap.lab.binaries import locate
from k8s_wiretap.lab.components import audit_webhook_args
from k8s_wiretap.lab.releases import CURRENT
from k8s_wiretap.lab.versions import resolve_release
from tests.conftest import cli


@pytest.mark.lab  # the binaries' --help
@pytest.mark.parametrize("version", ["1.20", CURRENT])
def test_both_releases_take_the_webhook_flags(version: str) -> None:
    args = audit_webhook_args("/lab/audit-webhook.kubeconfig")
    assert args == (
        "--audit-webhook-config-file=/lab/audit-webhook.kubeconfig",
        "--audit-webhook-batch-max-wait=1s",
    )
    release = resolve_release(version, lookup=False)
    binary = locate(["kube-apiserver"], None, release)["kube-apiserver"]
    said = subprocess.run(
        [str(binary), "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    flags = {arg.split("=", 1)[0] for arg in args}
    for flag in flags:
        assert f"      {flag} " in said.stdout + said.stderr, flag


def test_a_kubeconfig_that_cannot_be_read_is_refused_in_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.kubeconfig"
    result = cli(
        "lab", "up", "--no-build", "--dir", str(tmp_path / "lab"), "--audit-webhook", str(missing)
    )
    assert result.returncode == 1
    assert result.stderr == f"k8s-wiretap: --audit-webhook {missing}: No such file or directory\n"
    assert not (tmp_path / "lab").exists()  # nothing was started
