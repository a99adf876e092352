"""`serve`'s listener limits, on a real aiohttp server on 127.0.0.1 with real sockets.

The deadlines are shortened here (module constants) so that each test takes about a
second; `test_serve_app.py` checks the command's own listener goes through them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import aiohttp
import pytest
from aiohttp import web

from k8s_wiretap.commands import serve_connections
from k8s_wiretap.commands.serve_connections import hold, listen

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@pytest.fixture(autouse=True)
def short_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(serve_connections, "REQUEST_DEADLINE", 0.8)
    monkeypatch.setattr(serve_connections, "READ_TIMEOUT", 0.4)
    monkeypatch.setattr(serve_connections, "MAX_PER_ADDRESS", 3)
    monkeypatch.setattr(serve_connections, "MAX_CONNECTIONS", 5)


async def hello(request: web.Request) -> web.StreamResponse:
    return web.Response(text="hello")


async def big(request: web.Request) -> web.StreamResponse:
    return web.Response(body=b"x" * (64 << 20))  # more than the sockets' buffers hold


async def session(request: web.Request) -> web.StreamResponse:
    websocket = web.WebSocketResponse()
    await websocket.prepare(request)
    hold(request)
    async for message in websocket:
        await websocket.send_str(f"echo {message.data}")
    return websocket


@asynccontextmanager
async def serving() -> AsyncIterator[int]:
    """The listener on a free port of 127.0.0.1, for an app with the routes above."""
    app = web.Application()
    app.add_routes([web.get("/", hello), web.get("/big", big), web.get("/ws", session)])
    runner = web.AppRunner(app, shutdown_timeout=0.5)
    await runner.setup()
    assert runner.server is not None
    listener = await listen(runner.server, "127.0.0.1", 0)
    try:
        yield listener.sockets[0].getsockname()[1]
    finally:
        listener.close()
        await runner.cleanup()


async def read_all(reader: asyncio.StreamReader) -> bytes:
    """What the server sends until it closes (bounded: a hang fails the test)."""
    said = b""
    async with asyncio.timeout(30):
        while True:
            try:
                chunk = await reader.read(1 << 16)
            except ConnectionError:  # a reset: what came before it is kept
                return said
            if not chunk:
                return said
            said += chunk


def test_a_request_dripped_a_byte_at_a_time_is_cut_at_the_deadline() -> None:
    """Slowloris: each byte well within READ_TIMEOUT, the whole past REQUEST_DEADLINE."""

    async def drip() -> tuple[bytes, int]:
        async with serving() as port:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            reading = asyncio.create_task(read_all(reader))
            sent = 0
            request = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + b"a" * 200
            for byte in request:  # 0.1 s a byte: 20 s if nobody stopped it
                if reading.done():
                    break
                try:
                    writer.write(bytes([byte]))
                except ConnectionError:  # closed under it
                    break
                sent += 1
                await asyncio.sleep(0.1)
            said = await reading
            writer.close()
            return said, sent

    said, sent = asyncio.run(drip())
    assert said.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert b"the request took too long" in said
    assert sent < 100  # cut long before the request ended


def test_a_silent_connection_is_closed() -> None:
    async def silent() -> tuple[bytes, bytes]:
        async with serving() as port:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            said = await read_all(reader)  # nothing asked, nothing answered
            writer.close()
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET / HTTP/1.1\r\n")  # and then nothing
            cut = await read_all(reader)
            writer.close()
            return said, cut

    said, cut = asyncio.run(silent())
    assert said == b""
    assert cut.startswith(b"HTTP/1.1 408 ")


def test_an_idle_kept_alive_connection_is_closed_without_a_word() -> None:
    async def idle() -> bytes:
        async with serving() as port:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            said = await read_all(reader)
            writer.close()
            return said

    said = asyncio.run(idle())
    assert said.startswith(b"HTTP/1.1 200 OK\r\n") and said.endswith(b"hello")  # only that


def test_a_client_that_never_reads_its_answer_is_closed() -> None:
    async def never_reads() -> bool:
        async with serving() as port:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 16)
            writer.write(b"GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            await asyncio.sleep(2.5)  # past the deadline, reading nothing
            said = await read_all(reader)  # what the buffers held, then the end
            writer.close()
            return len(said) < (64 << 20)

    assert asyncio.run(never_reads())  # the answer was cut, not waited for


def test_connections_from_one_address_are_capped() -> None:
    async def flood() -> tuple[bytes, int]:
        async with serving() as port:
            held = [await asyncio.open_connection("127.0.0.1", port) for _ in range(3)]
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            refused = await read_all(reader)
            writer.close()
            held[0][1].close()  # one goes: there is room again
            await asyncio.sleep(0.1)
            url = f"http://127.0.0.1:{port}/"
            async with aiohttp.ClientSession() as client, client.get(url) as response:
                status = response.status
            for _, held_writer in held[1:]:
                held_writer.close()
            return refused, status

    refused, status = asyncio.run(flood())
    assert refused.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
    assert b"refused: 3 connections from 127.0.0.1 are open already" in refused
    assert status == 200


def test_connections_in_all_are_capped() -> None:
    """Other loopback addresses (any local user can use 127.0.0.2) count in the total."""

    async def flood() -> bytes:
        async with serving() as port:
            held = []
            for last in (1, 1, 2, 2, 3):
                held.append(
                    await asyncio.open_connection(
                        "127.0.0.1", port, local_addr=(f"127.0.0.{last}", 0)
                    )
                )
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", port, local_addr=("127.0.0.4", 0)
            )
            refused = await read_all(reader)
            for _, held_writer in [*held, (reader, writer)]:
                held_writer.close()
            return refused

    assert b"refused: 5 connections are open already" in asyncio.run(flood())


def test_an_accepted_websocket_outlives_the_deadlines() -> None:
    async def talk() -> str:
        async with (
            serving() as port,
            aiohttp.ClientSession() as client,
            client.ws_connect(f"http://127.0.0.1:{port}/ws") as websocket,
        ):
            await asyncio.sleep(2)  # past both, silent
            await websocket.send_str("still here")
            message = await websocket.receive(timeout=30)
            return str(message.data)

    assert asyncio.run(talk()) == "echo still here"


def test_a_bad_request_is_refused_without_a_log(caplog: pytest.LogCaptureFixture) -> None:
    async def long_header() -> bytes:
        async with serving() as port:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX: " + b"b" * 9000 + b"\r\n\r\n")
            said = await read_all(reader)
            writer.close()
            return said

    assert asyncio.run(long_header()).startswith(b"HTTP/1.0 400 Bad Request\r\n")
    assert [record for record in caplog.records if record.levelno >= logging.WARNING] == []


def test_kept_alive_requests_each_get_the_whole_deadline() -> None:
    async def several() -> list[int]:
        async with serving() as port, aiohttp.ClientSession() as client:
            statuses = []
            for _ in range(4):  # 4 x 0.3 s on one connection: past one deadline in all
                async with client.get(f"http://127.0.0.1:{port}/") as response:
                    statuses.append(response.status)
                await asyncio.sleep(0.3)
            return statuses

    assert asyncio.run(several()) == [200] * 4
