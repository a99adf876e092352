"""`serve`'s sessions: one TUI process per browser tab, each ended with its client.

A Session is textual-serve's AppService (it speaks the page's protocol to the process),
with its process started without a shell and in a process group of its own, so that
`end` stops the TUI and anything it started: SIGTERM to the group, a second for it to go,
then SIGKILL to whatever is left, and the process waited for. A session ends when its
client goes (closed, reset, or silent past the WebSocket heartbeat), when its TUI quits,
and when `serve` stops.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
from asyncio.subprocess import PIPE, Process
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from textual_serve.app_service import AppService

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["GRACE", "MAX_COLUMNS", "MAX_ROWS", "Session"]

GRACE = 1.0  # seconds a session's process group has after SIGTERM, before SIGKILL
MAX_COLUMNS, MAX_ROWS = 1000, 500  # a terminal's most: 4K at the smallest font fits


class Session(AppService):
    """One tab's TUI process, driven through `websocket`."""

    def __init__(self, argv: list[str], websocket: web.WebSocketResponse, **kwargs: Any) -> None:
        self.argv = argv
        self.websocket = websocket
        self._ending = False
        super().__init__(
            shlex.join(argv),
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=self._close_page,
            **kwargs,
        )

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=PIPE,
            stdout=PIPE,
            stderr=PIPE,
            env=self._build_environment(width=width, height=height),
            start_new_session=True,  # its own process group: `end` stops all of it
        )
        self._stdin = process.stdin
        return process

    async def start(self, width: int, height: int) -> None:
        await super().start(*_fit(width, height))

    async def set_terminal_size(self, width: int, height: int) -> None:
        await super().set_terminal_size(*_fit(width, height))

    async def run(self) -> None:
        """The parent's (the process's output to the page); then, unless the session is
        being ended, the page is told the session is over (the TUI quit, or died)."""
        await super().run()
        if not self._ending:
            await self._close_page()

    async def _close_page(self) -> None:
        with suppress(ConnectionError):
            await self.websocket.close()

    async def end(self, going_away: bool = False) -> None:
        """Stop the process group and wait for it; with `going_away`, close the page's
        WebSocket saying the server stops. Again, it does nothing more."""
        self._ending = True
        if self._task is not None:
            self._task.cancel()
            with suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._process is not None:
            await _stop_group(self._process)
        if going_away:
            with suppress(ConnectionError):
                await self.websocket.close(code=1001, message=b"k8s-wiretap serve stopped")


def _fit(width: int, height: int) -> tuple[int, int]:
    """The size the page asks for, within 1x1 and MAX_COLUMNS x MAX_ROWS."""
    return max(1, min(width, MAX_COLUMNS)), max(1, min(height, MAX_ROWS))


async def _stop_group(process: Process) -> None:
    _signal_group(process.pid, signal.SIGTERM)
    with suppress(TimeoutError):
        async with asyncio.timeout(GRACE):
            await process.wait()
    _signal_group(process.pid, signal.SIGKILL)  # what is left of the group
    await process.wait()


def _signal_group(group: int, signum: int) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signum)
