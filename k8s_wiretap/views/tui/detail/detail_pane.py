"""The detail pane: the selected exchange in tabs (Explain, Request, Response, Patch,
Events), each a scrollable view of what `panes.py` renders."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static, TabbedContent, TabPane

from k8s_wiretap.views.tui.detail.panes import TABS, events_pane
from k8s_wiretap.views.tui.escaped import escaped
from k8s_wiretap.views.tui.listing.window import Detail

__all__ = ["DetailPane"]


class DetailPane(Vertical):
    """One tab per view of the exchange; `show(detail)` fills them all."""

    DEFAULT_CSS = """
    DetailPane {
        height: 1fr;
    }
    DetailPane TabbedContent {
        height: 1fr;
    }
    DetailPane TabPane {
        padding: 0 1;
        height: 1fr;
    }
    DetailPane VerticalScroll {
        height: 1fr;
        scrollbar-size-vertical: 1;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.detail: Detail | None = None
        self.marked: tuple[str, int] | None = None  # an exchange's event a walkthrough names
        # Made here, not found by a query: a selection can come before the tabs are
        # mounted (a large recording's first rows), and filling them must not fail then.
        self._bodies = {
            key: Static(Text("select an exchange", style="dim"), id=f"{key}-body") for key in TABS
        }
        self._scrollers = {key: VerticalScroll(id=f"{key}-scroll") for key in TABS}

    def compose(self) -> ComposeResult:
        with TabbedContent(initial="explain"):
            for key, (title, _render) in TABS.items():
                with TabPane(title, id=key), self._scrollers[key]:
                    yield self._bodies[key]

    @property
    def tabs(self) -> TabbedContent:
        return self.query_one(TabbedContent)

    @property
    def active(self) -> str:
        return self.tabs.active

    @active.setter
    def active(self, key: str) -> None:
        self.tabs.active = key

    def body(self, key: str) -> Static:
        return self._bodies[key]

    def scroller(self, key: str | None = None) -> VerticalScroll:
        return self._scrollers[key or self.active]

    def _fill(self, render: dict[str, RenderableType]) -> None:
        for key, renderable in render.items():
            self.body(key).update(escaped(renderable))  # recorded text, shown not obeyed

    def waiting(self, text: str = "explaining…") -> None:
        self._fill({key: Text(text, style="dim italic") for key in TABS})

    def show(self, detail: Detail) -> None:
        """Fill the tabs, each scrolled to its top; the same exchange again (it grew: a
        followed watch's events) keeps where each tab was."""
        again = self.detail is not None and self.detail.exchange.id == detail.exchange.id
        self.detail = detail
        self._fill({key: render(detail) for key, (_title, render) in TABS.items()})
        for key in TABS if not again else ():
            self.scroller(key).scroll_home(animate=False)
        self._mark(scroll=not again)

    def mark_event(self, exchange_id: str | None = None, number: int | None = None) -> None:
        """Mark event `number` of exchange `exchange_id` in the Events tab, in sight, when
        that exchange is shown (now, or once it is); none without them."""
        marked = (exchange_id, number) if exchange_id is not None and number is not None else None
        if marked == self.marked:
            return
        unmarked, self.marked = self.marked, marked
        if self.detail is not None and unmarked and unmarked[0] == self.detail.exchange.id:
            self._fill({"events": events_pane(self.detail)})
        self._mark(scroll=True)

    def _mark(self, scroll: bool) -> None:
        if self.detail is None or self.marked is None:
            return
        exchange_id, number = self.marked
        if exchange_id != self.detail.exchange.id:
            return
        self._fill({"events": events_pane(self.detail, number)})
        if scroll:
            self.call_after_refresh(self._in_sight, number + 2)  # after the heading and header

    def _in_sight(self, row: int) -> None:
        """The Events tab scrolled, if it must be, for its line `row` to show."""
        scroller = self.scroller("events")
        if not scroller.scroll_y <= row < scroller.scroll_y + scroller.size.height:
            scroller.scroll_to(y=max(0, row - 3), animate=False)

    def failed(self, message: str) -> None:
        self._fill({key: Text(message, style="red") for key in TABS})

    def step(self, by: int) -> None:
        """The next (1) or previous (-1) tab."""
        keys = list(TABS)
        at = keys.index(self.active) if self.active in keys else 0
        self.active = keys[(at + by) % len(keys)]
