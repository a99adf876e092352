"""The filter bar: the filter state (`state.py`) and the match count, always shown; `/`
opens an input for a new expression (`filters.py`), enter applies it, esc closes it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Static

from k8s_wiretap.views.tui.filtering.inputs import ClosingInput
from k8s_wiretap.views.tui.filtering.state import FilterState

__all__ = ["FilterBar"]


class FilterInput(ClosingInput):
    """The expression being typed; esc gives up."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "close", id="filter.close", show=False),
    ]


class FilterBar(Vertical):
    DEFAULT_CSS = """
    FilterBar {
        height: auto;
    }
    FilterBar FilterInput {
        display: none;
        border: none;
        height: 1;
        padding: 0 1;
    }
    FilterBar.-open FilterInput {
        display: block;
    }
    FilterBar #filter-status {
        height: 1;
        background: $panel;
        padding: 0 1;
    }
    """

    @dataclass
    class Applied(Message):
        """A new filter expression was entered ("" clears it)."""

        text: str

    class Closed(Message):
        """The input closed (applied or not): the list takes the keys again."""

    def compose(self) -> ComposeResult:
        yield FilterInput(
            placeholder="filter: ~c scheduler ~v patch !~r leases", id="filter-input", compact=True
        )
        yield Static(id="filter-status")

    @property
    def input(self) -> FilterInput:
        return self.query_one(FilterInput)

    def open(self, text: str) -> None:
        self.add_class("-open")
        self.input.value = text
        self.input.cursor_position = len(text)
        self.input.focus()

    def close(self) -> None:
        """Give up on the expression being typed; the active filter stays."""
        self.remove_class("-open")
        self.post_message(self.Closed())

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    def on_closing_input_cancelled(self, event: ClosingInput.Cancelled) -> None:
        event.stop()
        self.close()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.remove_class("-open")
        self.post_message(self.Applied(event.value.strip()))
        self.post_message(self.Closed())

    def status(
        self,
        state: FilterState,
        shown: int,
        total: int,
        busy: float | None = None,
        search: str = "",
        notice: str = "",
    ) -> None:
        """Say what is filtered: the expression (or its error), on or off, matches of all,
        noise; how far a filter being checked has got (`busy`, 0 to 1); `search`, what a
        search says (rich markup); first, `notice` (a followed file that changed)."""
        parts = [f"[yellow]{escape(notice)}[/]"] if notice else []
        if state.error:
            parts.append(f"[red]filter error: {escape(state.error)}[/]")
        if state.text:
            on = "" if state.enabled else " [dim](off: f)[/]"
            parts.append(f"filter [bold]{escape(state.text)}[/]{on}")
        else:
            parts.append("[dim]no filter (/)[/]")
        if state.hide_noise:
            parts.append("noise hidden [dim](n)[/]")
        if busy is not None:
            parts.append(f"[yellow]filtering {total:,}… {busy:.0%}[/]")
        else:
            parts.append(
                f"[bold]{shown:,}[/] of {total:,} shown" if shown != total else f"{total:,}"
            )
        if search:
            parts.append(search)
        self.query_one("#filter-status", Static).update("  ·  ".join(parts))
