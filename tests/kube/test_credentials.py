"""Credentials from kubeconfigs, exec plugins included (a real plugin process)."""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from k8s_wiretap.kube.credentials import CredentialError, CredentialSource
from k8s_wiretap.kube.kubeconfig import ClusterAccess, ExecConfig
from k8s_wiretap.tls import new_authority

PLUGIN = """\
import json, os, pathlib, sys
folder = pathlib.Path(sys.argv[1])
runs = folder / "runs"
runs.write_text(str(int(runs.read_text()) + 1) if runs.exists() else "1")
(folder / "info").write_text(os.environ["KUBERNETES_EXEC_INFO"])
status = json.loads(sys.argv[2])
if status.get("fail"):
    print("plugin failed", file=sys.stderr)
    sys.exit(status["fail"])
print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1beta1",
                  "kind": "ExecCredential", "status": status}))
"""


def plugin(tmp_path: Path, status: Mapping[str, object]) -> ExecConfig:
    """A real exec credential plugin that counts its runs and keeps what it was given."""
    script = tmp_path / "plugin.py"
    script.write_text(PLUGIN)
    return ExecConfig(
        command=sys.executable,
        args=(str(script), str(tmp_path), json.dumps(status)),
        provide_cluster_info=True,
    )


def access(exec_config: ExecConfig | None = None, **kwargs: object) -> ClusterAccess:
    return ClusterAccess(context="c", server="https://127.0.0.1:6443", exec=exec_config, **kwargs)  # type: ignore[arg-type]


def runs(tmp_path: Path) -> int:
    return int((tmp_path / "runs").read_text())


def test_exec_token_is_cached_until_invalidated(tmp_path: Path) -> None:
    later = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)).isoformat().replace("+00:00", "Z")
    source = CredentialSource(
        access(plugin(tmp_path, {"token": "tok", "expirationTimestamp": later}))
    )
    assert source.current().token == "tok"
    assert source.current().token == "tok"
    assert runs(tmp_path) == 1
    info = json.loads((tmp_path / "info").read_text())
    assert info["spec"]["cluster"]["server"] == "https://127.0.0.1:6443"
    source.invalidate()  # what a 401 does
    assert source.cached() is None
    source.current()
    assert runs(tmp_path) == 2


def test_expired_exec_credentials_run_the_plugin_again(tmp_path: Path) -> None:
    past = "2020-01-01T00:00:00Z"
    source = CredentialSource(access(plugin(tmp_path, {"token": "t", "expirationTimestamp": past})))
    source.current()
    source.current()
    assert runs(tmp_path) == 2


def test_exec_client_certificate(tmp_path: Path) -> None:
    identity = new_authority("ca").issue("eks-user", ("devs",))
    status = {
        "clientCertificateData": identity.cert_pem.decode(),
        "clientKeyData": identity.key_pem.decode(),
    }
    source = CredentialSource(access(plugin(tmp_path, status)))
    credential = source.current()
    assert credential.cert_pem == identity.cert_pem
    assert source.describe(credential).startswith("eks-user (devs) [exec plugin python")


def test_failing_plugin_says_why(tmp_path: Path) -> None:
    source = CredentialSource(access(plugin(tmp_path, {"fail": 3})))
    with pytest.raises(CredentialError, match="exited 3: plugin failed"):
        source.current()


def test_token_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("from-file\n")
    source = CredentialSource(access(token_file=tmp_path / "token"))
    assert source.current().token == "from-file"
    with pytest.raises(CredentialError, match="cannot read tokenFile"):
        CredentialSource(access(token_file=tmp_path / "missing")).current()
