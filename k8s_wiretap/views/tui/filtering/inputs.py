"""A one-line input that esc gives up: the filter bar's and the command line's."""

from __future__ import annotations

from textual.message import Message
from textual.widgets import Input

__all__ = ["ClosingInput"]


class ClosingInput(Input):
    """esc (a binding with its own id in each subclass, `action_close`) posts `Cancelled`;
    the bar holding the input closes on it."""

    class Cancelled(Message):
        """esc: what was typed is given up."""

    def action_close(self) -> None:
        self.post_message(self.Cancelled())
