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
