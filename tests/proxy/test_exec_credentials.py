"""An exec credential plugin behind the proxy, for real: its token is cached, and fetched
again after a 401 — as client-go does for EKS- and GKE-style kubeconfigs."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from k8s_wiretap.lab.state import LabState
from tests.conftest import Kubectl
from tests.proxy.conftest import spawn_proxy

PLUGIN = """\
import json, pathlib, sys
folder = pathlib.Path(sys.argv[1])
runs = folder / "runs"
count = int(runs.read_text()) + 1 if runs.exists() else 1
runs.write_text(str(count))
token = "not-a-valid-token" if count == 1 else (folder / "token").read_text().strip()
print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1beta1",
                  "kind": "ExecCredential", "status": {"token": token}}))
"""


def exec_kubeconfig(lab: LabState, folder: Path) -> Path:
    """The lab's cluster, with a user whose credential comes from an exec plugin."""
    config = yaml.safe_load(Path(lab.kubeconfig).read_text())
    (folder / "plugin.py").write_text(PLUGIN)
    config["users"][0]["user"] = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": sys.executable,
            "args": [str(folder / "plugin.py"), str(folder)],
            "interactiveMode": "Never",
        }
    }
    path = folder / "exec.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


def test_a_plugin_token_is_cached_then_renewed_after_401(
    lab: LabState, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl("create", "serviceaccount", "exec-user-2")
    kubectl(
        "create",
        "clusterrolebinding",
        "exec-user-2",
        "--clusterrole=cluster-admin",
        "--serviceaccount=default:exec-user-2",
    )
    (tmp_path / "token").write_text(kubectl("create", "token", "exec-user-2"))
    proxy = spawn_proxy(str(exec_kubeconfig(lab, tmp_path)), tmp_path)
    try:
        client = Kubectl(lab.kubeconfig, tmp_path / "cache", server=proxy.url)
        for _ in range(3):
            client.run("get", "--raw", "/api/v1/namespaces", check=False)
    finally:
        proxy.stop()
    # once at start-up (the bad token), once more after the API server's 401, never again
    assert (tmp_path / "runs").read_text() == "2"
    statuses = [e.status for e in proxy.recording().exchanges]
    assert statuses[0] == 401 and set(statuses[1:]) == {200}, statuses
    identities = {e.request.identity.user for e in proxy.recording().exchanges}
    assert identities == {f"admin [exec plugin {Path(sys.executable).name}]"}
