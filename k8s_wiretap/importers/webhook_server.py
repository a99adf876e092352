"""The audit webhook receiver's HTTPS server: the API server's POSTs in, `WebhookImport` out.

The standard library's threading HTTP server (HTTP/1.1, connections kept alive as client-go
keeps them), TLS on each accepted connection, the handshake done in the connection's own
thread (a client that stalls in it holds up no other). Each connection must present a
client certificate of the receiver's client CA (`webhook_tls.WebhookKeys`): one of another
issuer fails the handshake; a connection with none gets 401 and a Kubernetes Status that
says why, is closed, and nothing it sent is read or recorded (it is said through `say`).

Its bounds (`webhook_limits.Limits`, docs/importing.md): a connection is unauthenticated
until its handshake gives a certificate, and has `unauthenticated` seconds in all for that
(and, without one, for its request head), in places of its own that a new one takes from
the oldest (`Pending`: per client address and in all); only authenticated connections take
one of `max_connections` slots (one more is closed). An authenticated request has
`request` seconds for its head and body from its first byte, and `idle` for each read
and between requests. A body is read into one buffer of its size, once room for it is in
the budget of bodies held at once (two of the largest), and recorded item by item.

What a POST gets: 200 when its EventList was recorded (items that are no Event skipped,
noted), 400 when the body is no EventList (noted in the recording) or the Content-Length
is no number of bytes (ASCII digits, at most 12 of them), 411 without a Content-Length,
413 above `max_batch` (unread, and noted in the recording with its size), 503 once the
receiver has stopped or when the budget of bodies has no room within `request` seconds,
500 when the recording cannot be written (nothing of the batch is kept: the API server
tries again, `webhook.py`). Any path is taken (the kubeconfig's server URL has none);
other methods get 405.
"""

from __future__ import annotations

import contextlib
import io
import json
import socket
import ssl
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from k8s_wiretap.importers.audit import BadEvent
from k8s_wiretap.importers.webhook import Batch, Stopped, WebhookImport
from k8s_wiretap.importers.webhook_limits import Budget, Deadlines, Limits, Pending

__all__ = ["Limits", "WebhookServer"]

MAX_LENGTH_DIGITS = 12  # a Content-Length longer than this is no size
QUIET = 10.0  # seconds between two lines of one kind a flood repeats (`say_often`)
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
    server: WebhookServer
    _deadline: int | None = None  # the current request's (`Deadlines.arm`)

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.limits.idle)  # each read, the handshake's too

    def handle(self) -> None:
        connection, server = self.connection, self.server
        assert isinstance(connection, ssl.SSLSocket)
        try:
            connection.do_handshake()
        except (ssl.SSLError, OSError) as error:
            server.say_often("handshake", f"TLS handshake with {self._address()} failed: {error}")
            return
        if not connection.getpeercert():
            super().handle()  # its request head, under the unauthenticated deadline; 401
            return
        server.authenticated(connection)
        if not server.slots.acquire(blocking=False):
            server.say_often(
                "full",
                f"connection from {self._address()} closed: {server.limits.max_connections} "
                "authenticated connections are open (the most)",
            )
            return
        try:
            super().handle()
        finally:
            server.slots.release()

    def handle_one_request(self) -> None:
        """A request of an authenticated connection: head and body within `Limits.request`
        of its first byte, however slowly they come (the wait for it: `Limits.idle`)."""
        connection = self.connection
        assert isinstance(connection, ssl.SSLSocket)
        if not connection.getpeercert():
            super().handle_one_request()
            return
        assert isinstance(self.rfile, io.BufferedReader)
        try:
            started = self.rfile.peek(1)
        except OSError:  # silent for `idle` (TimeoutError), or reset
            started = b""
        if not started:
            self.close_connection = True
            return
        self._deadline = self.server.deadlines.arm(connection, self.server.limits.request)
        try:
            super().handle_one_request()
        finally:
            self.server.deadlines.disarm(self._deadline)

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
        connection, server = self.connection, self.server
        assert isinstance(connection, ssl.SSLSocket)
        cert = connection.getpeercert()
        if not cert:
            why = "no client certificate of the receiver's client CA"
            server.say_often("401", f"refused {self._address()}: {why}; nothing recorded from it")
            self._refuse(401, why)
            return
        peer = f"{_common_name(cert)} ({self._address()})"
        length = self._length()
        if length is None:
            return
        if length > server.limits.max_batch:
            self._refuse(413, f"a batch of {length:,} bytes is above {server.limits.max_batch:,}")
            server.say(f"batch of {length:,} bytes from {peer} refused: above --max-batch")
            with contextlib.suppress(OSError):
                server.importer.refused(peer, length, server.limits.max_batch)
            return
        if not server.budget.take(length, server.limits.request):
            self._refuse(503, "the receiver holds as many batches as it may; try again")
            return
        try:
            self._receive(length, peer)
        finally:
            server.budget.give(length)

    def _length(self) -> int | None:
        """The request's Content-Length; None when there is none that is a number (then
        answered: 411, 400)."""
        length = self.headers.get("Content-Length")
        if length is None:
            self._refuse(411, "a Content-Length is needed")
            return None
        if not (length.isascii() and length.isdigit() and len(length) <= MAX_LENGTH_DIGITS):
            self._refuse(400, f"Content-Length {length[:20]!r} is no number of bytes")
            return None
        return int(length)

    def _receive(self, length: int, peer: str) -> None:
        """Read the body into one buffer of its size, and record it; a body cut short (its
        client went, or its time ran out) is recorded nowhere."""
        body = bytearray(length)
        view, got = memoryview(body), 0
        with contextlib.suppress(OSError):
            while got < length and (n := self.rfile.readinto(view[got:])):
                got += n
        view.release()
        if self._deadline is not None:
            self.server.deadlines.disarm(self._deadline)
        if got < length:
            self.close_connection = True
            self.server.say(
                f"batch from {peer} cut short ({got:,} of {length:,} bytes): not recorded"
            )
            return
        self._record(body, peer)

    def _record(self, body: bytearray, peer: str) -> None:
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
    it, within `limits`. `on_batch` is told each recorded batch and who sent it, `say` what
    went wrong (one line; `say_often` for what a flood repeats)."""

    daemon_threads = True  # a kept-alive connection must not hold up the stop
    request_queue_size = 128
    importer: WebhookImport

    def __init__(
        self,
        address: tuple[str, int],
        context: ssl.SSLContext,
        on_batch: Callable[[Batch, str], None],
        say: Callable[[str], None],
        limits: Limits = Limits(),  # noqa: B008 (frozen)
    ) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.context = context
        self.on_batch = on_batch
        self.say = say
        self.limits = limits
        self.slots = threading.BoundedSemaphore(limits.max_connections)
        self.deadlines = Deadlines()
        self.pending = Pending(limits.max_pending, limits.per_address)
        self.budget = Budget(limits.body_budget)
        self._unauthenticated: dict[socket.socket, int] = {}  # their deadlines
        self._said: dict[str, tuple[float, int]] = {}  # kind: when said last, how many since
        super().__init__(address, _Handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        """An accepted connection, in TLS; its handshake comes in its own thread."""
        connection, address = self.socket.accept()
        wrapped = self.context.wrap_socket(
            connection, server_side=True, do_handshake_on_connect=False
        )
        return wrapped, address

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve the connection in a thread of its own, unauthenticated until its handshake
        gives a certificate: one of the `Pending` (an older one may be let go for it), cut
        at the deadline `Limits.unauthenticated`."""
        if self.pending.add(request, str(client_address[0])):
            self.say_often(
                "pending",
                f"unauthenticated connections from {client_address[0]} or in all are at their "
                f"most ({self.limits.per_address} from one address, {self.limits.max_pending} "
                "in all): the oldest closed for the newest",
            )
        self._unauthenticated[request] = self.deadlines.arm(request, self.limits.unauthenticated)
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.authenticated(request)
            raise

    def authenticated(self, connection: socket.socket) -> None:
        """`connection` is no longer unauthenticated (its certificate is good, or it ended)."""
        self.pending.remove(connection)
        deadline = self._unauthenticated.pop(connection, None)
        if deadline is not None:
            self.deadlines.disarm(deadline)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.authenticated(request)

    def say_often(self, kind: str, message: str) -> None:
        """`say` what a flood may repeat: at most once in QUIET seconds for each `kind`,
        with how many were not said."""
        now = time.monotonic()
        last, since = self._said.get(kind, (-QUIET, 0))
        if now - last < QUIET:
            self._said[kind] = (last, since + 1)
            return
        self._said[kind] = (now, 0)
        self.say(f"{message} (and {since:,} more like it)" if since else message)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection that broke (reset, timed out): one line, not a traceback."""
        error = sys.exc_info()[1]
        self.say_often(
            "error", f"connection from {client_address[0]}: {type(error).__name__}: {error}"
        )

    @property
    def port(self) -> int:
        return int(self.server_address[1])
