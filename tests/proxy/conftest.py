"""A wiretap proxy in front of the session's lab, recording to a file."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.capture.reader import Recording, load
from k8s_wiretap.kube.kubeconfig import load_kubeconfig, write_kubeconfig
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.proxy.routes import Route
from k8s_wiretap.proxy.server import ProxyServer, ProxySettings, free_port
from k8s_wiretap.tls import new_authority
from tests.conftest import Kubectl, wait_until


@dataclass
class Recorded:
    """A wiretap proxy listening on 127.0.0.1:`port` and recording to `record`."""

    port: int
    record: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def recording(self) -> Recording:
        return load(self.record)

    def wait_for(
        self, what: str, check: Callable[[Recording], bool], timeout: float = 10
    ) -> Recording:
        """The recording once `check(recording)` holds (records are written asynchronously)."""
        found: list[Recording] = []

        def ready() -> bool:
            recording = self.recording()
            if check(recording):
                found.append(recording)
                return True
            return False

        wait_until(ready, timeout, what)
        return found[0]


@dataclass
class Wiretap(Recorded):
    """The proxy in this process (the session's)."""

    server: ProxyServer
    confdir: Path


@dataclass
class ProxyProcess(Recorded):
    """`k8s-wiretap proxy` as a user runs it, in a process of its own."""

    process: subprocess.Popen[str]
    log: Path

    def stop(self) -> None:
        """SIGTERM, and its exit: longer than a supervisor gives its workers (30 s), so
        that a worker that hangs is killed by it and the log says where it was."""
        if self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(45)
        except subprocess.TimeoutExpired:
            log = self.log.read_text()
            raise AssertionError(f"the proxy did not stop in 45 s: {log}") from None
        log = self.log.read_text()
        if "did not stop within 30 s" in log:
            raise AssertionError(f"a worker of the proxy hung in its stop: {log}")


def spawn_proxy(
    kubeconfig: str, folder: Path, *extra: str, env: dict[str, str] | None = None
) -> ProxyProcess:
    port = free_port()
    record, log = folder / "recording.jsonl", folder / "proxy.log"
    argv = [
        sys.executable,
        "-m",
        "k8s_wiretap",
        "proxy",
        "--kubeconfig",
        kubeconfig,
        "--listen",
        f"127.0.0.1:{port}",
        "--record",
        str(record),
        "--confdir",
        str(folder / "ca"),
        "--no-tui",
        *(() if "--workers" in extra else ("--workers", "1")),  # tests read one file
        *extra,
    ]
    with log.open("w") as output:
        process = subprocess.Popen(
            argv,
            stdout=output,
            stderr=subprocess.STDOUT,
            text=True,
            env=None if env is None else {**os.environ, **env},
        )
    proxy = ProxyProcess(port, record, process, log)

    def listening() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"proxy exited: {log.read_text()}")
        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", port)) == 0

    # it listens first, then creates the recording (what arrives meanwhile is queued)
    wait_until(lambda: listening() and record.exists(), 30, "the proxy to listen and record")
    return proxy


def start_wiretap(kubeconfig: str, folder: Path, **settings: Any) -> Wiretap:
    port = free_port()
    route = Route("default", "127.0.0.1", port, load_kubeconfig(Path(kubeconfig)))
    record = folder / "recording.jsonl"
    server = ProxyServer(
        ProxySettings(routes=[route], record=record, confdir=folder / "ca", **settings)
    )
    return Wiretap(port, record, server.start(), folder / "ca")


@pytest.fixture(scope="session")
def wiretap(lab: LabState, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Wiretap]:
    proxy = start_wiretap(lab.kubeconfig, tmp_path_factory.mktemp("wiretap"))
    yield proxy
    proxy.server.stop()


@pytest.fixture(scope="session")
def proxied(lab: LabState, wiretap: Wiretap, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    """kubectl --server http://<proxy> (kubectl then sends no credentials; the proxy adds them)."""
    return Kubectl(lab.kubeconfig, tmp_path_factory.mktemp("cache-proxied"), server=wiretap.url)


# -- a proxy in front of a small local upstream (no lab) ------------------------------------
VERSION = b'{"major":"1","minor":"33","gitVersion":"v1.33.0"}'


class LocalUpstream(BaseHTTPRequestHandler):
    """An API server as far as these tests need: GET answers, POST reads its body first."""

    protocol_version = "HTTP/1.1"

    dying = threading.Event()  # set: the upstream of a /watch dies (its connection closes)

    def do_GET(self) -> None:
        if self.path.startswith("/watch"):
            self._watch_until_dead()
            return
        self._answer(200, VERSION)

    def _watch_until_dead(self) -> None:
        """A watch's first event, then the connection's end without the body's end, as
        the API server's death leaves it."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        event = b'{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1"}}\n'
        self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
        self.wfile.flush()
        LocalUpstream.dying.wait(20)
        self.close_connection = True

    def do_POST(self) -> None:
        size = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(size)
        if len(body) < size:  # the proxy cut the request: no one to answer
            self.close_connection = True
            return
        self._answer(201, json.dumps({"got": len(body)}).encode())

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024  # many clients at once (the proxy's tests attack it)


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    """A local HTTP upstream; its URL."""
    server = _Server(("127.0.0.1", 0), LocalUpstream)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@dataclass
class LocalProxy:
    port: int
    record: Path
    process: subprocess.Popen[bytes]

    def recording(self) -> Recording:
        return load(self.record)

    def notes(self) -> list[str]:
        return [str(note["message"]) for note in self.recording().notes]


def spawn_local_proxy(upstream: str, folder: Path, *flags: str) -> Iterator[LocalProxy]:
    """`k8s-wiretap proxy --workers 1 FLAGS` in front of `upstream`, until the test ends."""
    kubeconfig = folder / "kubeconfig"
    write_kubeconfig(kubeconfig, server=upstream, ca_pem=new_authority("ca").cert_pem)
    port, record = free_port(), folder / "recording.jsonl"
    argv = [sys.executable, "-m", "k8s_wiretap", "proxy", "--kubeconfig", str(kubeconfig)]
    argv += ["--listen", f"127.0.0.1:{port}", "--confdir", str(folder / "ca"), "--quiet"]
    argv += ["--record", str(record), "--workers", "1", *flags]
    process = subprocess.Popen(argv, stderr=subprocess.DEVNULL)

    def listening() -> bool:
        assert process.poll() is None, "the proxy exited"
        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", port)) == 0 and record.exists()

    try:
        wait_until(listening, 30, "the proxy to listen")
        yield LocalProxy(port, record, process)
    finally:
        process.terminate()
        process.wait(30)


def connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    """A connection to the proxy from `source` (any loopback address)."""
    conn = socket.create_connection(("127.0.0.1", port), timeout=20, source_address=(source, 0))
    return conn


def get_version(conn: socket.socket) -> bytes:
    """GET /version on a kept-alive connection; the status line."""
    conn.sendall(b"GET /version HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    answer = b""
    while VERSION not in answer:
        data = conn.recv(65536)
        assert data, f"closed after {answer!r}"
        answer += data
    return answer.split(b"\r\n", 1)[0]
