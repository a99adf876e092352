"""Snapshot tests of the main screens, at 120x40 and 80x24: the list and the detail in
each tab, the filter bar, help, the chain view, the walkthrough, the light theme."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot

from k8s_wiretap.views.tui import ReplayApp
from k8s_wiretap.views.tui.walkthrough.chapters import load
from tests.recorded import STORY
from tests.views.tui.detail.test_chain import opened
from tests.views.tui.filtering.test_search import press_text
from tests.views.tui.pilot import settle
from tests.views.tui.snapshots import Shots
from tests.views.tui.test_app import APPLY, type_filter
from tests.views.tui.walkthrough.test_walkthrough import at_step

SIZES = {"120x40": (120, 40), "80x24": (80, 24)}


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The list's clock in one time zone, wherever the tests run."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


async def replay_screens(app: ReplayApp, pilot: Pilot[int], shots: Shots, size: str) -> None:
    await settle(app, pilot)
    await type_filter(pilot, APPLY)  # the three-replica apply
    await settle(app, pilot)
    shots.take(app, f"main-{size}")
    for key, tab in (("2", "request"), ("3", "response"), ("4", "patch")):
        await pilot.press(key)
        await pilot.pause()
        shots.take(app, f"{tab}-{size}")
    await type_filter(pilot, "~c kubelet ~w ~r ^pods$")
    await pilot.press("g")  # the watch with 55 events
    await settle(app, pilot)
    await pilot.press("5")
    await pilot.pause()
    shots.take(app, f"events-{size}")
    await pilot.press("1", "slash", "ctrl+u", *press_text("~c scheduler ~v create"))
    await pilot.pause()
    shots.take(app, f"filter-{size}")
    await pilot.press("escape", "question_mark")
    await pilot.pause()
    shots.take(app, f"help-{size}")
    await pilot.press("escape")
    await type_filter(pilot, "~r pods/binding")
    await pilot.press("j", "j", "escape")  # the third binding, the filter cleared
    await settle(app, pilot)
    await opened(app, pilot)
    shots.take(app, f"chain-{size}")
    await pilot.press("escape", "t")
    await settle(app, pilot)
    shots.take(app, f"light-{size}")


@pytest.mark.parametrize("size", SIZES)
def test_the_replay_screens(size: str, tmp_path: Path) -> None:
    shots = Shots(tmp_path)

    async def main() -> None:
        app = ReplayApp(STORY)
        app.animation_level = "none"  # the tabs' underline jumps, not slides
        async with app.run_test(size=SIZES[size]) as pilot:
            await replay_screens(app, pilot, shots, size)

    asyncio.run(main())
    shots.check()


@pytest.mark.parametrize("size", SIZES)
def test_the_walkthrough_screen(size: str, tmp_path: Path) -> None:
    shots = Shots(tmp_path)

    async def main() -> None:
        walkthrough = load("apply-story")
        app = ReplayApp(walkthrough.recording, walkthrough=walkthrough)
        app.animation_level = "none"
        async with app.run_test(size=SIZES[size]) as pilot:
            await at_step(app, pilot)
            await pilot.press("right", "right", "right")  # the three-way patch
            await at_step(app, pilot)
            shots.take(app, f"walkthrough-{size}")

    asyncio.run(main())
    shots.check()
