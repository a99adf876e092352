"""The credentials a proxy adds upstream for clients that bring none, from a kubeconfig.

Like `kubectl proxy` and client-go: a client certificate and key, a bearer `token`, a
`tokenFile` (re-read every minute, as client-go does, so rotated tokens are picked up), or an
`exec` credential plugin (client.authentication.k8s.io ExecCredential) whose token or
certificate is cached until its `expirationTimestamp` and fetched again after a 401.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.x509.oid import NameOID

from k8s_wiretap.errors import WiretapError
from k8s_wiretap.kube.kubeconfig import ClusterAccess, ExecConfig

__all__ = ["Credential", "CredentialError", "CredentialSource", "certificate_user"]

TOKEN_FILE_TTL = 60.0
EXEC_TIMEOUT = 60.0


class CredentialError(WiretapError):
    """A credential could not be obtained (unreadable token file, failing exec plugin)."""


@dataclass(frozen=True)
class Credential:
    token: str | None = None
    cert_pem: bytes | None = None
    key_pem: bytes | None = None
    expires: float | None = None  # Unix time; None = does not expire

    def fresh(self, now: float) -> bool:
        return self.expires is None or now < self.expires - 10


@functools.lru_cache(maxsize=64)
def certificate_user(cert_pem: bytes) -> str:
    """`CN (O, O...)` of a PEM certificate: the user and groups Kubernetes reads from it."""
    cert = x509.load_pem_x509_certificate(cert_pem)
    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    groups = [str(a.value) for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    user = str(names[0].value) if names else "(no CN)"
    return f"{user} ({', '.join(groups)})" if groups else user


class CredentialSource:
    """The current credential of one kubeconfig user; thread-safe."""

    def __init__(self, access: ClusterAccess) -> None:
        self.access = access
        self._lock = threading.Lock()
        self._cached: Credential | None = None
        self._read_at = 0.0

    @property
    def kind(self) -> str:
        if self.access.exec:
            return f"exec plugin {os.path.basename(self.access.exec.command)}"
        if self.access.client_cert_pem:
            return "client certificate"
        if self.access.token or self.access.token_file:
            return "bearer token"
        return "none"

    def current(self) -> Credential:
        """The credential to use now (may run an exec plugin: call off the event loop)."""
        with self._lock:
            now = time.time()
            if self._cached is None or not self._cached.fresh(now) or self._stale(now):
                self._cached = self._obtain()
                self._read_at = now
            return self._cached

    def cached(self) -> Credential | None:
        """The credential if it is still good, without doing any work; else None."""
        cached = self._cached
        now = time.time()
        return cached if cached and cached.fresh(now) and not self._stale(now) else None

    def invalidate(self) -> None:
        """Forget the credential (after a 401), so the next use obtains it again."""
        with self._lock:
            self._cached = None

    def describe(self, credential: Credential) -> str:
        if credential.cert_pem:
            return f"{certificate_user(credential.cert_pem)} [{self.kind}]"
        if credential.token:
            return f"{self.access.user or 'kubeconfig user'} [{self.kind}]"
        return "anonymous"

    def _stale(self, now: float) -> bool:
        return self.access.token_file is not None and now - self._read_at > TOKEN_FILE_TTL

    def _obtain(self) -> Credential:
        access = self.access
        if access.exec:
            return run_exec_plugin(access.exec, access)
        token = access.token
        if access.token_file:
            try:
                token = access.token_file.read_text().strip()
            except OSError as error:
                raise CredentialError(
                    f"cannot read tokenFile {access.token_file}: {error.strerror}"
                ) from error
        return Credential(
            token=token, cert_pem=access.client_cert_pem, key_pem=access.client_key_pem
        )


def _exec_info(plugin: ExecConfig, access: ClusterAccess) -> str:
    spec: dict[str, Any] = {"interactive": False}
    if plugin.provide_cluster_info:
        cluster: dict[str, Any] = {
            "server": access.server,
            "insecure-skip-tls-verify": access.insecure,
        }
        if access.ca_pem:
            import base64

            cluster["certificate-authority-data"] = base64.b64encode(access.ca_pem).decode()
        if access.tls_server_name:
            cluster["tls-server-name"] = access.tls_server_name
        spec["cluster"] = cluster
    return json.dumps({"apiVersion": plugin.api_version, "kind": "ExecCredential", "spec": spec})


def run_exec_plugin(plugin: ExecConfig, access: ClusterAccess) -> Credential:
    """Run the plugin and read its ExecCredential from stdout."""
    env = {**os.environ, **dict(plugin.env), "KUBERNETES_EXEC_INFO": _exec_info(plugin, access)}
    try:
        result = subprocess.run(
            [plugin.command, *plugin.args],
            env=env,
            capture_output=True,
            text=True,
            timeout=EXEC_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise CredentialError(f"exec plugin {plugin.command} failed: {error}") from error
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise CredentialError(f"exec plugin {plugin.command} exited {result.returncode}: {last}")
    try:
        status = json.loads(result.stdout)["status"]
    except (ValueError, KeyError, TypeError) as error:
        raise CredentialError(f"exec plugin {plugin.command} printed no ExecCredential") from error
    expires = status.get("expirationTimestamp")
    credential = Credential(
        token=status.get("token"),
        cert_pem=status.get("clientCertificateData", "").encode() or None,
        key_pem=status.get("clientKeyData", "").encode() or None,
        expires=dt.datetime.fromisoformat(expires.replace("Z", "+00:00")).timestamp()
        if expires
        else None,
    )
    if not credential.token and not credential.cert_pem:
        raise CredentialError(f"exec plugin {plugin.command} returned no token or certificate")
    return credential
