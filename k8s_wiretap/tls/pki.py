"""A small certificate authority, as a real cluster's PKI has (kubeadm's layout, in miniature).

Kubernetes authenticates clients by certificate: the subject's common name is the user name and
each organization is a group (`O=system:masters` is cluster admin; `CN=system:node:node-1,
O=system:nodes` is a kubelet). Keys are ECDSA P-256 (fast to make, accepted by every
component) and every private key file is written with mode 0600.

Files are written whole, never through a link: each goes to a fresh temporary file in its
folder (created with O_EXCL|O_NOFOLLOW, so nothing already there, a planted symlink
included, is opened), then is renamed over the path. A symlink at the path is replaced, not
followed, so a link someone planted cannot make a key land in another file. Folders that
hold keys are checked (`private_folder`) before anything in them is trusted.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import secrets
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from k8s_wiretap.errors import UsageError

__all__ = [
    "Authority",
    "Identity",
    "new_authority",
    "own_file",
    "private_folder",
    "write_private",
    "write_public",
]

VALIDITY = dt.timedelta(days=365)


@dataclass(frozen=True)
class Identity:
    """A certificate and its private key, both PEM-encoded."""

    cert_pem: bytes
    key_pem: bytes

    def write(self, cert_path: Path, key_path: Path) -> None:
        write_public(cert_path, self.cert_pem)
        write_private(key_path, self.key_pem)


def write_private(path: Path, data: bytes) -> None:
    """Write `data` to a file only its owner can read (0600), whatever the umask."""
    _write_whole(path, data, private=True)


def write_public(path: Path, data: bytes) -> None:
    """Write `data` (a certificate) to a file of the usual mode (0644 less the umask)."""
    _write_whole(path, data, private=False)


def _write_whole(path: Path, data: bytes, *, private: bool) -> None:
    """Write a fresh temporary file beside `path` and rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(scratch, flags, 0o600 if private else 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            if private:
                os.fchmod(handle.fileno(), 0o600)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(scratch, path)
    except BaseException:
        scratch.unlink(missing_ok=True)
        raise


def private_folder(folder: Path) -> None:
    """Make `folder` (0700) if it is missing; else refuse it (UsageError, one line) unless
    it is a real folder (no symlink) of the current user that no one else may enter: keys
    read from a folder someone else made or can write would be theirs."""
    try:
        info = folder.lstat()
    except FileNotFoundError:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        folder.chmod(0o700)  # whatever the umask
        info = folder.lstat()
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise UsageError(f"{folder}: not a folder (a symlink or a file): refused for keys")
    if info.st_uid != os.geteuid():
        raise UsageError(f"{folder}: owned by user {info.st_uid}, not you: refused for keys")
    if info.st_mode & 0o077:
        mode = stat.S_IMODE(info.st_mode)
        raise UsageError(
            f"{folder}: mode {mode:04o} lets others in: refused for keys (chmod 700 it, "
            "or delete it to have it made again)"
        )


def own_file(path: Path) -> bool:
    """Whether `path` exists as a regular file of the current user; UsageError (one line)
    when something else is there: a symlink, or a file of another user."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
        raise UsageError(f"{path}: not a regular file (a symlink?): refused")
    if info.st_uid != os.geteuid():
        raise UsageError(f"{path}: owned by user {info.st_uid}, not you: refused")
    return True


def _new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _name(common_name: str, organizations: Sequence[str] = ()) -> x509.Name:
    parts = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    parts.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    return x509.Name(parts)


def _builder(
    subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey
) -> x509.CertificateBuilder:
    now = dt.datetime.now(dt.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
    )


def _san(names: Sequence[str]) -> x509.SubjectAlternativeName:
    entries: list[x509.GeneralName] = []
    for name in names:
        try:
            entries.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            entries.append(x509.DNSName(name))
    return x509.SubjectAlternativeName(entries)


@dataclass(frozen=True)
class Authority:
    """A CA that issues serving and client certificates."""

    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate

    @property
    def cert_pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    @property
    def identity(self) -> Identity:
        return Identity(self.cert_pem, _key_pem(self.key))

    def issue(
        self,
        common_name: str,
        organizations: Sequence[str] = (),
        *,
        hosts: Sequence[str] = (),
        client: bool = True,
    ) -> Identity:
        """A leaf certificate: a server one when `hosts` are given, a client one if `client`."""
        key = _new_key()
        usages = [ExtendedKeyUsageOID.CLIENT_AUTH] if client else []
        if hosts:
            usages.append(ExtendedKeyUsageOID.SERVER_AUTH)
        builder = (
            _builder(_name(common_name, organizations), self.cert.subject, key.public_key())
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_key_usage(ca=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()),
                critical=False,
            )
        )
        if hosts:
            builder = builder.add_extension(_san(hosts), critical=False)
        cert = builder.sign(self.key, hashes.SHA256())
        return Identity(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def _key_usage(*, ca: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=not ca,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=ca,
        crl_sign=ca,
        encipher_only=False,
        decipher_only=False,
    )


def new_authority(common_name: str) -> Authority:
    """A fresh self-signed CA."""
    key = _new_key()
    name = _name(common_name)
    cert = (
        _builder(name, name, key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(_key_usage(ca=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return Authority(key, cert)


def load_authority(cert_path: Path, key_path: Path) -> Authority:
    """A CA written earlier by `Authority.identity.write`."""
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise ValueError(f"{key_path}: expected an EC private key")
    return Authority(key, cert)


def new_signing_key() -> Identity:
    """A bare key pair (service-account token signing): public key PEM + private key PEM."""
    key = _new_key()
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return Identity(public, _key_pem(key))
