"""Playback on its own clock, the clock driven by the test (an injected `now`)."""

from __future__ import annotations

import asyncio

from k8s_wiretap.views.tui import ReplayApp
from k8s_wiretap.views.tui.help_screen import HelpScreen
from k8s_wiretap.views.tui.live.playback import SPEEDS, Clock, Player
from tests.recorded import STORY, story_records
from tests.views.tui.pilot import until

REQUESTS = sorted(float(r["time"]) for r in story_records() if r["record"] == "request")


def requests_by(moment: float) -> int:
    """How many exchanges a playback shows at recording time `moment` (file order: the
    player writes each record once the clock reaches it, and every one before it)."""
    times = [float(r.get("time") or 0) for r in story_records()[1:]]
    kinds = [r["record"] for r in story_records()[1:]]
    shown, latest = 0, float("-inf")
    for when, kind in zip(times, kinds, strict=True):
        if when > moment:
            break
        latest = max(latest, when)
        shown += kind == "request"
    return shown


class Fake:
    """A monotonic clock that moves only when the test says."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_clock_runs_at_its_speed_pauses_and_jumps() -> None:
    now = Fake()
    clock = Clock(50.0, 1.0, now)
    now.now += 2
    assert clock.time() == 52.0
    clock.set_speed(4.0)
    now.now += 1
    assert clock.time() == 56.0
    clock.pause()
    now.now += 10
    assert clock.time() == 56.0
    clock.jump(60.0)
    assert clock.time() == 60.0 and clock.paused
    clock.pause(False)
    now.now += 1
    assert clock.time() == 64.0
    assert clock.faster() == 8.0 and clock.faster(-1) == 4.0
    for _ in range(20):
        clock.faster()
    assert clock.speed == SPEEDS[-1]


def test_rows_appear_as_their_time_comes_pause_step_and_speed() -> None:
    now = Fake()
    player = Player(STORY, 1.0, now)

    async def main() -> None:
        app = ReplayApp(player.path, writer=lambda: player.playing, playback=player, label="x")
        player.run()
        async with app.run_test(size=(120, 40)) as pilot:
            start = player.start
            await until(pilot, lambda: len(app.index) == requests_by(start), "the first row")
            now.now += 2.0
            await until(pilot, lambda: len(app.index) == requests_by(start + 2), "2 s of rows")
            assert 0 < len(app.index) < len(REQUESTS)
            title = str(app._title_bar.render())
            assert "▶ 1x" in title and "+2.0 s" in title
            await pilot.press("p")  # pause: the clock stops, nothing more comes
            now.now += 5.0
            await pilot.pause(0.3)
            assert len(app.index) == requests_by(start + 2)
            assert "⏸" in str(app._title_bar.render())
            shown = len(app.index)
            await pilot.press("full_stop")  # one more exchange, still paused
            await until(pilot, lambda: len(app.index) == shown + 1, "the next exchange")
            stepped = player.clock.time()
            assert stepped == REQUESTS[shown] and player.clock.paused
            await pilot.press("right_square_bracket", "right_square_bracket", "p")
            assert player.clock.speed == 4.0 and not player.clock.paused
            now.now += 1.0  # 4 s of the recording
            await until(pilot, lambda: len(app.index) == requests_by(stepped + 4), "4x")
            assert "▶ 4x" in str(app._title_bar.render())
            await pilot.press("left_square_bracket")
            assert player.clock.speed == 2.0
            now.now += 1000.0
            await until(pilot, lambda: app.index.done, "the end of the playback")
            assert len(app.index) == len(REQUESTS)
            assert "played" in str(app._title_bar.render())

    try:
        asyncio.run(main())
    finally:
        player.close()
    assert not player.path.exists()  # the played copy is gone


def test_the_playback_keys_are_in_the_help_screen_with_their_ids() -> None:
    player = Player(STORY, 1.0, Fake())

    async def main() -> None:
        app = ReplayApp(player.path, writer=lambda: player.playing, playback=player)
        player.run()
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)
            ids = {binding.id for binding in app.screen.shown}
            assert {"playback.pause", "playback.step", "playback.faster"} <= ids
            assert {"playback.slower", "follow.resume"} <= ids

    try:
        asyncio.run(main())
    finally:
        player.close()
