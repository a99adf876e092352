"""A watch's events in the Events tab, each openable: `:event N`, or a click on it."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Static

from k8s_wiretap.views.tui import ReplayApp
from k8s_wiretap.views.tui.detail.event_screen import EventScreen
from tests.views.tui.filtering.test_command_line import command
from tests.views.tui.pilot import drive, settle, shown, tab_text
from tests.views.tui.test_app import type_filter


def opened(app: ReplayApp) -> str:
    assert isinstance(app.screen, EventScreen)
    return shown(app.screen.query_one("#event-body", Static).content)


def test_an_event_opens_whole_and_steps_along_its_watch() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await type_filter(pilot, "~c shared-informers ~v watch ~r ^deployments$")
        await settle(app, pilot)
        detail = app.detail_pane.detail
        assert detail is not None and len(detail.events) >= 2
        assert "click one, or :event N" in tab_text(app, "events")
        await command(pilot, "event 1")
        text = opened(app)
        first = detail.events[1]
        assert f"event 1 of {len(detail.events)}" in text and first.type in text
        assert "kind: Deployment" in text and f"name: {first.name}" in text  # the object
        await pilot.press("left_square_bracket")
        assert f"event 0 of {len(detail.events)}" in opened(app)
        await pilot.press("escape")
        assert not isinstance(app.screen, EventScreen)
        await app.run_action("open_event(0)")  # what a click on its number runs
        await pilot.pause()
        assert "event 0 of" in opened(app)

    drive(script)


def test_event_needs_a_watch_and_a_number_it_has() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await command(pilot, "event 0")  # the first exchange: GET /version
        assert app.commands.said == "no events: the selected exchange is not a watch"
        await type_filter(pilot, "~c shared-informers ~v watch ~r ^deployments$")
        await settle(app, pilot)
        await command(pilot, "event 999")
        assert app.commands.said.startswith("event '999': 0 to ")
        assert not isinstance(app.screen, EventScreen)

    drive(script)
