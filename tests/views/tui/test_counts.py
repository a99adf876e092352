"""The replay of a recording of one watch that delivered one event: its title says
"1 exchange", the Response tab "a stream of 1 event", the Events tab "1 event"."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Static

from k8s_wiretap.views.tui import ReplayApp
from tests.views.test_counts import one_event_watch, recording_of
from tests.views.tui.pilot import drive, shown, tab_text


def test_one_exchange_and_one_event_are_said_in_the_singular(tmp_path: Path) -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        title = shown(app.query_one("#title", Static).content).strip()
        assert title.endswith("  ·  1 exchange"), title
        assert "a stream of 1 event: see Events" in tab_text(app, "response")
        events = tab_text(app, "events")
        assert events.startswith("1 event ") and "1 events" not in events, events

    drive(script, recording_of(one_event_watch(), tmp_path / "watch.jsonl"))
