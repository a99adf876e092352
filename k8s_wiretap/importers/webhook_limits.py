"""The audit webhook receiver's limits, and what keeps to them: deadlines that cut a
connection whatever it sends, the connections not yet authenticated (bounded, per client
address and in all, the oldest let go for a new one), and the bytes of batch bodies held at
once (docs/importing.md, "Limits").

A connection is unauthenticated from its accept until its TLS handshake has given a client
certificate of the receiver's client CA: all that time (the handshake, and for one without a
certificate the request head it sends before its 401) falls under one deadline,
`Limits.unauthenticated`, however it drips its bytes. Such connections never take one of the
`max_connections` slots; they have places of their own (`Pending`), and when those are full
the oldest gives its place to the new one, so that a flood of connections that never finish
a handshake churns only itself: the API server's handshake takes milliseconds, and gets in.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import socket
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

__all__ = ["Budget", "Deadlines", "Limits", "Pending"]

MIB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """The receiver's bounds (seconds, bytes, connections)."""

    max_batch: int = 32 * MIB  # a batch's body, at most (more: 413, noted)
    unauthenticated: float = 10.0  # accept to handshake done, and a certless request's head
    request: float = 60.0  # a request's head and body, from its first byte (client-go: 30 s)
    idle: float = 60.0  # silence allowed: between requests, and in any one read
    max_connections: int = 64  # authenticated connections served at once
    max_pending: int = 128  # unauthenticated connections at once (the oldest let go)
    per_address: int = 16  # unauthenticated connections from one address (the oldest let go)

    @property
    def body_budget(self) -> int:
        """Bytes of batch bodies held at once: two of the largest."""
        return 2 * self.max_batch


def cut(connection: socket.socket) -> None:
    """End `connection` from any thread: what blocks on it returns (end of stream)."""
    with contextlib.suppress(OSError):
        socket.socket.shutdown(connection, socket.SHUT_RDWR)


class Deadlines:
    """Cuts connections (`cut`) whose deadline has passed, in a thread of its own."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, socket.socket]] = []
        self._armed: dict[int, socket.socket] = {}
        self._count = itertools.count()
        self._wake = threading.Condition()
        threading.Thread(target=self._run, name="webhook deadlines", daemon=True).start()

    def arm(self, connection: socket.socket, seconds: float) -> int:
        """Cut `connection` in `seconds` unless `disarm`ed with the number returned."""
        number = next(self._count)
        with self._wake:
            self._armed[number] = connection
            heapq.heappush(self._heap, (time.monotonic() + seconds, number, connection))
            self._wake.notify()
        return number

    def disarm(self, number: int) -> None:
        with self._wake:
            self._armed.pop(number, None)

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    wait = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._wake.wait(wait)
                _, number, connection = heapq.heappop(self._heap)
                due = self._armed.pop(number, None) is not None
            if due:
                cut(connection)


class Pending:
    """The unauthenticated connections, oldest first: at most `limit` in all and `per_address`
    from one address; `add` lets the oldest go (cut) to make room for a new one."""

    def __init__(self, limit: int, per_address: int) -> None:
        self.limit, self.per_address = limit, per_address
        self._all: OrderedDict[socket.socket, str] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, connection: socket.socket, address: str) -> int:
        """Take `connection` in; how many older ones were let go for it."""
        with self._lock:
            gone = []
            same = [c for c, a in self._all.items() if a == address]
            if len(same) >= self.per_address:
                gone.append(same[0])
                del self._all[same[0]]
            if len(self._all) >= self.limit:
                oldest, _ = self._all.popitem(last=False)
                gone.append(oldest)
            self._all[connection] = address
        for old in gone:
            cut(old)
        return len(gone)

    def remove(self, connection: socket.socket) -> None:
        with self._lock:
            self._all.pop(connection, None)


class Budget:
    """Bytes that may be held at once (batch bodies): `take` waits for room, or says no."""

    def __init__(self, total: int) -> None:
        self.total, self._used = total, 0
        self._room = threading.Condition()

    def take(self, size: int, timeout: float) -> bool:
        """Hold `size` bytes (at most `total`), waiting up to `timeout` seconds for room."""
        with self._room:
            if not self._room.wait_for(lambda: self._used + size <= self.total, timeout):
                return False
            self._used += size
            return True

    def give(self, size: int) -> None:
        with self._room:
            self._used -= size
            self._room.notify_all()
