"""Driving the replay app with Textual's pilot, on the committed recordings."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Static

from k8s_wiretap.views.tui import ReplayApp
from tests.recorded import STORY

__all__ = ["drive", "settle", "shown", "tab_text", "until"]

Script = Callable[[ReplayApp, Pilot[int]], Awaitable[None]]


async def until(
    pilot: Pilot[int], condition: Callable[[], bool], what: str, timeout: float = 30
) -> None:
    """Wait for something that must happen (never a speed: a generous timeout)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)


async def settle(app: ReplayApp, pilot: Pilot[int], timeout: float = 60) -> None:
    """Until the file is indexed and explained, and the selected exchange's detail shown."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        await pilot.pause(0.05)
        detail = app.detail_pane.detail
        selected = app.exchange_list.selected
        shown_now = selected is None or (detail is not None and detail.position == selected)
        if app.index.done and app.explained_all and shown_now:
            await pilot.pause()
            return
    raise TimeoutError("the app did not settle")


def drive(script: Script, path: Path = STORY, size: tuple[int, int] = (120, 40)) -> ReplayApp:
    """Run `script` on the app over `path`, once it has settled."""

    async def main() -> ReplayApp:
        app = ReplayApp(path)
        async with app.run_test(size=size) as pilot:
            await settle(app, pilot)
            await script(app, pilot)
        return app

    return asyncio.run(main())


def shown(renderable: object, width: int = 140) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def tab_text(app: ReplayApp, key: str) -> str:
    return shown(app.query_one(f"#{key}-body", Static).content)


def line_text(app: ReplayApp, y: int) -> str:
    """What the list shows on its line `y` (0: the header)."""
    return app.exchange_list.render_line(y).text
