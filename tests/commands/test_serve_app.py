"""`k8s-wiretap serve` as a user runs it: the command in a process of its own on 127.0.0.1,
its address read from the line it prints, real WebSocket clients (aiohttp's) and real
replay sessions, found as the server's child processes and ended early (each is killed
long before it has drawn anything, so a test costs a second of CPU, not a TUI's start).
"""

from __future__ import annotations

import asyncio
import http.client
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest

from tests.conftest import wait_until
from tests.recorded import STORY

LINE = re.compile(
    r"k8s-wiretap: serving k8s-wiretap replay apply-story\.jsonl\.gz on "
    r"(http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]+)&fontsize=16) \(Ctrl\+C stops\)\n"
)


@dataclass
class Served:
    process: subprocess.Popen[str]
    url: str  # the address it printed
    port: int
    token: str

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def sessions(self) -> list[int]:
        """The server's live child processes: one per session."""
        found = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == self.process.pid and fields[0] not in ("Z", "X"):
                found.append(int(stat.parent.name))
        return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def serving(*options: str) -> Iterator[Served]:
    """`k8s-wiretap serve replay STORY` on a free port; stopped (SIGINT) at the end."""
    port = free_port()
    command = [sys.executable, "-m", "k8s_wiretap", "serve", "replay", str(STORY)]
    process = subprocess.Popen(
        [*command, "--port", str(port), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        said = process.stdout.readline()
        found = LINE.fullmatch(said)
        assert found, (said, process.stderr.read() if process.poll() is not None else "")
        assert int(found[2]) == port
        yield Served(process, found[1], port, found[3])
    finally:  # (Popen signals nothing once the process is reaped)
        process.send_signal(signal.SIGINT)
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=30)
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    with serving("--max-sessions", "2") as server:
        yield server
    assert server.process.stderr is not None
    said = server.process.stderr.read()  # after every test of the module: no traceback
    assert all(line.startswith("k8s-wiretap: serve: ") for line in said.splitlines()), said


def group_gone(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return True
    return False


def get(url: str) -> tuple[int, str]:
    async def fetch() -> tuple[int, str]:
        async with aiohttp.ClientSession() as client, client.get(url) as response:
            return response.status, await response.text()

    return asyncio.run(fetch())


def test_the_printed_address_carries_a_token_the_page_uses(served: Served) -> None:
    assert len(served.token) >= 40  # 32 random bytes
    status, page = get(served.url)
    assert status == 200
    assert f"ws://127.0.0.1:{served.port}/ws/{served.token}" in page
    assert f"{served.base}/static/{served.token}/fonts/RobotoMono" in page
    status, script = get(f"{served.base}/static/{served.token}/js/textual.js")
    assert status == 200 and "WebSocket" in script
    assert get(f"{served.base}/?token={served.token}")[0] == 200  # redirected to ?fontsize


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/?fontsize=16",
        "/?token=&fontsize=16",
        "/?token={wrong}&fontsize=16",
        "/?token={token}x&fontsize=16",
        "/static/js/textual.js",
        "/static/{wrong}/js/textual.js",
        "/static/",
        "/ws",
        "/ws/{wrong}",
        "/download/{token}",
        "/nothing-here",
    ],
)
def test_a_request_without_the_token_is_refused(served: Served, path: str) -> None:
    wrong = "A" * len(served.token)
    status, said = get(served.base + path.format(token=served.token, wrong=wrong))
    assert status == 403
    assert said.startswith("k8s-wiretap serve: refused: ")
    assert "open the address `k8s-wiretap serve` printed" in said


@pytest.mark.parametrize(
    "path", ["/static/{token}/../../../../../../etc/passwd", "/static/{token}/%2e%2e/server.py"]
)
def test_nothing_outside_the_page_files_is_served(served: Served, path: str) -> None:
    plain = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    plain.request("GET", path.format(token=served.token))  # as sent: no client tidies it
    assert plain.getresponse().status == 404


def test_a_request_without_a_host_is_refused(served: Served) -> None:
    """HTTP/1.0 may leave Host out (HTTP/1.1 may not: aiohttp answers 400)."""
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as plain:
        plain.sendall(f"GET /?token={served.token}&fontsize=16 HTTP/1.0\r\n\r\n".encode())
        answer = plain.makefile("rb").read()
    assert answer.startswith(b"HTTP/1.0 403 Forbidden\r\n") and b"no Host header" in answer


def test_the_websocket_path_wants_a_websocket(served: Served) -> None:
    status, said = get(f"{served.base}/ws/{served.token}")
    assert (status, said) == (400, "k8s-wiretap serve: refused: not a WebSocket\n")
    assert served.sessions() == []


def test_a_websocket_without_the_token_starts_nothing(served: Served) -> None:
    async def connect() -> int:
        async with aiohttp.ClientSession() as client:
            try:
                await client.ws_connect(f"{served.base}/ws/{'A' * len(served.token)}")
            except aiohttp.WSServerHandshakeError as refused:
                return refused.status
        return 101

    assert asyncio.run(connect()) == 403
    assert served.sessions() == []


def test_sessions_are_capped(served: Served) -> None:
    """--max-sessions 2: a third WebSocket is told so and closed, and starts nothing."""

    async def three() -> tuple[list[int], str, int | None]:
        async with aiohttp.ClientSession() as client:
            first = await client.ws_connect(f"{served.base}/ws/{served.token}")
            second = await client.ws_connect(f"{served.base}/ws/{served.token}")
            await asyncio.to_thread(
                wait_until, lambda: len(served.sessions()) == 2, 30, "two sessions"
            )
            running = served.sessions()
            third = await client.ws_connect(f"{served.base}/ws/{served.token}")
            said = (await third.receive(timeout=30)).data
            closed = await third.receive(timeout=30)
            assert closed.type == aiohttp.WSMsgType.CLOSE
            assert served.sessions() == running  # nothing started for it
            await first.close()
            await second.close()
            return running, said.decode(), third.close_code

    running, said, code = asyncio.run(three())
    assert "k8s-wiretap: no session free (--max-sessions 2): close a tab, then Restart." in said
    assert code == 1013  # try again later
    wait_until(lambda: all(group_gone(pid) for pid in running), 30, "the sessions to end")
    assert served.sessions() == []


def handshake(served: Served) -> socket.socket:
    """A WebSocket opened by hand, for a 1500x1000 terminal; nothing read from it."""
    raw = socket.create_connection(("127.0.0.1", served.port))
    raw.sendall(
        f"GET /ws/{served.token}?width=1500&height=1000 HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{served.port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
        "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n".encode()
    )
    return raw


@pytest.mark.parametrize("how", ["close", "reset"])
def test_a_session_ends_when_its_client_goes_without_reading(served: Served, how: str) -> None:
    raw = handshake(served)
    wait_until(lambda: len(served.sessions()) == 1, 30, "the session to start")
    (session,) = served.sessions()
    if how == "reset":
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    raw.close()
    wait_until(lambda: group_gone(session), 30, "the session's processes to end")
    wait_until(lambda: served.sessions() == [], 30, "the session to be reaped")


def test_a_session_ends_when_its_page_closes(served: Served) -> None:
    async def open_and_close() -> int:
        async with aiohttp.ClientSession() as client:
            websocket = await client.ws_connect(f"{served.base}/ws/{served.token}")
            await asyncio.to_thread(
                wait_until, lambda: len(served.sessions()) == 1, 30, "the session to start"
            )
            (session,) = served.sessions()
            await websocket.close()
            return session

    session = asyncio.run(open_and_close())
    wait_until(lambda: group_gone(session), 30, "the session's processes to end")


@pytest.mark.parametrize("message", ["not json", '["resize", {"width": "wide"}]', "[]"])
def test_a_page_that_breaks_the_protocol_ends_its_session(served: Served, message: str) -> None:
    async def send() -> tuple[int, int | None]:
        async with (
            aiohttp.ClientSession() as client,
            client.ws_connect(f"{served.base}/ws/{served.token}") as websocket,
        ):
            await asyncio.to_thread(
                wait_until, lambda: len(served.sessions()) == 1, 30, "the session to start"
            )
            (session,) = served.sessions()
            await websocket.send_str(message)
            async with asyncio.timeout(30):
                async for _ in websocket:  # what it drew, until it is closed
                    pass
            return session, websocket.close_code

    session, code = asyncio.run(send())
    assert code is not None
    wait_until(lambda: group_gone(session), 30, "the session's processes to end")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_it_promptly_and_cleanly(signum: int) -> None:
    """With a session running: it exits 0, nothing on stderr, the session's processes gone
    by then. (The wait is a hang guard: before, it took 18 s or more.)"""
    with serving() as server:
        raw = handshake(server)
        wait_until(lambda: len(server.sessions()) == 1, 30, "the session to start")
        (session,) = server.sessions()
        server.process.send_signal(signum)
        server.process.wait(timeout=10)
        assert group_gone(session)
        raw.close()
        assert server.process.returncode == 0
        assert server.process.stderr is not None
        assert server.process.stderr.read() == ""


def test_the_listener_caps_connections_from_one_address(served: Served) -> None:
    """The command's listener has the limits of serve_connections (32 from one address)."""
    held = [socket.create_connection(("127.0.0.1", served.port)) for _ in range(32)]
    try:
        refused = socket.create_connection(("127.0.0.1", served.port))
        refused.settimeout(30)
        said = refused.recv(4096)
        refused.close()
    finally:
        for connection in held:
            connection.close()
    assert said.startswith(b"HTTP/1.1 503 ")
    assert b"32 connections from 127.0.0.1 are open already" in said


def test_max_sessions_must_be_one_or_more() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "k8s_wiretap", "serve", "replay", str(STORY), "--max-sessions", "0"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "k8s-wiretap: --max-sessions 0: at least 1, please\n"
