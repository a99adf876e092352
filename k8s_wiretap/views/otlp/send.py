"""POST an ExportTraceServiceRequest to a collector: OTLP/HTTP with the JSON encoding.

The endpoint is the collector's base URL (`http://jaeger:4318`, its OTLP HTTP port); the
request goes to `<endpoint>/v1/traces`, as OpenTelemetry SDKs send it. An endpoint that
already ends in `/v1/traces` is taken as it is.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from k8s_wiretap.errors import UsageError, WiretapError
from k8s_wiretap.wire.words import counted

__all__ = ["TRACES_PATH", "OtlpError", "post", "traces_url"]

TRACES_PATH = "/v1/traces"
TIMEOUT = 10.0  # seconds for one request


class OtlpError(WiretapError):
    """The collector could not be reached or refused the spans."""


def traces_url(endpoint: str) -> str:
    """`http://host:4318` → `http://host:4318/v1/traces`; UsageError for what is no URL."""
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--otlp-endpoint {endpoint!r}: expected http(s)://HOST:PORT")
    base = endpoint.rstrip("/")
    return base if base.endswith(TRACES_PATH) else base + TRACES_PATH


def encoded(request: dict[str, Any]) -> bytes:
    """The request as compact JSON bytes."""
    return json.dumps(request, separators=(",", ":"), ensure_ascii=False).encode()


def post(url: str, body: bytes, timeout: float = TIMEOUT) -> None:
    """POST `body` (OTLP JSON) to `url`; OtlpError saying why when it is not accepted."""
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            answer = response.read()
    except urllib.error.HTTPError as error:
        detail = error.read()[:200].decode("utf-8", "replace").strip()
        raise OtlpError(f"{url}: {error.code} {error.reason}: {detail}") from error
    except (urllib.error.URLError, OSError, TimeoutError) as error:
        reason = getattr(error, "reason", error)
        raise OtlpError(f"{url}: {reason}") from error
    _partial(url, answer)


def _partial(url: str, answer: bytes) -> None:
    """An accepted request may still have rejected spans (`partialSuccess`)."""
    try:
        reply = json.loads(answer) if answer.strip() else {}
    except ValueError:
        return
    partial = reply.get("partialSuccess") if isinstance(reply, dict) else None
    rejected = int((partial or {}).get("rejectedSpans") or 0)
    if rejected:
        message = (partial or {}).get("errorMessage") or "no reason given"
        raise OtlpError(f"{url}: the collector rejected {counted(rejected, 'span')}: {message}")
