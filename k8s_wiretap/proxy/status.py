"""Responses the proxy itself gives, as Kubernetes `Status` objects that kubectl prints.

Every answer the proxy makes instead of the API server (a refused request, an unreachable
API server, mitmproxy's own protocol errors) carries this body, as the API server's own
errors do. `reason` is the Kubernetes `StatusReason` for the code; Kubernetes has none for
431, so it says `BadRequest` (a client error that retrying as is will not fix).
"""

from __future__ import annotations

import json

from mitmproxy import http

__all__ = ["REASONS", "status_body", "status_response"]

REASONS = {
    400: "BadRequest",
    403: "Forbidden",
    408: "Timeout",
    413: "RequestEntityTooLarge",
    431: "BadRequest",
    502: "BadGateway",
    503: "ServiceUnavailable",
    504: "Timeout",
}


def status_body(code: int, message: str) -> bytes:
    """The JSON of a failure `Status` with `code` and `message`."""
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": REASONS.get(code, "InternalError"),
        "code": code,
    }
    return json.dumps(body).encode()


def status_response(code: int, message: str, *, close: bool = False) -> http.Response:
    """A response whose body is a `Status`; `close` asks the client to close the connection."""
    headers = {"Content-Type": "application/json"}
    if close:
        headers["Connection"] = "close"
    return http.Response.make(code, status_body(code, message), headers)
