"""`serve`'s listener: how much of it one client can hold, and for how long.

aiohttp bounds a request's head (lines of 8190 bytes, 128 headers) but not the time it
takes, nor how many connections one client opens. Here, on top of aiohttp's own handler:

- REQUEST_DEADLINE: from a connection's start, or from the end of its last answer, to the
  end of its next answer (the request's head and body, and the answer written) — a client
  that drips its request a byte at a time is closed, as is one that never reads its answer.
- READ_TIMEOUT: the most a client may stay silent in that time.
- MAX_PER_ADDRESS connections from one client address at once, MAX_CONNECTIONS in all: a
  new connection past either is answered 503 and closed.

Past a deadline, a connection that has sent part of a request is answered 408 and closed;
one that has sent nothing since its last answer (kept alive, idle) is closed; one whose
answer is on its way is closed at once, the rest of the answer dropped. What aiohttp
refuses (a head too large, not HTTP) is answered 400 and not logged: a client's mistakes do
not fill `serve`'s terminal.
A session's WebSocket, once accepted, is `hold` and no deadline applies: it lives while its
client answers the heartbeat (serve_app).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestHandler

__all__ = [
    "MAX_CONNECTIONS",
    "MAX_PER_ADDRESS",
    "READ_TIMEOUT",
    "REQUEST_DEADLINE",
    "hold",
    "listen",
]

REQUEST_DEADLINE = 10.0  # seconds for a whole request and its answer
READ_TIMEOUT = 5.0  # seconds a client may send nothing before its WebSocket is accepted
MAX_PER_ADDRESS = 32  # a browser opens 6 at once, and one a tab for its session
MAX_CONNECTIONS = 256  # in all: well under the 1024 files a process may have open
LINGER = 2.0  # seconds to read and drop a body no handler read, before closing


class _NotClientFaults(logging.Filter):
    """Drops the log of a request the client got wrong (it was answered 400)."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, HttpProcessingError)


LOG = logging.getLogger(__name__)
LOG.addFilter(_NotClientFaults())


class Clients:
    """The open connections, by client address."""

    def __init__(self) -> None:
        self.open: Counter[str] = Counter()

    def admit(self, address: str) -> str | None:
        """Count a new connection from `address`, or say why it is refused."""
        if self.open[address] >= MAX_PER_ADDRESS:
            return f"{MAX_PER_ADDRESS} connections from {address} are open already"
        if self.open.total() >= MAX_CONNECTIONS:
            return f"{MAX_CONNECTIONS} connections are open already"
        self.open[address] += 1
        return None

    def leave(self, address: str) -> None:
        self.open[address] -= 1
        if self.open[address] <= 0:
            del self.open[address]


def _answer(status: str, text: str) -> bytes:
    body = f"k8s-wiretap serve: {text}\n".encode()
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


class GuardedHandler(RequestHandler):
    """aiohttp's connection handler, with the deadlines and the count above."""

    def __init__(self, manager: web.Server, clients: Clients, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._clients = clients
        self._address: str | None = None
        self._deadline = self._read_by = 0.0
        self._begun = False  # bytes of a request came since the last answer
        self._timer: asyncio.TimerHandle | None = None
        self._held = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if peer else "?"
        why = self._clients.admit(address)
        if why is not None:
            assert isinstance(transport, asyncio.WriteTransport)
            transport.write(_answer("503 Service Unavailable", f"refused: {why}"))
            self.force_close()
            return
        self._address = address
        self._start_clock()

    def connection_lost(self, exc: BaseException | None) -> None:
        self._stop_clock()
        if self._address is not None:
            self._clients.leave(self._address)
            self._address = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self._read_by = self._loop.time() + READ_TIMEOUT
        self._begun = True
        super().data_received(data)

    async def finish_response(self, *args: Any, **kwargs: Any) -> tuple[web.StreamResponse, bool]:
        """The parent's (the answer written); then the next request's time starts."""
        done: tuple[web.StreamResponse, bool] = await super().finish_response(*args, **kwargs)
        if not self._held:
            self._start_clock()
        return done

    def hold(self) -> None:
        """No more deadlines: this connection is an accepted session's WebSocket."""
        self._held = True
        self._stop_clock()

    def _start_clock(self) -> None:
        now = self._loop.time()
        self._deadline, self._read_by = now + REQUEST_DEADLINE, now + READ_TIMEOUT
        self._begun = False
        self._stop_clock()
        self._timer = self._loop.call_at(self._read_by, self._tick)

    def _stop_clock(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _tick(self) -> None:
        self._timer = None
        due = min(self._deadline, self._read_by)
        if self._loop.time() < due:
            self._timer = self._loop.call_at(due, self._tick)
            return
        waiting = self._waiter is not None and not self._waiter.done()
        if self.transport is not None and waiting and self._begun:
            self.transport.write(_answer("408 Request Timeout", "the request took too long"))
        elif self.transport is not None and not waiting:
            self.transport.abort()  # what it holds of an answer is not sent
        self.force_close()


def hold(request: web.BaseRequest) -> None:
    """Lift the deadlines from `request`'s connection (an accepted WebSocket)."""
    if isinstance(request.protocol, GuardedHandler):
        request.protocol.hold()


async def listen(server: web.Server, host: str, port: int) -> asyncio.Server:
    """Listen on `host`:`port` for `server` (an AppRunner's), through GuardedHandler."""
    loop = asyncio.get_running_loop()
    clients = Clients()

    def handler() -> GuardedHandler:
        return GuardedHandler(
            server, clients, loop=loop, logger=LOG, access_log=None, lingering_time=LINGER
        )

    return await loop.create_server(handler, host, port, reuse_address=True)
