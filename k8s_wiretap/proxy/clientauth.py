"""Who may use a listener that other machines can reach: clients with a certificate from the
proxy's client CA.

A listener on a non-loopback address (`--allow-remote`) adds the kubeconfig's credentials
only for clients that authenticate with mutual TLS: the proxy asks every non-loopback client
for a certificate during the TLS handshake, and a request counts as authenticated only when
that certificate was issued by the client CA in the proxy's confdir (`client-ca.crt`, its key
`client-ca.key` 0600). Clients from loopback addresses are treated as on a loopback listener
(no certificate, the Host check against DNS rebinding).

Why mutual TLS and not a bearer token of the proxy's own: the `Authorization` header belongs
to the API server (a client may bring its own token, which passes through), and kubectl can
present a client certificate with no extra flags, from the kubeconfig that
`k8s-wiretap kubeconfig --proxy HOST:PORT` writes.

Why a CA apart from mitmproxy's (`mitmproxy-ca.pem`, which signs the listener's serving
certificates): mitmproxy's CA is limited to server authentication (its extended key usage),
so no verifier accepts client certificates under it. Issued certificates are valid for a year;
deleting `client-ca.*` revokes them all (a new CA is made when next needed).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import ssl
import tempfile
from pathlib import Path

from cryptography import x509
from cryptography.x509.verification import (
    ClientVerifier,
    Criticality,
    ExtensionPolicy,
    PolicyBuilder,
    Store,
    VerificationError,
)
from mitmproxy import connection
from OpenSSL import SSL, crypto

from k8s_wiretap.tls import Authority, Identity, load_authority, new_authority
from k8s_wiretap.tls.pki import own_file, private_folder

__all__ = [
    "ClientCheck",
    "client_authority",
    "client_ca_paths",
    "client_context",
    "issue_client",
    "loopback_peer",
]

CLIENT_NAME = "k8s-wiretap-client"


def client_ca_paths(confdir: Path) -> tuple[Path, Path]:
    """The client CA's certificate and key files in `confdir`."""
    return confdir / "client-ca.crt", confdir / "client-ca.key"


def client_authority(confdir: Path) -> Authority:
    """The proxy's client CA, made (key 0600, folder 0700) on first use. A confdir that is
    not the user's own and closed to others, or a CA file there that is a symlink or
    another user's, is refused (UsageError): a CA someone else put there would let their
    clients in (`tls.pki.private_folder`)."""
    cert, key = client_ca_paths(confdir)
    private_folder(confdir)
    if not (own_file(cert) and own_file(key)):
        new_authority("k8s-wiretap clients").identity.write(cert, key)
    return load_authority(cert, key)


def issue_client(confdir: Path, name: str = CLIENT_NAME) -> Identity:
    """A client certificate that a listener reachable from other machines accepts."""
    return client_authority(confdir).issue(name)


def client_context(confdir: Path, name: str = "k8s-wiretap") -> ssl.SSLContext:
    """A TLS context for a client of this proxy: it trusts the listener's CA (mitmproxy's, in
    `confdir`) and presents a fresh certificate of the client CA (its key never on disk but
    for a moment, in a private temporary folder, as `ssl` loads keys only from files)."""
    context = ssl.create_default_context(cafile=str(confdir / "mitmproxy-ca-cert.pem"))
    identity = issue_client(confdir, name)
    with tempfile.TemporaryDirectory(prefix="k8s-wiretap-client-") as scratch:
        cert, key = Path(scratch) / "client.crt", Path(scratch) / "client.key"
        identity.write(cert, key)
        context.load_cert_chain(cert, key)
    return context


def loopback_peer(client: connection.Client) -> bool:
    """Whether the client connects from this machine's loopback (IPv4-mapped included)."""
    try:
        address = ipaddress.ip_address(str(client.peername[0]).split("%")[0])
    except (ValueError, IndexError, TypeError):
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


class _Handshake:
    """What OpenSSL found of one client's certificate chain in its handshake."""

    def __init__(self) -> None:
        self.errors = 0  # verification errors at any depth (each taken, see `accept`)
        self.leaf_seen = False

    def accept(self, conn: SSL.Connection, cert: object, errno: int, depth: int, ok: int) -> bool:
        """Take any certificate in the handshake, so that a client without a good one gets
        a Kubernetes Status rather than a TLS alert; count what OpenSSL refused, so that the
        request is refused instead."""
        self.errors += not ok
        self.leaf_seen = self.leaf_seen or depth == 0
        return True


class ClientCheck:
    """Asks clients for certificates and tells which carry one from the client CA.

    The certificate judged is the one OpenSSL authenticated (the peer proved its key in the
    handshake), verified twice: by OpenSSL against a store that trusts the client CA (for
    client authentication, as a TLS server verifies), and by `cryptography`'s client
    verifier. Not mitmproxy's `certificate_list`: it leaves out certificates that
    `cryptography` cannot parse, so a client presenting [its own unparseable certificate,
    someone else's good one] would be judged by the good one, whose key it never held.
    Anything that goes wrong in the check refuses the client."""

    def __init__(self, ca: x509.Certificate) -> None:
        self.ca = ca
        self._verdicts: dict[str, str | None] = {}  # client connection id → common name
        self._handshakes: dict[str, tuple[SSL.Connection, _Handshake]] = {}

    @classmethod
    def load(cls, confdir: Path) -> ClientCheck:
        return cls(client_authority(confdir).cert)

    def ask(self, client: connection.Client, ssl_conn: SSL.Connection) -> None:
        """Request a certificate (TLS CertificateRequest) on this client connection only,
        verified by OpenSSL against the client CA."""
        store = ssl_conn.get_context().get_cert_store()
        if store is not None:
            with contextlib.suppress(SSL.Error, crypto.X509StoreContextError):
                store.add_cert(crypto.X509.from_cryptography(self.ca))  # once per context
        handshake = _Handshake()
        ssl_conn.set_verify(SSL.VERIFY_PEER, handshake.accept)
        self._handshakes[client.id] = (ssl_conn, handshake)

    def verified(self, client: connection.Client) -> str | None:
        """The common name of the client's certificate if the client CA issued it, else None
        (no TLS, no certificate, another issuer, expired, not for client authentication)."""
        if client.id not in self._verdicts:
            try:
                self._verdicts[client.id] = self._verify(client)
            except Exception:  # fail closed: a check that breaks authenticates no one
                self._verdicts[client.id] = None
        return self._verdicts[client.id]

    def forget(self, client: connection.Client) -> None:
        self._verdicts.pop(client.id, None)
        self._handshakes.pop(client.id, None)

    def _verify(self, client: connection.Client) -> str | None:
        asked = self._handshakes.get(client.id)
        if not client.tls_established or asked is None:
            return None
        ssl_conn, handshake = asked
        leaf = ssl_conn.get_peer_certificate(as_cryptography=True)
        if leaf is None or handshake.errors or not handshake.leaf_seen:
            return None
        chain = ssl_conn.get_peer_cert_chain(as_cryptography=True) or []
        try:
            self._verifier().verify(leaf, [c for c in chain if c != leaf])
        except VerificationError:
            return None
        names = leaf.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)
        return str(names[0].value) if names else "(no common name)"

    def _verifier(self) -> ClientVerifier:
        # Client certificates name a user, not a host: no subjectAltName is required.
        leaf_policy = ExtensionPolicy.webpki_defaults_ee().may_be_present(
            x509.SubjectAlternativeName, Criticality.AGNOSTIC, None
        )
        return (
            PolicyBuilder()
            .store(Store([self.ca]))
            .time(dt.datetime.now(dt.UTC))
            .extension_policies(
                ca_policy=ExtensionPolicy.webpki_defaults_ca(), ee_policy=leaf_policy
            )
            .build_client_verifier()
        )
