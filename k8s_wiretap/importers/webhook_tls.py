"""The audit webhook receiver's keys: a serving CA and certificate, and a client CA.

They live in one folder (`default_folder()`: `$XDG_STATE_HOME/k8s-wiretap/audit-webhook`,
0700), are made the first time the receiver needs them and reused after, so that an API
server configured once goes on trusting the receiver, and being trusted, across restarts:

- `ca.crt`, `ca.key`: the CA that signs the receiver's serving certificate (the webhook
  kubeconfig's `certificate-authority-data`);
- `server.crt`, `server.key`: the serving certificate, for 127.0.0.1, ::1, localhost and
  the host the receiver listens on (issued again when a listen host is not among its
  names, when another CA signed it, or when it expires within a day);
- `client-ca.crt`, `client-ca.key`: the CA whose client certificates the receiver accepts
  (the one it issues to the API server, in the kubeconfig it writes). Deleting them
  revokes every certificate issued (new ones are made when next needed).

Every key file is 0600 (`tls.write_private`). Two CAs rather than one: a certificate that
proves the receiver to the API server proves nothing the other way.

The folder is trusted only when it is the user's own: before anything in it is read or
written, a folder that is a symlink, belongs to another user or lets others in (any mode
bit for group or others) is refused in one line (exit 2, `tls.pki.private_folder`), and so
is a key or certificate file there that is a symlink or another user's: keys someone else
could have put there would let their client certificates in. Files are written to a
temporary file and renamed, never through a link (`tls.pki`).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
from collections.abc import Sequence
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature

from k8s_wiretap.paths import state_dir
from k8s_wiretap.tls import Authority, Identity, load_authority, new_authority
from k8s_wiretap.tls.pki import own_file, private_folder

__all__ = ["LOCAL_NAMES", "WebhookKeys", "default_folder"]

LOCAL_NAMES = ("127.0.0.1", "::1", "localhost")
SERVER_NAME = "k8s-wiretap audit webhook"
CLIENT_NAME = "kube-apiserver"  # the common name of the certificate the API server gets
RENEW_BEFORE = dt.timedelta(days=1)


def default_folder() -> Path:
    return state_dir() / "audit-webhook"


class WebhookKeys:
    """The receiver's CAs and certificates in `folder`, made on first use."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or default_folder()

    def _authority(self, stem: str, name: str) -> Authority:
        cert, key = self.folder / f"{stem}.crt", self.folder / f"{stem}.key"
        if not self._present(cert, key):
            new_authority(name).identity.write(cert, key)
        return load_authority(cert, key)

    def _present(self, *files: Path) -> bool:
        """Whether all `files` are in the folder, after checking that the folder and each
        file there are the user's own (`private_folder`, `own_file`: UsageError if not)."""
        private_folder(self.folder)
        return all([own_file(path) for path in files])

    def server_authority(self) -> Authority:
        return self._authority("ca", "k8s-wiretap audit webhook CA")

    def client_authority(self) -> Authority:
        return self._authority("client-ca", "k8s-wiretap audit webhook clients CA")

    def issue_client(self, name: str = CLIENT_NAME) -> Identity:
        """A client certificate the receiver accepts (for the API server's kubeconfig)."""
        return self.client_authority().issue(name)

    def server_files(self, hosts: Sequence[str]) -> tuple[Path, Path]:
        """The serving certificate and key, for LOCAL_NAMES and `hosts`: the one on disk
        when it names them all and is not about to expire, else a new one."""
        cert, key = self.folder / "server.crt", self.folder / "server.key"
        wanted = {_normal(h) for h in (*LOCAL_NAMES, *hosts)}
        authority = self.server_authority()
        if not (self._present(cert, key) and _covers(cert, wanted, authority)):
            names = sorted(wanted)
            authority.issue(SERVER_NAME, hosts=names, client=False).write(cert, key)
        return cert, key

    def server_context(self, hosts: Sequence[str]) -> ssl.SSLContext:
        """A TLS server context: the serving certificate, and client certificates asked for
        and verified against the client CA. Optional, so that a client without one still
        gets an HTTP answer (401) that says why; one of another issuer fails the handshake."""
        cert, key = self.server_files(hosts)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(cert, key)
        self.client_authority()
        context.load_verify_locations(cafile=str(self.folder / "client-ca.crt"))
        context.verify_mode = ssl.CERT_OPTIONAL
        return context


def _normal(host: str) -> str:
    """A host as a certificate names it: an IP address in its short form."""
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return host.lower()


def _covers(path: Path, hosts: set[str], authority: Authority) -> bool:
    """Whether the certificate at `path` is the CA's, names every one of `hosts` and is
    valid for a day more."""
    try:
        cert = x509.load_pem_x509_certificate(path.read_bytes())
        cert.verify_directly_issued_by(authority.cert)
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (ValueError, TypeError, InvalidSignature, x509.ExtensionNotFound):
        return False
    have = {str(ip) for ip in names.get_values_for_type(x509.IPAddress)}
    have |= {name.lower() for name in names.get_values_for_type(x509.DNSName)}
    fresh = cert.not_valid_after_utc - dt.datetime.now(dt.UTC) > RENEW_BEFORE
    return fresh and hosts <= have
