"""The audit webhook receiver's server against clients that would hold it: connections that
never finish a handshake, drip their bytes, or never present a certificate. A real server
on 127.0.0.1 (its limits made short, in this process), real TLS, real clients; every attack
bounded in count and time. The API server's client (the receiver's client certificate)
always gets its batch recorded."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from k8s_wiretap.capture.reader import iter_records
from k8s_wiretap.importers.webhook import LiveSink, WebhookImport
from k8s_wiretap.importers.webhook_limits import Limits
from k8s_wiretap.importers.webhook_server import WebhookServer
from k8s_wiretap.importers.webhook_tls import WebhookKeys
from tests.conftest import wait_until

# A TLS handshake record that announces 16 KiB: the server reads on for the rest.
HELLO_HEAD = b"\x16\x03\x01\x40\x00"


@dataclass
class Served:
    """A receiver serving in a thread, what it said, and a TLS context of the API server."""

    server: WebhookServer
    said: list[str]
    record: Path
    client: ssl.SSLContext
    anonymous: ssl.SSLContext  # trusts the receiver, presents no certificate

    @property
    def port(self) -> int:
        return self.server.port

    def requests(self) -> list[dict[str, Any]]:
        return [r for r in iter_records(self.record, []) if r["record"] == "request"]


@contextlib.contextmanager
def serving(folder: Path, limits: Limits) -> Iterator[Served]:
    keys = WebhookKeys(folder / "keys")
    said: list[str] = []
    server = WebhookServer(
        ("127.0.0.1", 0), keys.server_context(["127.0.0.1"]), lambda *_: None, said.append, limits
    )
    record = folder / "webhook.jsonl"
    server.importer = WebhookImport(LiveSink(record, source="audit webhook"))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    ca = keys.server_authority().cert_pem.decode()
    client, anonymous = (ssl.create_default_context(cadata=ca) for _ in range(2))
    keys.issue_client().write(folder / "client.crt", folder / "client.key")
    client.load_cert_chain(folder / "client.crt", folder / "client.key")
    try:
        yield Served(server, said, record, client, anonymous)
    finally:
        server.shutdown()
        server.importer.close()
        server.server_close()


def audit_event(audit_id: str) -> dict[str, Any]:
    return {
        "kind": "Event",
        "level": "Metadata",
        "auditID": audit_id,
        "stage": "ResponseComplete",
        "requestURI": "/api/v1/namespaces/default/configmaps",
        "verb": "create",
        "user": {"username": "kubernetes-admin"},
        "requestReceivedTimestamp": "2026-12-07T05:00:00.000000Z",
        "stageTimestamp": "2026-12-07T05:00:00.100000Z",
        "responseStatus": {"code": 201},
    }


def batch(*ids: str) -> bytes:
    items = [audit_event(i) for i in ids]
    return json.dumps(
        {"kind": "EventList", "apiVersion": "audit.k8s.io/v1", "items": items}
    ).encode()


def post(served: Served, body: bytes | str, tls: ssl.SSLContext | None = None) -> int:
    """POST `body` as the API server does; the status."""
    connection = http.client.HTTPSConnection(
        "127.0.0.1", served.port, context=tls or served.client, timeout=30
    )
    try:
        connection.request("POST", "/", body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def closed(connection: socket.socket) -> bool:
    """Whether the receiver closed `connection` (its end of stream, or a reset, is there)."""
    connection.setblocking(False)
    try:
        return connection.recv(65536) == b""
    except (BlockingIOError, ssl.SSLWantReadError):
        return False
    except OSError:
        return True


class Drip:
    """`count` connections that send `head`, then a byte every `every` seconds, each
    opened `gap` seconds after the last; all closed on `stop`."""

    def __init__(self, port: int, head: bytes, every: float, *, tls: ssl.SSLContext | None = None):
        self.port, self.head, self.every, self.tls = port, head, every, tls
        self.connections: list[socket.socket] = []
        self._stop = threading.Event()

    def open(self, count: int, gap: float = 0.0) -> None:
        for _ in range(count):
            connection = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            if self.tls is not None:
                connection = self.tls.wrap_socket(connection, server_hostname="127.0.0.1")
            connection.sendall(self.head)
            self.connections.append(connection)
            time.sleep(gap)

    def start(self) -> Drip:
        threading.Thread(target=self._run, daemon=True).start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            for connection in list(self.connections):
                with contextlib.suppress(OSError):
                    connection.send(b"a")

    def open_ones(self) -> int:
        return sum(not closed(c) for c in self.connections)

    def stop(self) -> None:
        self._stop.set()
        for connection in self.connections:
            connection.close()


def test_a_flood_of_dripping_handshakes_never_locks_the_api_server_out(tmp_path: Path) -> None:
    """150 connections from 127.0.0.1 that start a TLS handshake and drip a byte every
    0.2 s (the per-read limit never reached), opened over 3 s while the API server's client
    posts batch after batch: every batch is answered 200 and recorded; no more than
    `per_address` of them are open at once; the flood is said in a few lines, not one a
    connection."""
    limits = Limits(per_address=16, max_pending=32, max_connections=4)
    with serving(tmp_path, limits) as served:
        drip = Drip(served.port, HELLO_HEAD, 0.2).start()
        try:
            flood = threading.Thread(target=drip.open, args=(150, 0.02))
            flood.start()
            statuses: list[int] = []
            while flood.is_alive() or len(statuses) < 3:
                statuses.append(post(served, batch(f"real-{len(statuses)}")))
            flood.join()
            assert statuses == [200] * len(statuses)
            assert len(served.requests()) == len(statuses)
            wait_until(lambda: drip.open_ones() <= limits.per_address, 10, "the oldest let go")
            assert len(served.said) < 10, served.said
        finally:
            drip.stop()


def test_a_certless_connection_dripping_its_request_is_cut_at_its_deadline(
    tmp_path: Path,
) -> None:
    """TLS connections without a client certificate that drip their request head a byte
    every 0.2 s: each is cut when `unauthenticated` (1 s) has passed, well before `idle`
    (60 s); they never take a slot of the API server's (`max_connections` 2), whose batch
    is recorded while they drip."""
    limits = Limits(unauthenticated=1.0, max_connections=2)
    with serving(tmp_path, limits) as served:
        head = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
        drip = Drip(served.port, head, 0.2, tls=served.anonymous)
        drip.open(6)
        drip.start()
        try:
            assert post(served, batch("real")) == 200
            wait_until(lambda: drip.open_ones() == 0, 10, "the unauthenticated deadline")
            assert [r["id"] for r in served.requests()] == ["real"]
        finally:
            drip.stop()


def test_an_authenticated_request_dripping_its_body_is_cut_and_recorded_nowhere(
    tmp_path: Path,
) -> None:
    """The API server's certificate, a body that comes a byte every 0.2 s: the request is
    cut when `request` (1 s) has passed from its first byte, the part of a batch it sent is
    said and recorded nowhere, and the next batch is recorded."""
    limits = Limits(request=1.0)
    with serving(tmp_path, limits) as served:
        body = batch("slow")
        head = f"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n\r\n"
        drip = Drip(served.port, head.encode(), 0.2, tls=served.client)
        drip.open(1)
        drip.start()
        try:
            wait_until(lambda: drip.open_ones() == 0, 10, "the request deadline")

            # said by the handler once its read returns, which the closing ends: just after
            # the client sees the connection closed (a loaded make test saw it between)
            def cut() -> bool:
                return any("cut short" in s and "not recorded" in s for s in served.said)

            wait_until(cut, 10, "the cut said")
            assert post(served, batch("next")) == 200
            assert [r["id"] for r in served.requests()] == ["next"]
        finally:
            drip.stop()


def test_idle_connections_are_bounded_and_closed_at_the_deadline(tmp_path: Path) -> None:
    """164 connections that never start TLS: all but `per_address` are closed as newer ones
    come, the rest at the `unauthenticated` deadline; the receiver never runs a thread for
    more than its bounds, and answers after."""
    limits = Limits(unauthenticated=2.0, per_address=16, max_pending=32)
    with serving(tmp_path, limits) as served:
        idle = [
            socket.create_connection(("127.0.0.1", served.port), timeout=30) for _ in range(164)
        ]
        try:
            wait_until(lambda: sum(map(closed, idle)) >= 164 - 16, 10, "the oldest let go")
            threads = len(os.listdir(f"/proc/{os.getpid()}/task"))
            assert threads <= limits.max_pending + limits.max_connections + 8, threads
            wait_until(lambda: all(map(closed, idle)), 10, "the unauthenticated deadline")
            assert post(served, batch("after")) == 200
        finally:
            for connection in idle:
                connection.close()
