"""Reading kubeconfigs as kind, minikube, EKS and GKE write them; clear errors otherwise."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import yaml

from k8s_wiretap.errors import UsageError
from k8s_wiretap.kube.kubeconfig import load_kubeconfig


def kubeconfig(
    path: Path, cluster: dict[str, object], user: dict[str, object], namespace: str | None = None
) -> Path:
    context: dict[str, object] = {"cluster": "c", "user": "u"}
    if namespace:
        context["namespace"] = namespace
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "ctx",
                "clusters": [{"name": "c", "cluster": cluster}],
                "users": [{"name": "u", "user": user}],
                "contexts": [
                    {"name": "ctx", "context": context},
                    {"name": "other", "context": {"cluster": "c"}},
                ],
            }
        )
    )
    return path


def test_embedded_data_kind_style(tmp_path: Path) -> None:
    access = load_kubeconfig(
        kubeconfig(
            tmp_path / "config",
            {
                "server": "https://127.0.0.1:6443/",
                "certificate-authority-data": base64.b64encode(b"CA").decode(),
                "tls-server-name": "kubernetes",
            },
            {
                "client-certificate-data": base64.b64encode(b"CERT").decode(),
                "client-key-data": base64.b64encode(b"KEY").decode(),
            },
            namespace="team",
        )
    )
    assert (access.server, access.ca_pem, access.tls_server_name, access.namespace) == (
        "https://127.0.0.1:6443",
        b"CA",
        "kubernetes",
        "team",
    )
    assert (access.client_cert_pem, access.client_key_pem) == (b"CERT", b"KEY")


def test_files_relative_to_the_kubeconfig_minikube_style(tmp_path: Path) -> None:
    (tmp_path / "ca.crt").write_bytes(b"CA")
    (tmp_path / "token").write_text("t0ken\n")
    access = load_kubeconfig(
        kubeconfig(
            tmp_path / "config",
            {"server": "https://m:8443", "certificate-authority": "ca.crt"},
            {"tokenFile": "token"},
        )
    )
    assert access.ca_pem == b"CA"
    assert access.token_file == tmp_path / "token"


def test_exec_plugin_eks_style(tmp_path: Path) -> None:
    access = load_kubeconfig(
        kubeconfig(
            tmp_path / "config",
            {"server": "https://eks", "insecure-skip-tls-verify": True},
            {
                "exec": {
                    "apiVersion": "client.authentication.k8s.io/v1beta1",
                    "command": "aws",
                    "args": ["eks", "get-token"],
                    "env": [{"name": "AWS_PROFILE", "value": "p"}],
                }
            },
        )
    )
    assert access.insecure and access.exec is not None
    assert (access.exec.command, access.exec.args, access.exec.env) == (
        "aws",
        ("eks", "get-token"),
        (("AWS_PROFILE", "p"),),
    )


def test_errors_name_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not found"):
        load_kubeconfig(tmp_path / "missing")
    path = kubeconfig(tmp_path / "config", {"server": "https://x"}, {})
    with pytest.raises(UsageError, match="no context named 'nope'"):
        load_kubeconfig(path, "nope")
    (tmp_path / "bad").write_text("{{{")
    with pytest.raises(UsageError, match="cannot read kubeconfig"):
        load_kubeconfig(tmp_path / "bad")
    path = kubeconfig(
        tmp_path / "c2", {"server": "https://x", "certificate-authority": "/nonexistent/ca.crt"}, {}
    )
    with pytest.raises(UsageError, match="cannot read certificate-authority"):
        load_kubeconfig(path)
