"""Write kubeconfig files (the reading side lives beside it once the proxy needs it).

Lab kubeconfigs embed their certificates and keys (`*-data`), like kind's, so a kubeconfig is
one self-contained file; it therefore holds a private key and is written 0600.
"""

from __future__ import annotations

import base64
from pathlib import Path

import yaml

from k8s_wiretap.tls import Identity, write_private

__all__ = ["write_kubeconfig"]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def write_kubeconfig(
    path: Path,
    *,
    server: str,
    ca_pem: bytes,
    client: Identity,
    name: str = "lab",
    user: str = "admin",
    namespace: str | None = None,
) -> Path:
    """A one-context kubeconfig for `server`, authenticating with the client certificate."""
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
        "users": [
            {
                "name": user,
                "user": {
                    "client-certificate-data": _b64(client.cert_pem),
                    "client-key-data": _b64(client.key_pem),
                },
            }
        ],
        "contexts": [{"name": name, "context": context}],
        "current-context": name,
        "preferences": {},
    }
    write_private(path, yaml.safe_dump(document, sort_keys=False).encode())
    return path
