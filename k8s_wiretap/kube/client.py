"""A minimal blocking HTTPS client for the API server and component health endpoints.

The lab uses it to wait for readiness without depending on kubectl. One connection per call:
it runs a handful of times during start-up, never on a hot path.
"""

from __future__ import annotations

import http.client
import json
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from k8s_wiretap import __version__

__all__ = ["ApiClient", "Response"]

HEADERS = {"Accept": "application/json", "User-Agent": f"k8s-wiretap/{__version__}"}


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True)
class ApiClient:
    """GETs against one HTTPS (or HTTP) server, optionally with a client certificate.

    `ca_file=None` on an HTTPS server skips verification: only for component health endpoints,
    whose self-signed serving certificates no CA vouches for.
    """

    server: str
    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None

    def _context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.ca_file) if self.ca_file else None)
        if self.ca_file is None:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if self.cert_file and self.key_file:
            context.load_cert_chain(str(self.cert_file), str(self.key_file))
        return context

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        url = urlsplit(self.server)
        host, port = url.hostname or "127.0.0.1", url.port
        if url.scheme == "https":
            return http.client.HTTPSConnection(host, port, timeout=timeout, context=self._context())
        return http.client.HTTPConnection(host, port, timeout=timeout)

    def get(self, path: str, timeout: float = 5.0, accept: str | None = None) -> Response:
        """GET `path`; raises OSError (connection refused, TLS failure, timeout)."""
        connection = self._connection(timeout)
        headers = {**HEADERS, "Accept": accept} if accept else HEADERS
        try:
            connection.request("GET", path, headers=headers)
            reply = connection.getresponse()
            return Response(reply.status, reply.read(), dict(reply.getheaders()))
        finally:
            connection.close()
