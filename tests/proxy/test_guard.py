"""The listener's connection limits (guard.py), against `k8s-wiretap proxy` in a process of
its own in front of a small local upstream: no lab, every attack bounded and on loopback.

Loopback has a whole /8, so a test can be several client addresses: 127.0.0.1 attacks,
127.0.0.2 and others are the clients that must still be served.
"""

from __future__ import annotations

import socket
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from k8s_wiretap.kube.kubeconfig import write_kubeconfig
from k8s_wiretap.proxy.server import free_port
from k8s_wiretap.tls import new_authority
from tests.conftest import wait_until
from tests.proxy.conftest import LocalProxy, connect, get_version, spawn_local_proxy


def closed_without_a_byte(conn: socket.socket) -> bool:
    """The proxy closed the connection and sent nothing (or reset it)."""
    try:
        return conn.recv(1) == b""
    except ConnectionResetError:
        return True


@pytest.fixture(scope="module")
def proxy(upstream: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProxy]:
    folder = tmp_path_factory.mktemp("guard")
    flags = ("--max-client-connections", "40", "--handshake-timeout", "2")
    yield from spawn_local_proxy(upstream, folder, *flags)


def test_past_the_limit_an_address_is_closed_and_others_are_served(proxy: LocalProxy) -> None:
    """40 kept-alive connections from 127.0.0.3 are its limit: 60 more are closed at once,
    unanswered, while 127.0.0.4 is served; once one of the 40 closes, 127.0.0.3 is again."""
    held: list[socket.socket] = []
    try:
        # each asks at once: one that begins no request within the handshake deadline
        # (2 s here) is closed, which a loaded machine reached while 40 were connected first
        for _ in range(40):
            held.append(connect(proxy.port, "127.0.0.3"))
            assert get_version(held[-1]) == b"HTTP/1.1 200 OK"
        for _ in range(60):
            with connect(proxy.port, "127.0.0.3") as extra:
                extra.sendall(b"GET /version HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                assert closed_without_a_byte(extra)
        with connect(proxy.port, "127.0.0.4") as other:
            assert get_version(other) == b"HTTP/1.1 200 OK"
        held.pop().close()

        def served_again() -> bool:
            with connect(proxy.port, "127.0.0.3") as again:
                again.sendall(b"GET /version HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                try:
                    return again.recv(12) == b"HTTP/1.1 200"
                except ConnectionResetError:  # refused: the close is not in yet
                    return False

        wait_until(served_again, 10, "127.0.0.3 to be served once under its limit")
    finally:
        for conn in held:
            conn.close()

    def refused_notes() -> list[str]:
        return [n for n in proxy.notes() if "127.0.0.3" in n and "refused" in n]

    # the notes reach the recording with the proxy's next flush of it
    wait_until(lambda: any("more" in n for n in refused_notes()), 10, "the note of the refused")
    refused = refused_notes()
    assert refused[0].startswith("refused a connection from 127.0.0.3:")
    assert "40 connections from 127.0.0.3 are open, the limit per client address" in refused[0]
    more = [n for n in refused if n.endswith("more connections from 127.0.0.3 at its limit")]
    assert len(more) == 1 and int(more[0].split()[1]) >= 59  # and any refused retry above


def client_hello_start() -> bytes:
    """The first bytes of a real TLS ClientHello (what a client that drips it has sent)."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ssl.create_default_context().wrap_bio(incoming, outgoing, server_hostname="127.0.0.1")
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()[:20]


def test_a_handshake_not_done_by_its_deadline_is_closed(proxy: LocalProxy) -> None:
    """A connection that starts a TLS handshake and stops, one that sends nothing, and one
    that finishes its handshake and begins no request are closed at the handshake deadline
    (2 s here), each with a note; a connection that asked once is not under it (its next
    request, long after, is served)."""
    dripper, silent = connect(proxy.port, "127.0.0.5"), connect(proxy.port, "127.0.0.5")
    context = ssl.create_default_context(
        cafile=str(proxy.record.parent / "ca" / "mitmproxy-ca-cert.pem")
    )
    with (
        dripper,
        silent,
        context.wrap_socket(connect(proxy.port, "127.0.0.5"), server_hostname="127.0.0.1") as idle,
        context.wrap_socket(connect(proxy.port, "127.0.0.6"), server_hostname="127.0.0.1") as tls,
    ):
        assert get_version(tls) == b"HTTP/1.1 200 OK"  # at once, then kept alive
        dripper.sendall(client_hello_start())
        assert closed_without_a_byte(dripper)
        assert closed_without_a_byte(silent)
        assert closed_without_a_byte(idle)
        wait_until(lambda: len(notes_about(proxy, "127.0.0.5")) == 3, 10, "three notes")
        assert get_version(tls) == b"HTTP/1.1 200 OK"  # long after its handshake
    notes = notes_about(proxy, "127.0.0.5")
    assert any("did not finish its TLS handshake within 2 s" in n for n in notes)
    assert any("sent nothing within 2 s" in n for n in notes)
    assert any("finished its TLS handshake and began no request within 2 s" in n for n in notes)
    assert not notes_about(proxy, "127.0.0.6")
    assert not [n for n in proxy.notes() if "TLS handshake with 127.0.0.5" in n]  # said once


def notes_about(proxy: LocalProxy, address: str) -> list[str]:
    return [n for n in proxy.notes() if f"{address}:" in n and "closed the connection" in n]


@pytest.mark.parametrize(
    "flag", ["--request-timeout", "--handshake-timeout", "--max-client-connections"]
)
def test_a_bound_that_is_not_positive_is_one_line(flag: str, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    write_kubeconfig(kubeconfig, server="http://127.0.0.1:1", ca_pem=new_authority("ca").cert_pem)
    argv = [sys.executable, "-m", "k8s_wiretap", "proxy", "--kubeconfig", str(kubeconfig)]
    argv += ["--listen", f"127.0.0.1:{free_port()}", "--confdir", str(tmp_path / "ca")]
    done = subprocess.run(
        [*argv, "--no-tui", flag, "0"], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr) == (2, f"k8s-wiretap: {flag} 0: must be positive\n")
