"""One watch event opened: what it carried, whole (the Events tab lists them one a line).

Opened from the Events tab (a click on an event's number or type) or `:event N`; `]` and
`[` go to the next and previous event of the same watch, `esc` back to the list.
"""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from k8s_wiretap.decode.watch import WatchEvent
from k8s_wiretap.views.tui.detail.panes import event_object
from k8s_wiretap.views.tui.escaped import escaped
from k8s_wiretap.views.tui.listing.rows import clock

__all__ = ["EVENT_BINDINGS", "EventScreen", "event_text"]

EVENT_BINDINGS: list[BindingType] = [
    Binding("escape,q", "dismiss", "back", id="event.back"),
    Binding("right_square_bracket", "step(1)", "next event", id="event.next"),
    Binding("left_square_bracket", "step(-1)", "previous event", id="event.previous"),
]


def event_text(events: list[WatchEvent], number: int) -> RenderableType:
    """Event `number` of `events`: a heading, then its object (YAML) or its error."""
    event = events[number]
    target = f"{event.namespace}/{event.name}" if event.namespace else event.name
    said = [f"event {number} of {len(events)}", event.type or "undecodable", event.kind, target]
    if event.resource_version:
        said.append(f"rv {event.resource_version}")
    if event.phase:
        said.append(event.phase)
    if event.time:
        said.append(clock(event.time))
    heading = Text("  ·  ".join(part for part in said if part), style="bold")
    return Group(heading, Text(""), event_object(event))


class EventScreen(Screen[None]):
    """A watch's event, whole, over the list; `]` `[` along the watch's events."""

    BINDINGS: ClassVar[list[BindingType]] = EVENT_BINDINGS

    def __init__(self, events: list[WatchEvent], number: int) -> None:
        super().__init__()
        self.events, self.number = events, number
        self._body = Static(escaped(event_text(events, number)), id="event-body")

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="event-scroll"):
            yield self._body
        yield Footer()

    def action_step(self, by: int) -> None:
        self.number = max(0, min(len(self.events) - 1, self.number + by))
        self._body.update(escaped(event_text(self.events, self.number)))
        self.query_one(VerticalScroll).scroll_home(animate=False)
