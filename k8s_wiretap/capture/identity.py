"""Who a client is, as far as the proxy can tell from what it sends.

The API server decides identity; the proxy records what it saw: the credential the client
presented (a bearer token's kind and, for JWTs such as service-account tokens, their
unverified `sub` claim; basic auth's user name), or the credential the proxy added upstream
on the client's behalf.
"""

from __future__ import annotations

import base64
import binascii
import json

from k8s_wiretap.capture.records import Identity

__all__ = ["client_identity"]


def _jwt_subject(token: str) -> str | None:
    parts = token.split(".")
    if len(parts) != 3:
        return None
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload))
    except (binascii.Error, ValueError):
        return None
    subject = claims.get("sub") if isinstance(claims, dict) else None
    return subject if isinstance(subject, str) else None


def client_identity(authorization: str | None, injected: str | None) -> Identity:
    """The identity record of one request (before its headers are redacted)."""
    if injected:
        return {"credential": "added by proxy", "user": injected}
    if not authorization:
        return {"credential": "none"}
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() == "bearer":
        subject = _jwt_subject(value.strip())
        record: Identity = {"credential": "bearer token"}
        if subject:
            record["user"] = subject
        return record
    if scheme.lower() == "basic":
        try:
            user = base64.b64decode(value).decode().partition(":")[0]
        except (binascii.Error, UnicodeDecodeError):
            user = ""
        return {"credential": "basic", "user": user} if user else {"credential": "basic"}
    return {"credential": scheme.lower() or "unknown"}
