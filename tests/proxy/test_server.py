"""ProxyServer start-up: what it refuses, and that a refusal leaves every file as it was.

These need no lab: the proxy fails (on purpose) before it would talk to any API server, and
`start()` checks everything before it claims the process's mitmproxy (so they also pass while
the session's proxy runs).
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from k8s_wiretap.errors import UsageError
from k8s_wiretap.kube.kubeconfig import ClusterAccess, write_kubeconfig
from k8s_wiretap.proxy.routes import Route
from k8s_wiretap.proxy.server import ProxyServer, ProxySettings, free_port
from k8s_wiretap.tls import new_authority
from tests.conftest import cli, wait_until

CA = new_authority("ca").cert_pem
OLD = '{"record":"header","format":"k8s-wiretap-recording","version":1}\n{"record":"note"}\n'


@pytest.fixture
def taken() -> Iterator[int]:
    """A port something else listens on."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield other.getsockname()[1]


def server(tmp_path: Path, port: int, record: Path, *, overwrite: bool = False) -> ProxyServer:
    access = ClusterAccess("nowhere", f"https://127.0.0.1:{free_port()}")
    route = Route("default", "127.0.0.1", port, access)
    settings = ProxySettings(routes=[route], record=record, confdir=tmp_path / "ca")
    settings.overwrite = overwrite
    return ProxyServer(settings)


def test_a_taken_port_leaves_an_existing_recording_as_it_was(tmp_path: Path, taken: int) -> None:
    record = tmp_path / "trace.jsonl"
    record.write_text(OLD)
    proxy = server(tmp_path, taken, record, overwrite=True)
    with pytest.raises(UsageError, match=f"cannot listen on 127.0.0.1:{taken}"):
        proxy.start()
    assert record.read_text() == OLD


def test_a_taken_port_creates_no_recording(tmp_path: Path, taken: int) -> None:
    record = tmp_path / "trace.jsonl"
    with pytest.raises(UsageError, match="cannot listen"):
        server(tmp_path, taken, record).start()
    assert not record.exists()


def test_an_existing_recording_is_refused_without_overwrite(tmp_path: Path) -> None:
    record = tmp_path / "trace.jsonl"
    record.write_text(OLD)
    with pytest.raises(UsageError) as refused:
        server(tmp_path, free_port(), record).start()
    assert str(refused.value) == f"--record: {record} exists (--overwrite replaces it)"
    assert record.read_text() == OLD
    link = tmp_path / "link.jsonl"  # a symlink is an existing file too, even a dangling one
    link.symlink_to(tmp_path / "nowhere.jsonl")
    with pytest.raises(UsageError, match="exists"):
        server(tmp_path, free_port(), link).start()
    assert not (tmp_path / "nowhere.jsonl").exists()


def test_a_missing_folder_is_the_first_thing_said(tmp_path: Path, taken: int) -> None:
    """Before the port (taken here) or anything else; and not a raw FileNotFoundError."""
    record = tmp_path / "no-such-folder" / "trace.jsonl"
    with pytest.raises(UsageError) as refused:
        server(tmp_path, taken, record).start()
    assert str(refused.value) == f"--record: folder {record.parent} does not exist"
    with pytest.raises(UsageError, match="does not exist"):
        server(tmp_path, taken, record).serve()
    assert not record.parent.exists()
    assert not (tmp_path / "ca").exists()  # nothing at all was prepared


def spawn(kubeconfig: Path, folder: Path, port: int) -> subprocess.Popen[str]:
    """`k8s-wiretap proxy` on 127.0.0.1:`port`, as a user runs it."""
    argv = [sys.executable, "-m", "k8s_wiretap", "proxy", "--kubeconfig", str(kubeconfig)]
    argv += ["--listen", f"127.0.0.1:{port}", "--confdir", str(folder / "ca"), "--quiet"]
    return subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)


def listening(process: subprocess.Popen[str], port: int) -> bool:
    if process.poll() is not None:
        assert process.stderr is not None
        raise AssertionError(f"proxy exited: {process.stderr.read()}")
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def time_wait(port: int) -> list[str]:
    """TIME-WAIT sockets whose local port is `port` (the side that closed first)."""
    table = subprocess.run(
        ["ss", "-Htan", "state", "time-wait", f"( sport = :{port} )"],
        capture_output=True,
        text=True,
        check=True,
    )
    return table.stdout.splitlines()


def test_a_restart_on_the_same_port_at_once_listens(tmp_path: Path) -> None:
    """A proxy stopped a moment ago leaves connections it closed in TIME-WAIT on its port;
    the port check takes SO_REUSEADDR as the real listener does, so a restart listens."""
    kubeconfig = tmp_path / "kubeconfig"
    nowhere = f"https://127.0.0.1:{free_port()}"
    write_kubeconfig(kubeconfig, server=nowhere, ca_pem=new_authority("ca").cert_pem)
    port = free_port()
    first = spawn(kubeconfig, tmp_path, port)
    try:
        wait_until(lambda: listening(first, port), 30, "the proxy to listen")
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.sendall(b"GET /version HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            answer = b"".join(iter(lambda: client.recv(65536), b""))  # the proxy closes first
        assert answer.startswith(b"HTTP/1.1 503")  # the API server is nowhere
    finally:
        first.terminate()
        first.wait(30)
    assert time_wait(port), "no TIME-WAIT left on the proxy's port: the test proves nothing"
    second = spawn(kubeconfig, tmp_path, port)
    try:
        wait_until(lambda: listening(second, port), 30, "the restarted proxy to listen")
    finally:
        second.terminate()
        second.wait(30)


@pytest.mark.parametrize(
    ("signum", "workers"), [(signal.SIGTERM, 1), (signal.SIGINT, 2)], ids=["TERM-1", "INT-2"]
)
def test_a_signal_ends_each_part_of_the_recording_with_a_note_of_it(
    tmp_path: Path, signum: signal.Signals, workers: int
) -> None:
    """SIGTERM (`lab down`, a service manager) or SIGINT (Ctrl-C) stops the proxy as it is
    meant to stop: every part ends with a note naming the signal (the supervisor passes
    its own on to the workers), and nothing reads it as a cut recording."""
    kubeconfig, record, port = tmp_path / "kubeconfig", tmp_path / "rec.jsonl", free_port()
    write_kubeconfig(kubeconfig, server=f"https://127.0.0.1:{free_port()}", ca_pem=CA)
    argv = [sys.executable, "-m", "k8s_wiretap", "proxy", "--kubeconfig", str(kubeconfig)]
    argv += ["--listen", f"127.0.0.1:{port}", "--confdir", str(tmp_path / "ca"), "--quiet"]
    argv += ["--record", str(record), "--workers", str(workers)]
    proxy = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    assert proxy.stderr is not None
    try:  # it says where it listens once every worker is ready to stop on a signal
        announced = proxy.stderr.readline()
        assert "listening on" in announced, announced + proxy.stderr.read()
    finally:
        proxy.send_signal(signum)
        _, said = proxy.communicate(timeout=30)
    assert proxy.returncode == 0, said
    assert not list(tmp_path.glob("rec.jsonl.part-*"))  # the parts merged into the one named
    records = [json.loads(line) for line in record.read_bytes().splitlines()]
    notes = [r for r in records if r["record"] == "note" and "stopped" in r]
    assert len(notes) == workers and records[-1] in notes  # one a part; the file ends with one
    for note in notes:
        assert note["stopped"] == signum.name
        assert note["message"] == f"recording stopped by {signum.name}"
    explained = cli("explain", str(record))
    assert explained.returncode == 0 and "cut" not in explained.stderr, explained.stderr
