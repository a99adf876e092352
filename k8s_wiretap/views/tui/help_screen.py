"""`?`: every key binding (with its id, for remapping), the filter language, the `:` commands."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from k8s_wiretap.views.tui.filtering.command_line import COMMAND_HELP
from k8s_wiretap.views.tui.filtering.filters import FILTER_HELP

__all__ = ["HelpScreen"]


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
    }
    HelpScreen > VerticalScroll {
        width: 90%;
        max-width: 100;
        height: 90%;
        border: round $accent;
        background: $surface;
        padding: 0 1;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "close", id="help.close"),
    ]

    def __init__(self, bindings: list[Binding]) -> None:
        super().__init__()
        self.shown = bindings

    def compose(self) -> ComposeResult:
        table = Table(box=None, padding=(0, 2), title="keys", title_justify="left")
        for column in ("key", "does", "id"):
            table.add_column(column)
        for binding in self.shown:
            keys = ", ".join(_key(k) for k in binding.key.split(","))
            table.add_row(Text(keys, style="bold"), binding.description, binding.id or "")
        with VerticalScroll():
            yield Static(table)
            yield Static(Text("\nfilter (/)", style="bold underline"))
            yield Static(Text(FILTER_HELP))
            yield Static(Text("\ncommands (:)", style="bold underline"))
            yield Static(Text(COMMAND_HELP))
            yield Static(
                Text(
                    "\nmouse: click a row to select it, double-click to open it; "
                    "click a tab; scroll with the wheel",
                    style="dim",
                )
            )


def _key(key: str) -> str:
    names = {
        "question_mark": "?",
        "slash": "/",
        "escape": "esc",
        "colon": ":",
        "greater_than_sign": ">",
        "less_than_sign": "<",
        "full_stop": ".",
        "right_square_bracket": "]",
        "left_square_bracket": "[",
    }
    return names.get(key.strip(), key.strip())
