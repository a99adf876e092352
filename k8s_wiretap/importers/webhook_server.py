"""The audit webhook receiver's HTTPS server: the API server's POSTs in, `WebhookImport` out.

The standard library's threading HTTP server (HTTP/1.1, connections kept alive as client-go
keeps them), TLS on each accepted connection, the handshake done in the connection's own
thread (a client that stalls in it holds up no other). Each connection must present a
client certificate of the receiver's client CA (`webhook_tls.WebhookKeys`): one of another
issuer fails the handshake; a connection with none gets 401 and a Kubernetes Status that
says why, is closed, and nothing it sent is read or recorded (it is said through `say`).

At most MAX_CONNECTIONS connections are served at once (one thread each): one more is
closed as soon as it is accepted, before its handshake, so connections left idle cannot
make the receiver start thread after thread. The handshake has HANDSHAKE_TIMEOUT (10 s)
in all; a connection without a client certificate has as long for each read of its
request, one with a certificate TIMEOUT (the API server's requests may take 30 s).

What a POST gets: 200 when its EventList was recorded (items that are no Event skipped,
noted), 400 when the body is no EventList (noted in the recording) or the Content-Length
is no number of bytes (ASCII digits, at most 12 of them), 411 without a Content-Length,
413 above MAX_BODY (64 MiB: 400 events of the API server's largest,
`--audit-webhook-truncate-max-event-size` aside), 503 once the receiver has stopped, 500
when the recording cannot be written (the API server tries again: see `webhook.py`). Any
path is taken (the kubeconfig's server URL has none); other methods get 405.
"""

from __future__ import annotations

import json
import socket
import ssl
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from k8s_wiretap.importers.audit import BadEvent
from k8s_wiretap.importers.webhook import Batch, Stopped, WebhookImport

__all__ = ["MAX_BODY", "WebhookServer"]

MAX_BODY = 64 * 1024 * 1024
TIMEOUT = 60.0  # seconds a connection may be silent (client-go gives a request 30 s)
HANDSHAKE_TIMEOUT = 10.0  # seconds for the whole TLS handshake, and for each read without a cert
MAX_CONNECTIONS = 64  # served at once (the API server starts 10 batches a second, 15 in a burst)
MAX_LENGTH_DIGITS = 12  # a Content-Length longer than this is no size (MAX_BODY has 8)
REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    405: "MethodNotAllowed",
    411: "LengthRequired",
    413: "RequestEntityTooLarge",
    500: "InternalError",
    503: "ServiceUnavailable",
}


def _status(code: int, message: str) -> bytes:
    """A Kubernetes Status, as the API server's own clients read errors."""
    status: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "code": code}
    if code == 200:
        status["status"] = "Success"
    else:
        status.update(status="Failure", message=message, reason=REASONS.get(code, ""))
    return json.dumps(status).encode() + b"\n"


def _common_name(cert: dict[str, Any]) -> str:
    """The subject's common name of a certificate as `ssl.getpeercert()` gives it."""
    for part in cert.get("subject", ()):
        for key, value in part:
            if key == "commonName":
                return str(value)
    return "(no common name)"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = TIMEOUT
    server: WebhookServer

    def handle(self) -> None:
        connection = self.connection
        assert isinstance(connection, ssl.SSLSocket)
        connection.settimeout(HANDSHAKE_TIMEOUT)  # a deadline for the whole handshake
        try:
            connection.do_handshake()
        except (ssl.SSLError, OSError) as error:
            self.server.say(f"TLS handshake with {self._address()} failed: {error}")
            return
        if connection.getpeercert():
            connection.settimeout(self.timeout)
        super().handle()

    def _address(self) -> str:
        host, port = self.client_address[:2]
        return f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"

    def _answer(self, code: int, message: str = "") -> None:
        data = _status(code, message)
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def _refuse(self, code: int, message: str) -> None:
        """Answer without reading the body, and close the connection."""
        self.close_connection = True
        self._answer(code, message)

    def do_POST(self) -> None:
        connection = self.connection
        assert isinstance(connection, ssl.SSLSocket)
        cert = connection.getpeercert()
        if not cert:
            why = "no client certificate of the receiver's client CA"
            self.server.say(f"refused {self._address()}: {why}; nothing recorded from it")
            self._refuse(401, why)
            return
        peer = f"{_common_name(cert)} ({self._address()})"
        length = self.headers.get("Content-Length")
        if length is None:
            self._refuse(411, "a Content-Length is needed")
            return
        if not (length.isascii() and length.isdigit() and len(length) <= MAX_LENGTH_DIGITS):
            self._refuse(400, f"Content-Length {length[:20]!r} is no number of bytes")
            return
        if int(length) > MAX_BODY:
            self._refuse(413, f"a batch of {int(length):,} bytes is above {MAX_BODY:,}")
            return
        self._record(self.rfile.read(int(length)), peer)

    def _record(self, body: bytes, peer: str) -> None:
        try:
            batch = self.server.importer.post(body, peer)
        except BadEvent as error:
            self.server.say(f"batch from {peer} skipped: {error}")
            self._answer(400, f"not an audit EventList: {error}")
            return
        except Stopped as error:
            self._refuse(503, str(error))
            return
        except OSError as error:
            self.server.say(f"recording failed: {error}")
            self._answer(500, f"the batch could not be recorded: {error}")
            return
        self._answer(200)
        self.server.on_batch(batch, peer)

    def _other(self) -> None:
        self._refuse(405, "the audit webhook takes POSTs of audit EventLists")

    do_GET = do_PUT = do_PATCH = do_DELETE = do_HEAD = _other

    def log_message(self, format: str, *args: Any) -> None:
        """Each request is told through `on_batch` or `say`, not logged again."""


class WebhookServer(ThreadingHTTPServer):
    """Listens on `address` with TLS `context` (bound at once: a port in use is an OSError
    before anything is written); once `importer` is set, `serve_forever` records POSTs into
    it. `on_batch` is told each recorded batch and who sent it, `say` what went wrong (one
    line)."""

    daemon_threads = True  # a kept-alive connection must not hold up the stop
    request_queue_size = 64
    importer: WebhookImport

    def __init__(
        self,
        address: tuple[str, int],
        context: ssl.SSLContext,
        on_batch: Callable[[Batch, str], None],
        say: Callable[[str], None],
    ) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.context = context
        self.on_batch = on_batch
        self.say = say
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._full_said = False  # whether the last refusal for MAX_CONNECTIONS was said
        super().__init__(address, _Handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        """An accepted connection, in TLS; its handshake comes in its own thread."""
        connection, address = self.socket.accept()
        wrapped = self.context.wrap_socket(
            connection, server_side=True, do_handshake_on_connect=False
        )
        return wrapped, address

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve the connection in a thread of its own if fewer than MAX_CONNECTIONS are,
        else close it at once (said once each time the receiver is full)."""
        if not self._slots.acquire(blocking=False):
            if not self._full_said:
                self._full_said = True
                self.say(
                    f"connection from {client_address[0]} closed: {MAX_CONNECTIONS} "
                    "connections are open (the most); more are closed until one ends"
                )
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._full_said = False
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection that broke (reset, timed out): one line, not a traceback."""
        error = sys.exc_info()[1]
        self.say(f"connection from {client_address[0]}: {type(error).__name__}: {error}")

    @property
    def port(self) -> int:
        return int(self.server_address[1])
