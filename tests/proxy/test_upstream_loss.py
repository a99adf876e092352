"""An h2 client's watch through the proxy when the upstream dies in the middle of it: the
stream ends as the connection's end ends it for a direct client, not with a reset (what
client-go reported as `stream error: stream ID 3; INTERNAL_ERROR`). No lab: a local
upstream whose watch connection closes without the body's end, as a killed API server's.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator

import h2.config
import h2.connection
import h2.events
import pytest

from tests.conftest import wait_until
from tests.proxy.conftest import LocalProxy, LocalUpstream, connect, spawn_local_proxy


@pytest.fixture(scope="module")
def proxy(upstream: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProxy]:
    yield from spawn_local_proxy(upstream, tmp_path_factory.mktemp("loss"))


def h2_watch(proxy: LocalProxy) -> list[h2.events.Event]:
    """GET /watch over h2 (TLS, ALPN); the upstream dies once the first event is in.
    The stream's events to its end (ended or reset)."""
    ca = proxy.record.parent / "ca" / "mitmproxy-ca-cert.pem"
    context = ssl.create_default_context(cafile=str(ca))
    context.set_alpn_protocols(["h2"])
    seen: list[h2.events.Event] = []
    with context.wrap_socket(connect(proxy.port), server_hostname="127.0.0.1") as sock:
        assert sock.selected_alpn_protocol() == "h2"
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        conn.initiate_connection()
        headers = [(":method", "GET"), (":path", "/watch?watch=1"), (":scheme", "https")]
        conn.send_headers(1, [*headers, (":authority", "127.0.0.1")], end_stream=True)
        sock.sendall(conn.data_to_send())
        while not any(isinstance(e, (h2.events.StreamEnded, h2.events.StreamReset)) for e in seen):
            data = sock.recv(65536)
            assert data, f"the connection closed after {seen}"
            for event in conn.receive_data(data):
                seen.append(event)
                if isinstance(event, h2.events.DataReceived):
                    conn.acknowledge_received_data(event.flow_controlled_length, 1)
                    LocalUpstream.dying.set()
            sock.sendall(conn.data_to_send())
    return seen


def test_a_watch_whose_upstream_dies_ends_and_is_recorded_so(proxy: LocalProxy) -> None:
    LocalUpstream.dying.clear()
    try:
        events = h2_watch(proxy)
    finally:
        LocalUpstream.dying.clear()
    response = next(e for e in events if isinstance(e, h2.events.ResponseReceived))
    assert (b":status", b"200") in response.headers
    data = b"".join(e.data for e in events if isinstance(e, h2.events.DataReceived))
    assert data.startswith(b'{"type":"ADDED"')
    assert isinstance(events[-1], h2.events.StreamEnded), events[-1]

    def ended() -> bool:
        return any(e.path.startswith("/watch") and e.end for e in proxy.recording().exchanges)

    wait_until(ended, 10, "the watch's end in the recording")
    watch = next(e for e in proxy.recording().exchanges if e.path.startswith("/watch"))
    assert watch.status == 200 and watch.error  # the upstream's loss, as it was
