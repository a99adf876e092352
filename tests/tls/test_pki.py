"""Certificates carry Kubernetes identities; private keys stay private."""

from __future__ import annotations

import stat
from pathlib import Path

from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from k8s_wiretap.tls import new_authority


def test_client_certificate_names_user_and_groups(tmp_path: Path) -> None:
    ca = new_authority("test-ca")
    identity = ca.issue("system:node:node-1", ("system:nodes",))
    cert = x509.load_pem_x509_certificate(identity.cert_pem)
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "system:node:node-1"
    assert [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == [
        "system:nodes"
    ]
    usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usages) == [ExtendedKeyUsageOID.CLIENT_AUTH]
    cert.verify_directly_issued_by(ca.cert)


def test_serving_certificate_covers_ips_and_names() -> None:
    ca = new_authority("test-ca")
    cert = x509.load_pem_x509_certificate(
        ca.issue("kube-apiserver", hosts=("127.0.0.1", "localhost"), client=False).cert_pem
    )
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]


def test_private_keys_are_written_0600_whatever_the_umask(tmp_path: Path) -> None:
    import os

    old = os.umask(0)
    try:
        new_authority("ca").identity.write(tmp_path / "ca.crt", tmp_path / "ca.key")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "ca.key").stat().st_mode) == 0o600
