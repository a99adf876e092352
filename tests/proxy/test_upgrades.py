"""Upgraded connections through the wiretap: the API server's WebSocket watch, for real."""

from __future__ import annotations

import json
import socket

from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, Request, TextMessage

from tests.conftest import Kubectl, wait_until
from tests.proxy.conftest import Wiretap


class WebSocketWatch:
    """A minimal WebSocket client (wsproto, which mitmproxy itself uses) for a watch."""

    def __init__(self, port: int, target: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=20)
        self.ws = WSConnection(ConnectionType.CLIENT)
        # The API server refuses WebSocket upgrades without an Origin (403).
        request = Request(
            host=f"127.0.0.1:{port}",
            target=target,
            extra_headers=[(b"origin", f"http://127.0.0.1:{port}".encode())],
        )
        self.sock.sendall(self.ws.send(request))
        self.messages: list[str] = []
        self.accepted = False
        self._partial = ""

    def pump(self) -> None:
        self.ws.receive_data(self.sock.recv(65536))
        for event in self.ws.events():
            if isinstance(event, AcceptConnection):
                self.accepted = True
            elif isinstance(event, TextMessage):
                self._partial += event.data
                if event.message_finished:
                    self.messages.append(self._partial)
                    self._partial = ""

    def close(self) -> None:
        self.sock.close()


def test_websocket_watch_through_the_proxy_is_recorded_event_by_event(
    proxied: Kubectl, wiretap: Wiretap
) -> None:
    proxied("create", "namespace", "websocket")
    watch = WebSocketWatch(wiretap.port, "/api/v1/namespaces/websocket/configmaps?watch=true")

    def upgraded() -> bool:
        watch.pump()
        return watch.accepted

    try:
        wait_until(upgraded, 20, "the upgrade")
        proxied("create", "configmap", "over-websocket", "-n", "websocket")

        def delivered() -> bool:
            watch.pump()
            return any("over-websocket" in m for m in watch.messages)

        wait_until(delivered, 20, "the event over the WebSocket")
    finally:
        watch.close()
    event = json.loads(next(m for m in watch.messages if "over-websocket" in m))
    assert event["type"] == "ADDED" and event["object"]["kind"] == "ConfigMap"

    recording = wiretap.wait_for(
        "the WebSocket exchange to end",
        lambda r: any(
            e.status == 101 and e.end is not None
            for e in r.exchanges
            if "/namespaces/websocket/configmaps" in e.path
        ),
    )
    exchange = next(
        e
        for e in recording.exchanges
        if e.status == 101 and "/namespaces/websocket/configmaps" in e.path
    )
    assert exchange.info.verb == "watch"
    assert exchange.request_header("upgrade").lower() == "websocket"
    recorded = [e for e in exchange.watch_events() if b"over-websocket" in e.data.data]
    assert recorded and json.loads(recorded[0].data.data)["type"] == "ADDED"
