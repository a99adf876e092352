"""Read and write kubeconfig files.

Reading resolves one context into a `ClusterAccess`: server, CA, `tls-server-name`,
`insecure-skip-tls-verify`, namespace and the user's credentials (client certificate and key
as files or `-data`, `token`, `tokenFile`, or an `exec` plugin), the kinds of kubeconfig that
kind, minikube, EKS and GKE hand out. Relative file paths are relative to the kubeconfig.

Lab kubeconfigs embed their certificates and keys (`*-data`), like kind's, so a kubeconfig is
one self-contained file; it therefore holds a private key and is written 0600.
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from k8s_wiretap.errors import UsageError
from k8s_wiretap.tls import Identity, write_private
from k8s_wiretap.wire import yamltext

__all__ = [
    "ClusterAccess",
    "ExecConfig",
    "default_kubeconfig_path",
    "load_kubeconfig",
    "write_kubeconfig",
]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def write_kubeconfig(
    path: Path,
    *,
    server: str,
    ca_pem: bytes,
    client: Identity | None = None,
    name: str = "lab",
    user: str = "admin",
    namespace: str | None = None,
) -> Path:
    """A one-context kubeconfig for `server`, with a client certificate unless `client` is None
    (then the server behind `server`, a proxy, adds credentials itself)."""
    credentials = (
        {}
        if client is None
        else {
            "client-certificate-data": _b64(client.cert_pem),
            "client-key-data": _b64(client.key_pem),
        }
    )
    context: dict[str, str] = {"cluster": name, "user": user}
    if namespace:
        context["namespace"] = namespace
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": name,
                "cluster": {"server": server, "certificate-authority-data": _b64(ca_pem)},
            }
        ],
        "users": [{"name": user, "user": credentials}],
        "contexts": [{"name": name, "context": context}],
        "current-context": name,
        "preferences": {},
    }
    write_private(path, yamltext.dump(document).encode())
    return path


# -- reading ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExecConfig:
    """A client.authentication.k8s.io exec credential plugin, as the kubeconfig names it."""

    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    api_version: str = "client.authentication.k8s.io/v1beta1"
    provide_cluster_info: bool = False


@dataclass(frozen=True)
class ClusterAccess:
    """How to reach and authenticate to one context's API server."""

    context: str
    server: str
    ca_pem: bytes | None = None
    insecure: bool = False
    tls_server_name: str | None = None
    namespace: str | None = None
    user: str = ""
    client_cert_pem: bytes | None = None
    client_key_pem: bytes | None = None
    token: str | None = None
    token_file: Path | None = None
    exec: ExecConfig | None = None
    source: Path | None = None

    @property
    def has_credentials(self) -> bool:
        return bool(self.client_cert_pem or self.token or self.token_file or self.exec)


def default_kubeconfig_path() -> Path:
    value = os.environ.get("KUBECONFIG", "")
    first = next((p for p in value.split(os.pathsep) if p), "")
    return Path(first) if first else Path.home() / ".kube" / "config"


def _named(items: Any, name: str, what: str, path: Path) -> dict[str, Any]:
    for item in items or []:
        if isinstance(item, dict) and item.get("name") == name:
            value = item.get(what)
            return value if isinstance(value, dict) else {}
    raise UsageError(f"{path}: no {what} named {name!r}")


def _material(section: dict[str, Any], key: str, base: Path) -> bytes | None:
    """`<key>-data` (base64) or the file `<key>` (relative to the kubeconfig's folder)."""
    data = section.get(f"{key}-data")
    if data:
        try:
            return base64.b64decode(data)
        except ValueError as error:
            raise UsageError(f"{key}-data is not base64: {error}") from error
    path = section.get(key)
    if not path:
        return None
    file = Path(os.path.expanduser(path))
    file = file if file.is_absolute() else base / file
    try:
        return file.read_bytes()
    except OSError as error:
        raise UsageError(f"cannot read {key} {file}: {error.strerror}") from error


def _exec_config(section: dict[str, Any]) -> ExecConfig | None:
    plugin = section.get("exec")
    if not isinstance(plugin, dict):
        return None
    if not plugin.get("command"):
        raise UsageError("exec credential plugin without a command")
    env = tuple((str(e["name"]), str(e["value"])) for e in plugin.get("env") or [])
    return ExecConfig(
        command=str(plugin["command"]),
        args=tuple(str(a) for a in plugin.get("args") or []),
        env=env,
        api_version=str(plugin.get("apiVersion") or ExecConfig.api_version),
        provide_cluster_info=bool(plugin.get("provideClusterInfo")),
    )


def load_kubeconfig(path: Path | None = None, context: str | None = None) -> ClusterAccess:
    """The cluster and credentials of `context` (default: current-context) in `path`."""
    path = path or default_kubeconfig_path()
    try:
        document = yamltext.load(path.read_text())
    except FileNotFoundError as error:
        raise UsageError(f"kubeconfig {path} not found (set --kubeconfig or KUBECONFIG)") from error
    except (OSError, yamltext.YAMLError) as error:
        raise UsageError(f"cannot read kubeconfig {path}: {error}") from error
    if not isinstance(document, dict):
        raise UsageError(f"{path} is not a kubeconfig")
    name = context or document.get("current-context")
    if not name:
        raise UsageError(f"{path} has no current-context; pass --context")
    selected = _named(document.get("contexts"), name, "context", path)
    cluster = _named(document.get("clusters"), str(selected.get("cluster")), "cluster", path)
    user_name = str(selected.get("user") or "")
    user = _named(document.get("users"), user_name, "user", path) if user_name else {}
    server = cluster.get("server")
    if not server:
        raise UsageError(f"{path}: cluster of context {name!r} has no server")
    base = path.parent
    token_file = user.get("tokenFile")
    return ClusterAccess(
        context=name,
        server=str(server).rstrip("/"),
        ca_pem=_material(cluster, "certificate-authority", base),
        insecure=bool(cluster.get("insecure-skip-tls-verify")),
        tls_server_name=cluster.get("tls-server-name"),
        namespace=selected.get("namespace"),
        user=user_name,
        client_cert_pem=_material(user, "client-certificate", base),
        client_key_pem=_material(user, "client-key", base),
        token=user.get("token"),
        token_file=(base / os.path.expanduser(token_file)) if token_file else None,
        exec=_exec_config(user),
        source=path,
    )
