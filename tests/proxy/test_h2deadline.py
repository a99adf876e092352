"""The whole-request deadline over h2 (h2deadline.py): streams that drip their bodies are
answered 408 at the deadline, one by one, while other streams of the same connections and
other connections are served. No lab: a local upstream; every attack bounded, on loopback.
"""

from __future__ import annotations

import select
import ssl
import time
from collections.abc import Iterator

import h2.config
import h2.connection
import h2.events
import pytest

from tests.conftest import wait_until
from tests.proxy.conftest import LocalProxy, connect, spawn_local_proxy

# mitmproxy opens at most 5 upstream connections per client connection at a time, and the
# local upstream speaks HTTP/1 (a stream each): 4 dripping streams and 1 served at most.
STREAMS = 4  # dripping streams per connection
CONNECTIONS = 12


@pytest.fixture(scope="module")
def hurried(upstream: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProxy]:
    folder = tmp_path_factory.mktemp("h2-hurried")
    yield from spawn_local_proxy(upstream, folder, "--request-timeout", "2")


class H2:
    """An h2 client connection to the proxy (TLS, ALPN h2)."""

    def __init__(self, proxy: LocalProxy) -> None:
        context = ssl.create_default_context(
            cafile=str(proxy.record.parent / "ca" / "mitmproxy-ca-cert.pem")
        )
        context.set_alpn_protocols(["h2"])
        self.sock = context.wrap_socket(connect(proxy.port), server_hostname="127.0.0.1")
        assert self.sock.selected_alpn_protocol() == "h2"
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        self.conn.initiate_connection()
        self.events: dict[int, list[h2.events.Event]] = {}
        self.flush()

    def request(self, stream_id: int, method: str, path: str, *, length: int = 0) -> None:
        headers = [(":method", method), (":path", path), (":scheme", "https")]
        headers += [(":authority", "127.0.0.1")]
        if length:
            headers.append(("content-length", str(length)))
        self.conn.send_headers(stream_id, headers, end_stream=not length)
        self.events[stream_id] = []
        self.flush()

    def drip(self, stream_id: int) -> None:
        """A byte of the stream's body, if the stream still takes one."""
        if not self.done(stream_id):
            self.conn.send_data(stream_id, b"x")
            self.flush()

    def done(self, stream_id: int) -> bool:
        ends = (h2.events.StreamEnded, h2.events.StreamReset)
        return any(isinstance(e, ends) for e in self.events[stream_id])

    def read(self) -> None:
        data = self.sock.recv(65536)
        assert data, "the proxy closed the connection"
        for event in self.conn.receive_data(data):
            stream_id = getattr(event, "stream_id", 0)
            if stream_id in self.events:
                self.events[stream_id].append(event)
            if isinstance(event, h2.events.DataReceived):
                self.conn.acknowledge_received_data(event.flow_controlled_length, stream_id)
        self.flush()

    def flush(self) -> None:
        self.sock.sendall(self.conn.data_to_send())

    def status(self, stream_id: int) -> bytes:
        response = next(
            e for e in self.events[stream_id] if isinstance(e, h2.events.ResponseReceived)
        )
        return dict(response.headers)[b":status"]

    def body(self, stream_id: int) -> bytes:
        return b"".join(
            e.data for e in self.events[stream_id] if isinstance(e, h2.events.DataReceived)
        )


def test_streams_dripped_a_byte_at_a_time_are_cut_at_the_deadline(hurried: LocalProxy) -> None:
    clients = [H2(hurried) for _ in range(CONNECTIONS)]
    dripping = [1 + 2 * n for n in range(STREAMS)]
    for client in clients:
        for stream_id in dripping:
            client.request(
                stream_id,
                "POST",
                f"/api/v1/namespaces/default/configmaps?h2drip={stream_id}",
                length=1000,
            )
    served = dripping[-1] + 2
    clients[0].request(served, "GET", "/version")  # a stream beside the drips
    stop = time.monotonic() + 20  # a bound, not a measure
    while time.monotonic() < stop and not all(c.done(s) for c in clients for s in [*dripping]):
        for client in clients:
            for stream_id in dripping:
                client.drip(stream_id)
        readable, _, _ = select.select([c.sock for c in clients], [], [], 0.2)
        for client in clients:
            if client.sock in readable:
                client.read()
    while not clients[0].done(served):
        clients[0].read()
    assert clients[0].status(served) == b"200"
    for client in clients:
        for stream_id in dripping:
            assert client.status(stream_id) == b"408"
            assert b"k8s-wiretap: the request did not arrive within 2 s" in client.body(stream_id)
        client.sock.close()

    def recorded() -> list[object]:
        exchanges = hurried.recording().exchanges
        return [e for e in exchanges if "h2drip=" in e.path and e.end is not None]

    wait_until(lambda: len(recorded()) == CONNECTIONS * STREAMS, 10, "every cut stream recorded")
    for cut in (e for e in hurried.recording().exchanges if "h2drip=" in e.path):
        assert cut.status == 408
        assert cut.error is not None and "did not arrive within 2 s" in cut.error
