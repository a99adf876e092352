"""`lab restart` of a component that crashed: it is started again, not refused."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from k8s_wiretap.lab import Lab, UpOptions
from tests.conftest import Kubectl, cli, wait_until


@pytest.mark.lab  # starts a lab of its own: it kills one of its components
def test_restart_starts_a_component_that_was_killed(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The controller manager killed with SIGKILL: `lab restart controller-manager` says it
    was not running, starts it, and it works again: a Deployment gets its ReplicaSet, once
    the new one holds the leader lease (the killed one's runs out after 60 s, see lab.md).
    Before the fix `restart` refused with "controller-manager is not running"."""
    lab = Lab(tmp_path / "lab")
    state = lab.up(UpOptions(components=("controller-manager",), build=False))
    try:
        manager = next(p for p in state.processes if p.name == "controller-manager")
        os.kill(manager.pid, signal.SIGKILL)
        wait_until(lambda: not manager.alive(), 10, "the controller manager to die")
        assert cli("lab", "status", "--dir", str(lab.dir)).returncode != 0

        result = cli("lab", "restart", "--dir", str(lab.dir), "controller-manager")
        assert result.returncode == 0, result.stderr
        assert f"controller-manager was not running (pid {manager.pid})" in result.stderr
        assert "controller-manager ready" in result.stderr
        status = cli("lab", "status", "--dir", str(lab.dir))
        assert status.returncode == 0, status.stdout + status.stderr

        kubectl = Kubectl(state.kubeconfig, tmp_path_factory.mktemp("cache"))
        kubectl("create", "deployment", "after-restart", "--image=busybox", "--replicas=0")
        replica_sets = ("get", "replicasets", "-l", "app=after-restart", "-o", "name")
        wait_until(lambda: kubectl(*replica_sets) != "", 180, "the Deployment's ReplicaSet")
    finally:
        lab.down()


def test_restart_of_a_component_the_lab_does_not_run_is_refused(tmp_path: Path) -> None:
    """No lab at all, or a component it was not started with: one line, exit 1."""
    result = cli("lab", "restart", "--dir", str(tmp_path), "scheduler")
    assert result.returncode != 0
    assert "no lab in" in result.stderr
    assert "Traceback" not in result.stderr
