"""The lab against reality: a real control plane, the real kubectl, real failures."""

from __future__ import annotations

import io
import json
import os
import socket
import stat
from pathlib import Path
from typing import Any

import pytest

import k8s_wiretap.lab.lab as lab_module
from k8s_wiretap.lab import Lab, LabRunningError, UpOptions
from k8s_wiretap.lab.layout import Layout, free_ports, runtime_dir
from k8s_wiretap.lab.readiness import admin_client
from k8s_wiretap.lab.releases import CURRENT
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.workshop import manifest
from tests.conftest import Kubectl, cli, lab_processes, wait_until


def running_pods(kubectl: Kubectl, namespace: str) -> list[dict[str, Any]]:
    pods = json.loads(kubectl("get", "pods", "-n", namespace, "-o", "json"))["items"]
    return [p for p in pods if p["status"].get("phase") == "Running"]


def test_apply_then_scale_runs_pods_on_the_hollow_node(kubectl: Kubectl) -> None:
    kubectl("create", "namespace", "apply-scale")
    kubectl("apply", "-n", "apply-scale", "-f", "-", stdin=manifest("web"))
    wait_until(lambda: len(running_pods(kubectl, "apply-scale")) == 2, 60, "2 pods Running")
    assert {p["spec"]["nodeName"] for p in running_pods(kubectl, "apply-scale")} == {"node-1"}

    kubectl("scale", "-n", "apply-scale", "deployment/web", "--replicas=3")
    wait_until(lambda: len(running_pods(kubectl, "apply-scale")) == 3, 60, "3 pods Running")
    kubectl("delete", "namespace", "apply-scale", "--wait=false")


def audit_users(directory: Path) -> dict[str, set[str]]:
    users: dict[str, set[str]] = {}
    for line in (directory / "logs" / "audit.log").read_text().splitlines():
        event = json.loads(line)
        users.setdefault(event["user"]["username"], set()).update(event["user"].get("groups", []))
    return users


def test_every_component_has_its_own_identity(lab: LabState) -> None:
    directory = Path(lab.kubeconfig).parent
    users = audit_users(directory)
    assert "system:nodes" in users["system:node:node-1"]
    assert "system:masters" in users["kubernetes-admin"]
    assert "system:kube-scheduler" in users
    assert "system:kube-controller-manager" in users
    # --use-service-account-credentials: each controller acts as its own service account
    assert "system:serviceaccount:kube-system:deployment-controller" in users


def test_keys_and_kubeconfigs_are_private(lab: LabState) -> None:
    directory = Path(lab.kubeconfig).parent
    secrets = [*directory.glob("pki/*.key"), *directory.glob("kubeconfigs/*"), Path(lab.kubeconfig)]
    assert len(secrets) >= 10
    for path in secrets:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_components_listen_on_loopback_only(lab: LabState) -> None:
    listening = Path("/proc/net/tcp").read_text().splitlines()[1:]
    ports = {lab.ports[name] for name in ("etcd", "apiserver", "controller_manager", "scheduler")}
    for line in listening:
        local, state = line.split()[1], line.split()[3]
        address, port = local.split(":")
        if state == "0A" and int(port, 16) in ports:
            assert address == "0100007F", f"port {int(port, 16)} listens on {address}"


def test_up_twice_says_it_is_already_running(lab: LabState) -> None:
    directory = Path(lab.kubeconfig).parent
    with pytest.raises(LabRunningError, match="already running"):
        Lab(directory).up(UpOptions(build=False))
    result = cli("lab", "up", "--dir", str(directory), "--no-build")
    assert result.returncode == 1
    assert "already running" in result.stderr
    assert admin_client(Layout(directory, lab.ports)).get("/readyz").status == 200


def test_status_and_env_describe_the_running_lab(lab: LabState) -> None:
    directory = Path(lab.kubeconfig).parent
    status = cli("lab", "status", "--dir", str(directory))
    assert status.returncode == 0
    for name in ("etcd", "apiserver", "controller-manager", "scheduler", "kubelet"):
        assert f"{name} " in status.stdout
    assert "/readyz: ok" in status.stdout
    env = cli("lab", "env", "--dir", str(directory))
    lines = [f"export KUBECONFIG={lab.kubeconfig}"]
    if (directory / "bin" / "kubectl").exists():  # a release built from its modules (the default)
        lines.append(f'export PATH={directory / "bin"}:"$PATH"')
    assert env.stdout.splitlines()[: len(lines)] == lines


def test_down_when_nothing_runs(tmp_path: Path) -> None:
    result = cli("lab", "down", "--dir", str(tmp_path))
    assert result.returncode == 0
    assert "no lab running" in result.stderr


def test_missing_binary_is_a_clear_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("KUBEBUILDER_ASSETS", "K8S_WIRETAP_BIN_DIR")
    }
    env.update(PATH=str(empty), XDG_CACHE_HOME=str(empty))
    # the default release, built from its modules, is looked for as one cached build
    result = cli("lab", "up", "--dir", str(tmp_path / "lab"), "--no-build", env=env)
    assert result.returncode == 1
    assert result.stderr == (
        f"k8s-wiretap: no build of Kubernetes {CURRENT} here; "
        f"`k8s-wiretap lab build --kube-version {CURRENT}` makes one\n"
    )
    # 1.20's binaries may come from anywhere: each missing one is named
    old = ("lab", "up", "--dir", str(tmp_path / "lab"), "--no-build", "--kube-version", "1.20")
    result = cli(*old, env=env)
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1
    assert "missing etcd, kube-apiserver" in result.stderr
    assert "k8s-wiretap lab build" in result.stderr
    assert lab_processes(tmp_path) == []


@pytest.mark.lab  # starts a lab
def test_failing_component_shows_its_log_and_stops_the_rest(tmp_path: Path) -> None:
    directory = tmp_path / "lab"
    result = cli(
        "lab",
        "up",
        "--dir",
        str(directory),
        "--no-build",
        "--components",
        "scheduler",
        "--extra-arg",
        "scheduler=--no-such-flag",
    )
    assert result.returncode == 1
    assert "scheduler failed to start: exited during start-up" in result.stderr
    assert "unknown flag: --no-such-flag" in result.stderr  # from the scheduler's own log
    assert "stopped apiserver" in result.stderr and "stopped etcd" in result.stderr
    assert lab_processes(directory) == []


def test_bad_component_name_is_a_usage_error(tmp_path: Path) -> None:
    result = cli("lab", "up", "--dir", str(tmp_path), "--components", "apiserver,kubeproxy")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "k8s-wiretap: --components: unknown component kubeproxy "
        "(known: etcd, apiserver, controller-manager, scheduler, kubelet)"
    ]


def test_two_labs_side_by_side(
    lab: LabState, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    second = Lab(tmp_path / "second")
    state = second.up(UpOptions(build=False))
    try:
        assert set(state.ports.values()).isdisjoint(lab.ports.values())
        other = Kubectl(state.kubeconfig, tmp_path_factory.mktemp("cache"))
        other("create", "deployment", "solo", "--image=nginx")
        wait_until(lambda: len(running_pods(other, "default")) == 1, 60, "a pod in lab two")
        assert lab_processes(second.dir)
    finally:
        assert sorted(second.down()) == sorted(state.components)
    assert lab_processes(second.dir) == []
    assert not runtime_dir(second.dir).exists()
    first = Layout(Path(lab.kubeconfig).parent, lab.ports)
    node = admin_client(first).get("/api/v1/nodes/node-1").json()
    ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
    assert ready[0]["status"] == "True"


@pytest.mark.lab  # starts a lab
def test_the_hollow_kubelet_survives_many_pods_starting_at_once(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Unpatched, kubemark's fake OS died of a concurrent map write when the pod workers
    started containers in parallel (see build.py); 90 pods at once brought it down."""
    lab = Lab(tmp_path / "lab")
    state = lab.up(UpOptions(build=False))
    try:
        client = Kubectl(state.kubeconfig, tmp_path_factory.mktemp("cache"))
        client("create", "deployment", "many", "--image=busybox", "--replicas=0")
        client("scale", "deployment/many", "--replicas=90")
        ready = ("get", "deployment/many", "-o", "jsonpath={.status.readyReplicas}")
        wait_until(lambda: client(*ready) == "90", 180, "90 pods ready")
        kubelet = next(p for p in state.processes if p.name == "kubelet")
        assert kubelet.alive()
        assert "concurrent map" not in Path(kubelet.log).read_text()
    finally:
        lab.down()


def test_restart_one_component(lab: LabState) -> None:
    directory = Path(lab.kubeconfig).parent
    before = {p.name: p.pid for p in Lab(directory).state().processes}  # type: ignore[union-attr]
    result = cli("lab", "restart", "--dir", str(directory), "scheduler")
    assert result.returncode == 0, result.stderr
    assert "scheduler ready" in result.stderr
    state = Lab(directory).state()
    assert state is not None and not state.stopped()
    after = {p.name: p.pid for p in state.processes}
    assert after["scheduler"] != before["scheduler"]
    assert {k: v for k, v in after.items() if k != "scheduler"} == {
        k: v for k, v in before.items() if k != "scheduler"
    }


@pytest.mark.lab  # starts a lab
def test_a_port_taken_between_its_pick_and_its_bind_starts_the_lab_on_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ports are picked free and bound by the components a moment later: another
    program may take one meanwhile (here a socket of the test's, on the controller
    manager's port of the first pick). The lab says so and starts again on other ports."""
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    picks: list[dict[str, int]] = []

    def pick() -> dict[str, int]:
        ports = free_ports()
        if not picks:
            ports["controller_manager"] = port
        picks.append(ports)
        return ports

    monkeypatch.setattr(lab_module, "free_ports", pick)
    lab = Lab(tmp_path / "lab")
    said = io.StringIO()
    try:
        state = lab.up(UpOptions(components=("controller-manager",), build=False), out=said)
        assert len(picks) == 2 and port not in state.ports.values()
        assert "a port was taken meanwhile: starting on other ports" in said.getvalue()
        assert state.running() and not state.stopped()
    finally:
        lab.down()
        taken.close()
