"""Responses the proxy itself gives, as Kubernetes `Status` objects that kubectl prints."""

from __future__ import annotations

import json

from mitmproxy import http

__all__ = ["status_response"]

REASONS = {403: "Forbidden", 502: "BadGateway", 503: "ServiceUnavailable"}


def status_response(code: int, message: str) -> http.Response:
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": REASONS.get(code, "InternalError"),
        "code": code,
    }
    return http.Response.make(code, json.dumps(body).encode(), {"Content-Type": "application/json"})
