"""The exchange list: a Line-API widget that renders only the rows on screen.

As Textualize's toolong does, it is a `ScrollView` whose `render_line` turns the row at
that line into a `Strip`, kept in an LRU cache (keyed by the row's version, so a row
that changes — its summary arrives — is rendered again); a million rows cost what a
screenful costs. Line 0 is the column header, always on top. What is shown is a *view*:
every row of the index, or an array of their positions (a filter's matches).
"""

from __future__ import annotations

import bisect
from array import array
from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from k8s_wiretap.views.tui.listing.columns import Column, header, layout, line
from k8s_wiretap.views.tui.listing.index import RecordingIndex

__all__ = ["ExchangeList"]


class ExchangeList(ScrollView, can_focus=True):
    """The rows of a view of the index, with a cursor."""

    DEFAULT_CSS = """
    ExchangeList {
        height: 1fr;
        scrollbar-size-vertical: 1;
        overflow-x: hidden;
    }
    ExchangeList > .exchange-list--header {
        background: $panel;
        color: $text;
        text-style: bold;
    }
    ExchangeList > .exchange-list--cursor {
        background: $accent 35%;
    }
    ExchangeList:focus > .exchange-list--cursor {
        background: $accent 60%;
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {"exchange-list--header", "exchange-list--cursor"}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j,down", "cursor(1)", "down", id="list.down", show=False),
        Binding("k,up", "cursor(-1)", "up", id="list.up", show=False),
        Binding("g,home", "first", "first", id="list.first", show=False),
        Binding("G,end", "last", "last", id="list.last", show=False),
        Binding("pagedown,ctrl+f,space", "page(1)", "page down", id="list.page_down", show=False),
        Binding("pageup,ctrl+b", "page(-1)", "page up", id="list.page_up", show=False),
        Binding("enter", "open", "open", id="list.open"),
    ]

    cursor: reactive[int] = reactive(0, always_update=True, init=False)

    @dataclass
    class Selected(Message):
        """The cursor is on another row: `position` in the index (None: no rows)."""

        position: int | None

    @dataclass
    class Opened(Message):
        """enter, or a click on the selected row."""

        position: int

    def __init__(self, index: RecordingIndex, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.index = index
        self.view: array[int] | None = None  # None: every row
        self._columns: list[Column] = layout(80)
        self._cache: LRUCache[tuple[int, int, int, bool], Strip] = LRUCache(2048)
        self._selected: int | None = None

    # -- the view ---------------------------------------------------------------------------
    @property
    def count(self) -> int:
        return len(self.index) if self.view is None else len(self.view)

    def position_at(self, line_number: int) -> int:
        """The index position of the view's `line_number`th row."""
        return line_number if self.view is None else self.view[line_number]

    def on_screen(self) -> list[int]:
        """The index positions of the rows on screen."""
        top = self.scroll_offset.y
        bottom = min(self.count, top + max(0, self.size.height - 1))
        return [self.position_at(number) for number in range(top, bottom)]

    @property
    def selected(self) -> int | None:
        """The index position under the cursor."""
        return self.position_at(self.cursor) if self.count else None

    def show(self, view: array[int] | None) -> None:
        """Show `view` (None: every row), the cursor staying on the same exchange, or the
        nearest one after it."""
        keep = self.selected
        self.view = view
        self._resize()
        if keep is None or not self.count:
            self.cursor = 0
            return
        if view is None:
            self.cursor = keep
            return
        self.cursor = min(bisect.bisect_left(view, keep), self.count - 1)

    def grown(self) -> None:
        """The index has more rows (or rows changed): show them."""
        self._resize()
        self.refresh()
        if self._selected is None and self.count:
            self.cursor = 0

    def _resize(self) -> None:
        self.virtual_size = Size(self.size.width, self.count + 1)

    # -- rendering --------------------------------------------------------------------------
    def on_resize(self, event: events.Resize) -> None:
        self._columns = layout(max(20, event.size.width - 1))
        self._cache.clear()
        self._resize()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if y == 0:
            style = self.get_component_rich_style("exchange-list--header")
            return self._strip(header(self._columns).render(self.app.console), width, style)
        number = self.scroll_offset.y + y - 1
        if number >= self.count:
            return Strip.blank(width, self.rich_style)
        position = self.position_at(number)
        rows = self.index.rows
        selected = number == self.cursor
        key = (position, rows.version[position], width, selected)
        strip = self._cache.get(key)
        if strip is None:
            style = self.rich_style
            if selected:
                style = style + self.get_component_rich_style("exchange-list--cursor")
            text = line(rows[position], self._columns)
            strip = self._strip(text.render(self.app.console), width, style)
            self._cache[key] = strip
        return strip

    @staticmethod
    def _strip(segments: object, width: int, style: Style) -> Strip:
        strip = Strip(list(segments))  # type: ignore[call-overload]
        return strip.apply_style(style).crop_extend(0, width, style)

    # -- the cursor -------------------------------------------------------------------------
    def validate_cursor(self, value: int) -> int:
        return max(0, min(value, self.count - 1))

    def watch_cursor(self, value: int) -> None:
        self._follow()
        self.call_after_refresh(self._follow)  # once a new view's size has been laid out
        self._cache_focus()
        self.refresh()
        selected = self.selected
        if selected != self._selected:
            self._selected = selected
            self.post_message(self.Selected(selected))

    def _follow(self) -> None:
        """Scroll so that the cursor's row is on screen."""
        rows = max(1, self.size.height - 1)
        top = self.scroll_offset.y
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + rows:
            self.scroll_to(y=self.cursor - rows + 1, animate=False, immediate=True)

    def centre(self) -> None:
        """Scroll so that the cursor's row is in the middle (a walkthrough's step)."""
        rows = max(1, self.size.height - 1)
        self.scroll_to(y=max(0, self.cursor - rows // 2), animate=False, immediate=True)

    def _cache_focus(self) -> None:
        """The cursor's look depends on focus: drop the cursor's cached line."""
        for key in [k for k in self._cache.keys() if k[3]]:  # noqa: SIM118 (no __iter__)
            self._cache.discard(key)

    def on_focus(self) -> None:
        self._cache_focus()
        self.refresh()

    def on_blur(self) -> None:
        self.on_focus()

    def action_cursor(self, step: int) -> None:
        self.cursor += step

    def action_first(self) -> None:
        self.cursor = 0

    def action_last(self) -> None:
        self.cursor = self.count - 1

    def action_page(self, direction: int) -> None:
        self.cursor += direction * max(1, self.size.height - 2)

    def action_open(self) -> None:
        if (selected := self.selected) is not None:
            self.post_message(self.Opened(selected))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or offset.y == 0:
            return
        number = self.scroll_offset.y + offset.y - 1
        if number < self.count:
            if number == self.cursor and event.chain > 1:
                self.action_open()
            self.cursor = number
