"""Certificates and private keys: a small CA, serving and client certificates, 0600 key files."""

from __future__ import annotations

from k8s_wiretap.tls.pki import (
    Authority,
    Identity,
    load_authority,
    new_authority,
    new_signing_key,
    write_private,
)

__all__ = [
    "Authority",
    "Identity",
    "load_authority",
    "new_authority",
    "new_signing_key",
    "write_private",
]
