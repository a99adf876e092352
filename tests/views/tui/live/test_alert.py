"""What the writer of a followed file says went wrong, in the TUI (live: the proxy's
"recording stopped"); the proxy's side is tests/proxy/test_recording_failures.py."""

from __future__ import annotations

import asyncio

from k8s_wiretap.views.tui import ReplayApp
from tests.recorded import STORY
from tests.views.tui.pilot import settle, shown, until


def test_an_alert_is_a_notification_and_stays_in_the_title() -> None:
    message = "recording stopped: /disk/rec.jsonl: No space left on device"

    async def main() -> None:
        app = ReplayApp(STORY)
        async with app.run_test(size=(120, 40), notifications=True) as pilot:
            await settle(app, pilot)
            app.alert(message, title="recording stopped")
            app.alert(message, title="recording stopped")  # twice: the title says it once
            await until(pilot, lambda: len(app.screen.query("Toast")) == 2, "2 notifications")
            for toast in app.screen.query("Toast"):
                assert "No space left on device" in shown(toast.render())
            title = shown(app.query_one("#title").render())
            assert title.count("recording stopped") == 1
            assert title.startswith("k8s-wiretap replay")

    asyncio.run(main())


def test_a_resumed_recording_leaves_the_title_once_every_part_resumed() -> None:
    """Two workers' parts stop; the title keeps "recording stopped" until both resumed."""
    from k8s_wiretap.commands.live import _alert

    stopped: set[str] = set()

    async def main() -> None:
        app = ReplayApp(STORY)
        async with app.run_test(size=(120, 40), notifications=True) as pilot:
            await settle(app, pilot)
            for part in ("/disk/rec.jsonl", "/disk/rec.jsonl.part-1"):
                _alert(app, f"recording stopped: {part}: No space left on device", stopped)

            def title() -> str:
                return shown(app.query_one("#title").render())

            await until(pilot, lambda: "recording stopped" in title(), "the title says it")
            _alert(app, "recording resumed: /disk/rec.jsonl.part-1 (3 records lost)", stopped)
            await until(pilot, lambda: len(app.screen.query("Toast")) == 3, "3 notifications")
            assert title().count("recording stopped") == 1  # the other part is still stopped
            _alert(app, "recording resumed: /disk/rec.jsonl (1 record lost)", stopped)
            await until(pilot, lambda: "recording stopped" not in title(), "the title clears")
            assert title().startswith("k8s-wiretap replay") and not stopped

    asyncio.run(main())
