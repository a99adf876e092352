"""The lab on the current Kubernetes release (releases.CURRENT), built from its Go modules.

Everything the 1.20 lab does, checked on the new release: certificate identities per
component, Node+RBAC authorization, NodeRestriction, leader election, the audit log,
`--via-proxy`, `restart`, two labs side by side, the release's own kubectl and the
machine's. The binaries come from `make binaries` (`k8s-wiretap lab build --kube-version
MINOR`); when they are missing, the lab fixture fails with that one-line reason.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import defaultdict
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.capture.reader import load
from k8s_wiretap.kube.release import Release
from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.lab.layout import Layout, runtime_dir
from k8s_wiretap.lab.readiness import admin_client
from k8s_wiretap.lab.releases import CURRENT, cache_name
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.lab.versions import resolve_release
from k8s_wiretap.wire.envelope import MAGIC
from k8s_wiretap.workshop import manifest
from tests.conftest import Kubectl, cli, lab_processes, wait_until

pytestmark = pytest.mark.lab  # starts labs of its own


class LabKubectl(Kubectl):
    """The release's own kubectl (DIR/bin/kubectl), as `eval "$(k8s-wiretap lab env)"` gives."""

    def __init__(self, state: LabState, cache: Path) -> None:
        own = str(Path(state.kubeconfig).parent / "bin" / "kubectl")
        super().__init__(state.kubeconfig, cache, binary=own)


@pytest.fixture(scope="module")
def release() -> Release:
    return resolve_release(CURRENT, lookup=False)


@pytest.fixture(scope="module")
def current(tmp_path_factory: pytest.TempPathFactory, release: Release) -> Iterator[LabState]:
    lab = Lab(tmp_path_factory.mktemp("current") / "lab")
    state = lab.up(UpOptions(build=False, kube_version=str(release)))
    yield state
    lab.down()


def directory(state: LabState) -> Path:
    return Path(state.kubeconfig).parent


def running_on_node(client: Kubectl, namespace: str) -> list[str]:
    pods = json.loads(client("get", "pods", "-n", namespace, "-o", "json"))["items"]
    return [p["spec"].get("nodeName", "") for p in pods if p["status"].get("phase") == "Running"]


def two_on_node_1(client: Kubectl, namespace: str) -> bool:
    return running_on_node(client, namespace) == ["node-1", "node-1"]


def audit_events(state: LabState) -> list[dict[str, Any]]:
    log = directory(state) / "logs" / "audit.log"
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_it_runs_the_release_it_says(current: LabState, release: Release) -> None:
    assert current.kube_version == str(release)
    version = admin_client(Layout(directory(current), current.ports)).get("/version").json()
    assert version["gitVersion"] == f"v{release}"
    status = cli("lab", "status", "--dir", str(directory(current)))
    assert status.returncode == 0, status.stdout
    assert f"Kubernetes {release}" in status.stdout
    assert f"/version: v{release}" in status.stdout
    etcd = next(p for p in current.processes if p.name == "etcd")
    assert Path(etcd.argv[0]).parent.parent.name == cache_name(release)  # not PATH's 3.4
    reported = subprocess.run([etcd.argv[0], "--version"], capture_output=True, text=True)
    assert "etcd Version: 3.7." in reported.stdout


def test_a_deployment_runs_with_the_machines_kubectl_and_the_labs(
    current: LabState, tmp_path_factory: pytest.TempPathFactory, release: Release
) -> None:
    machine = Kubectl(current.kubeconfig, tmp_path_factory.mktemp("machine"))
    own = LabKubectl(current, tmp_path_factory.mktemp("own"))
    assert f"v{release}" in own("version", "--client")
    for client, namespace in ((machine, "machine-kubectl"), (own, "lab-kubectl")):
        client("create", "namespace", namespace)
        client("apply", "-n", namespace, "-f", "-", stdin=manifest("web"))
    for client, namespace in ((machine, "machine-kubectl"), (own, "lab-kubectl")):
        wait_until(partial(two_on_node_1, client, namespace), 90, f"2 pods Running in {namespace}")
    again = own("apply", "-n", "lab-kubectl", "-f", "-", stdin=manifest("web"))
    assert "deployment.apps/web unchanged" in again


def test_lab_env_puts_the_releases_kubectl_first_on_path(
    current: LabState, release: Release
) -> None:
    env = cli("lab", "env", "--dir", str(directory(current)))
    assert env.returncode == 0
    lines = env.stdout.splitlines()
    assert lines[0] == f"export KUBECONFIG={current.kubeconfig}"
    shell = subprocess.run(
        ["sh", "-c", f"{env.stdout}\ncommand -v kubectl\nkubectl version -o json"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "KUBECACHEDIR": str(directory(current) / "cache")},
    )
    where, _, versions = shell.stdout.partition("\n")
    assert where == str(directory(current) / "bin" / "kubectl")
    reported = json.loads(versions)
    assert reported["clientVersion"]["gitVersion"] == f"v{release}"
    assert reported["serverVersion"]["gitVersion"] == f"v{release}"


def test_every_component_has_its_own_identity_in_the_audit_log(current: LabState) -> None:
    users: dict[str, set[str]] = defaultdict(set)
    for event in audit_events(current):
        users[event["user"]["username"]].update(event["user"].get("groups", []))
    assert "system:nodes" in users["system:node:node-1"]
    assert "system:masters" in users["kubernetes-admin"]
    assert "system:kube-scheduler" in users
    assert "system:kube-controller-manager" in users
    # --use-service-account-credentials: each controller acts as its own service account
    assert "system:serviceaccount:kube-system:deployment-controller" in users
    assert "system:serviceaccount:kube-system:replicaset-controller" in users


def kubelet_client(state: LabState, tmp_path: Path) -> Kubectl:
    kubeconfig = directory(state) / "kubeconfigs" / "kubelet.kubeconfig"
    return Kubectl(str(kubeconfig), tmp_path / "cache")


def test_the_node_authorizer_and_node_restriction_hold_the_kubelet(
    current: LabState, tmp_path: Path
) -> None:
    kubelet = kubelet_client(current, tmp_path)
    # Node authorization: a node reads only the secrets of pods bound to it
    secret = kubelet.run("get", "secret", "-n", "kube-system", "anything", check=False)
    assert secret.returncode != 0
    assert 'User "system:node:node-1" cannot get resource "secrets"' in secret.stderr
    # NodeRestriction: a node may change only its own Node object
    other = json.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-2"}})
    created = kubelet.run("create", "-f", "-", stdin=other, check=False)
    assert created.returncode != 0
    assert 'node "node-1" is not allowed to modify node "node-2"' in created.stderr
    label = ("label", "node", "node-1", "node-restriction.kubernetes.io/x=y")
    relabel = kubelet.run(*label, check=False)
    assert relabel.returncode != 0
    assert "is not allowed to modify labels: node-restriction.kubernetes.io/x" in relabel.stderr


def test_the_controller_manager_and_the_scheduler_hold_their_leases(current: LabState) -> None:
    client = admin_client(Layout(directory(current), current.ports))
    for name in ("kube-controller-manager", "kube-scheduler"):
        lease = client.get(f"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{name}")
        assert lease.status == 200, name
        assert lease.json()["spec"]["holderIdentity"], name


def test_the_hollow_kubelet_keeps_its_files_in_the_labs_runtime_folder(
    current: LabState,
) -> None:
    runtime = runtime_dir(directory(current))
    assert [p.name.split(".")[0] for p in runtime.glob("hollow-kubelet.*")] == ["hollow-kubelet"]
    assert len(list(runtime.glob("kubelet_remote_*.sock"))) == 1
    kubelet = next(p for p in current.processes if p.name == "kubelet")
    assert f"Using {runtime}/hollow-kubelet." in Path(kubelet.log).read_text()


def test_the_hollow_kubelet_survives_many_pods_coming_and_going(
    current: LabState, tmp_path: Path
) -> None:
    """Its fake OS is used by the pod workers in parallel: starting and removing 60 pods
    exercises the map FakeOS guards itself and the Removes list the build guards."""
    client = Kubectl(current.kubeconfig, tmp_path / "cache")
    client("create", "namespace", "many")
    client("create", "deployment", "many", "-n", "many", "--image=busybox", "--replicas=60")
    ready = ("get", "deployment/many", "-n", "many", "-o", "jsonpath={.status.readyReplicas}")
    wait_until(lambda: client(*ready) == "60", 240, "60 pods ready")
    client("delete", "namespace", "many", "--wait=false")
    gone = ("get", "pods", "-n", "many", "-o", "name")
    wait_until(lambda: client.run(*gone, check=False).stdout == "", 240, "60 pods gone")
    kubelet = next(p for p in current.processes if p.name == "kubelet")
    assert kubelet.alive()
    assert "concurrent map" not in Path(kubelet.log).read_text()


def test_restart_the_apiserver(current: LabState, tmp_path: Path) -> None:
    before = {p.name: p.pid for p in current.processes}
    result = cli("lab", "restart", "--dir", str(directory(current)), "apiserver")
    assert result.returncode == 0, result.stderr
    assert "apiserver ready" in result.stderr
    state = Lab(directory(current)).state()
    assert state is not None and not state.stopped()
    after = {p.name: p.pid for p in state.processes}
    assert after["apiserver"] != before["apiserver"]
    assert {k: v for k, v in after.items() if k != "apiserver"} == {
        k: v for k, v in before.items() if k != "apiserver"
    }
    client = Kubectl(current.kubeconfig, tmp_path / "cache")
    wait_until(
        lambda: "Ready" in client("get", "node", "node-1", "--no-headers"), 60, "node-1 Ready"
    )


def test_two_labs_side_by_side(
    current: LabState, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, release: Release
) -> None:
    second = Lab(tmp_path / "second")
    state = second.up(UpOptions(build=False, kube_version=str(release)))
    try:
        assert set(state.ports.values()).isdisjoint(current.ports.values())
        other = Kubectl(state.kubeconfig, tmp_path_factory.mktemp("cache"))
        other("create", "deployment", "solo", "--image=nginx")
        wait_until(lambda: running_on_node(other, "default") == ["node-1"], 90, "a pod in lab two")
    finally:
        assert sorted(second.down()) == sorted(state.components)
    assert lab_processes(second.dir) == []
    assert not runtime_dir(second.dir).exists()
    first = admin_client(Layout(directory(current), current.ports))
    node = first.get("/api/v1/nodes/node-1").json()
    ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
    assert ready[0]["status"] == "True"


def test_via_proxy_records_every_component_under_its_own_identity(tapped: LabState) -> None:
    assert tapped.recording
    exchanges = load(tapped.recording).exchanges
    audit = {e["auditID"]: e["user"]["username"] for e in audit_events(tapped)}
    users: dict[str, set[str]] = defaultdict(set)
    requests: dict[str, list[str]] = defaultdict(list)
    for exchange in exchanges:
        listener = exchange.request.listener
        requests[listener].append(f"{exchange.info.verb} {exchange.info.resource}")
        user = audit.get(exchange.response_header("audit-id"))
        if user:
            users[listener].add(str(user))
    assert users["kubelet"] == {"system:node:node-1"}
    assert users["scheduler"] == {"system:kube-scheduler"}
    assert users["admin"] == {"kubernetes-admin"}
    assert {
        "system:kube-controller-manager",
        "system:serviceaccount:kube-system:deployment-controller",
        "system:serviceaccount:kube-system:replicaset-controller",
    } <= users["controller-manager"]
    assert "create pods" in requests["controller-manager"]  # the replicaset controller
    assert "create replicasets" in requests["controller-manager"]  # the deployment controller
    assert "create pods" in requests["scheduler"]  # pods/binding
    assert "patch pods" in requests["kubelet"]  # pods/status
    assert "create leases" in requests["kubelet"]  # its node lease


def test_via_proxy_holds_the_kubelets_protobuf_and_no_token(tapped: LabState) -> None:
    assert tapped.recording
    exchanges = load(tapped.recording).exchanges
    kubelet = [e for e in exchanges if e.request.listener == "kubelet"]
    pod_watches = [e for e in kubelet if e.info.verb == "watch" and e.info.resource == "pods"]
    events = [event for e in pod_watches for event in e.watch_events()]
    assert any(MAGIC in event.data.data for event in events)  # protobuf WatchEvents
    # 1.24 and later: controllers get their tokens from TokenRequest, redacted in the record
    requested = [
        e
        for e in exchanges
        if e.info.resource == "serviceaccounts" and e.info.subresource == "token"
    ]
    assert requested and all(e.status == 201 for e in requested)
    raw = Path(tapped.recording).read_text()
    bearer = [v for e in exchanges for k, v in e.request.headers if k.lower() == "authorization"]
    assert bearer and all(v.startswith("Bearer redacted:") for v in bearer)
    assert "eyJhbGciOi" not in raw  # no JWT of any service account
