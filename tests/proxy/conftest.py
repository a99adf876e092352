"""A wiretap proxy in front of the session's lab, recording to a file."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from k8s_wiretap.capture.reader import Recording, load
from k8s_wiretap.kube.kubeconfig import load_kubeconfig
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.proxy.routes import Route
from k8s_wiretap.proxy.server import ProxyServer, ProxySettings, free_port
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
        self.process.terminate()
        self.process.wait(30)


def spawn_proxy(kubeconfig: str, folder: Path, *extra: str) -> ProxyProcess:
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
        process = subprocess.Popen(argv, stdout=output, stderr=subprocess.STDOUT, text=True)
    proxy = ProxyProcess(port, record, process, log)

    def listening() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"proxy exited: {log.read_text()}")
        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", port)) == 0

    # it listens first, then creates the recording (what arrives meanwhile is queued)
    wait_until(lambda: listening() and record.exists(), 30, "the proxy to listen and record")
    return proxy


def start_wiretap(kubeconfig: str, folder: Path, **settings: object) -> Wiretap:
    port = free_port()
    route = Route("default", "127.0.0.1", port, load_kubeconfig(Path(kubeconfig)))
    record = folder / "recording.jsonl"
    server = ProxyServer(
        ProxySettings(routes=[route], record=record, confdir=folder / "ca", **settings)
    )  # type: ignore[arg-type]
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
