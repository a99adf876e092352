"""An h2 client's watch through the proxy when the upstream dies in the middle of it: the
stream ends as the connection's end ends it for a direct client, not with a reset (what
client-go reported as `stream error: stream ID 3; INTERNAL_ERROR`). No lab: a local
upstream whose watch connection closes without the body's end, as a killed API server's.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import h2.config
import h2.connection
import h2.events
import pytest
import yaml

from k8s_wiretap.kube.kubeconfig import load_kubeconfig
from k8s_wiretap.lab.state import LabState
from tests.conftest import Kubectl, wait_until
from tests.proxy.conftest import (
    LocalProxy,
    LocalUpstream,
    connect,
    spawn_local_proxy,
    spawn_proxy,
)


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


# -- the real thing: kubectl get -w, the API server gone (lab) -------------------------------
class Relay:
    """A TCP relay to the API server that can go as a killed API server goes: every
    connection of it closed at once. (The session's lab stays up for other tests.)"""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = self.listener.accept()
                server = socket.create_connection(self.target)
                self.sockets += [client, server]
                for one, other in ((client, server), (server, client)):
                    threading.Thread(target=self._pump, args=(one, other), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            for data in iter(lambda: source.recv(65536), b""):
                sink.sendall(data)

    def die(self) -> None:
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept (close alone does not)
        self.listener.close()
        for conn in self.sockets:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()


def via(kubeconfig: str, relay: Relay, path: Path) -> Path:
    """The kubeconfig with its server behind `relay`."""
    document = yaml.safe_load(Path(kubeconfig).read_text())
    for cluster in document["clusters"]:
        cluster["cluster"]["server"] = f"https://127.0.0.1:{relay.port}"
    path.write_text(yaml.safe_dump(document))
    return path


def watch_until_gone(
    kubeconfig: Path, relay: Relay, cache: Path, direct: Kubectl, name: str
) -> tuple[int, str, str]:
    """`kubectl get configmaps -w` until the API server (the relay) goes, once the watch
    has shown a ConfigMap made meanwhile (it is live): its exit status, what it printed
    after that, and its stderr. (Before, through the proxy, the end was printed as a row:
    `Failure InternalError an error on the server ("unable to decode an event from the
    watch stream: stream error: stream ID 7; INTERNAL_ERROR; received from peer")`.)"""
    kubectl = Kubectl(str(kubeconfig), cache)
    process = kubectl.popen("get", "configmaps", "--no-headers", "-w")
    assert process.stdout is not None and process.stderr is not None
    # listed: default always holds kube-root-ca.crt, and what other tests left beside it
    assert process.stdout.readline().strip(), "kubectl listed nothing"
    direct.run("create", "configmap", name)
    line = "listed"
    while line and not line.startswith(name):  # what else was listed, then the watched one
        line = process.stdout.readline()
    assert line, "kubectl ended before the watch saw the ConfigMap"
    relay.die()
    try:
        status = process.wait(60)
    finally:
        process.kill()
    return status, process.stdout.read(), process.stderr.read()


def test_kubectl_get_w_ends_as_quietly_as_direct_when_the_api_server_goes(
    lab: LabState, tmp_path: Path
) -> None:
    server = urlsplit(load_kubeconfig(Path(lab.kubeconfig)).server)
    target = (server.hostname or "127.0.0.1", server.port or 443)
    lab_kubectl = Kubectl(lab.kubeconfig, tmp_path / "c0")
    first = Relay(target)
    kubeconfig = via(lab.kubeconfig, first, tmp_path / "direct")
    direct = watch_until_gone(kubeconfig, first, tmp_path / "c1", lab_kubectl, "loss-direct")
    relay = Relay(target)
    proxy = spawn_proxy(str(via(lab.kubeconfig, relay, tmp_path / "relayed")), tmp_path)
    try:
        client = tmp_path / "through-proxy"
        argv = [sys.executable, "-m", "k8s_wiretap", "kubeconfig", "--proxy"]
        argv += [f"127.0.0.1:{proxy.port}", "-o", str(client), "--confdir", str(tmp_path / "ca")]
        subprocess.run([*argv, "--kubeconfig", str(tmp_path / "relayed")], check=True)
        proxied = watch_until_gone(client, relay, tmp_path / "c2", lab_kubectl, "loss-proxied")
    finally:
        proxy.stop()
        lab_kubectl.run("delete", "configmap", "loss-direct", "loss-proxied", check=False)
    assert "stream error" not in proxied[1] + proxied[2]
    assert proxied == direct == (0, "", "")
