"""The walkthrough's panel: the step's chapter and narration, between the list and the tabs.

`open(walkthrough)` shows it (a worker finds the chapters' exchanges once the recording is
read and explained: `steps.py`); `step(1)` and `step(-1)` move along, posting `Moved` so
that the app puts the list's cursor on the step's exchange and opens its tab; `close()`
hides it. The keys are the app's (`WALK_BINDINGS`): the list keeps the focus.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from k8s_wiretap.views.tui.escaped import escaped
from k8s_wiretap.views.tui.listing.index import RecordingIndex
from k8s_wiretap.views.tui.listing.window import Windows
from k8s_wiretap.views.tui.walkthrough.chapters import Walkthrough
from k8s_wiretap.views.tui.walkthrough.narration import narration
from k8s_wiretap.views.tui.walkthrough.steps import Step, Steps, find_steps
from k8s_wiretap.wire.controls import escape_controls

__all__ = ["WALK_BINDINGS", "NarrationPanel"]

STEPS = Binding.Group("step", compact=True)  # in the footer: ← → step
WALK_BINDINGS = [
    Binding("w", "walkthrough", "walkthrough", id="walkthrough.start"),
    Binding(
        "right,l,space", "walk(1)", "next step", id="walkthrough.next", priority=True, group=STEPS
    ),
    Binding(
        "left,h", "walk(-1)", "previous step", id="walkthrough.previous", priority=True, group=STEPS
    ),
    Binding("escape", "leave_walkthrough", "leave", id="walkthrough.leave", priority=True),
    Binding(
        "shift+down,J", "narration(1)", "scroll the narration", id="walkthrough.down", show=False
    ),
    Binding("shift+up,K", "narration(-1)", "scroll it back", id="walkthrough.up", show=False),
]
WALK_ACTIONS = frozenset({"walk", "leave_walkthrough", "narration"})


class NarrationPanel(VerticalScroll):
    DEFAULT_CSS = """
    NarrationPanel {
        display: none;
        height: auto;
        max-height: 35%;
        min-height: 4;
        border-top: solid $accent;
        padding: 0 1;
        scrollbar-size-vertical: 1;
    }
    NarrationPanel.-open {
        display: block;
    }
    """

    @dataclass
    class Moved(Message):
        """The walkthrough is at `step`: its exchange is to be shown."""

        step: Step

    @dataclass
    class Found(Message):
        steps: Steps

    @dataclass
    class Failed(Message):
        error: str

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.walkthrough: Walkthrough | None = None  # opened, its steps maybe still looked for
        self.steps: Steps | None = None
        self.at = 0
        self._text = Static(id="narration-text")

    def compose(self) -> ComposeResult:
        yield self._text

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    @property
    def waiting(self) -> bool:
        """Opened, its steps not looked for yet."""
        return self.is_open and self.steps is None and not self.is_running

    @property
    def is_running(self) -> bool:
        return any(w.group == "walkthrough" and w.is_running for w in self.workers)

    @property
    def current(self) -> Step | None:
        return self.steps.steps[self.at] if self.steps and self.steps.steps else None

    def open(self, walkthrough: Walkthrough) -> None:
        self.add_class("-open")
        if self.steps is not None and self.walkthrough == walkthrough:
            self._show()
            return
        self.walkthrough, self.steps, self.at = walkthrough, None, 0
        self._text.update(
            Text.assemble(
                (escape_controls(walkthrough.title), "bold"),
                ("\nfinding the chapters' exchanges once the recording is explained…", "dim"),
            )
        )

    def close(self) -> None:
        self.remove_class("-open")

    # -- finding the steps ------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="walkthrough")
    def find(self, index: RecordingIndex, windows: Windows, lock: threading.Lock) -> None:
        assert self.walkthrough is not None
        try:
            steps = find_steps(self.walkthrough, index, windows, lock)
        except Exception as error:  # the replay goes on without its walkthrough
            self.post_message(self.Failed(f"the walkthrough failed: {error!r}"))
            return
        self.post_message(self.Found(steps))

    def on_narration_panel_found(self, message: NarrationPanel.Found) -> None:
        self.steps, self.at = message.steps, 0
        for missing in message.steps.missing:
            self.notify(f"walkthrough: left out {missing}", severity="warning")
        if not message.steps.steps:
            self._text.update(Text("no chapter of this walkthrough is in the recording", "red"))
            return
        self._moved()

    def on_narration_panel_failed(self, message: NarrationPanel.Failed) -> None:
        self._text.update(Text(escape_controls(message.error), style="red"))

    # -- moving along -----------------------------------------------------------------------
    def step(self, by: int) -> None:
        if self.steps is None or not self.steps.steps:
            return
        at = max(0, min(self.at + by, len(self.steps.steps) - 1))
        if at == self.at:
            end = "the last step: ← goes back" if by > 0 else "the first step"
            self.notify(f"{end}, esc leaves the walkthrough", timeout=3)
            return
        self.at = at
        self._moved()

    def _moved(self) -> None:
        self._show()
        if (step := self.current) is not None:
            self.post_message(self.Moved(step))

    def _show(self) -> None:
        step, steps = self.current, self.steps
        if step is None or steps is None:
            return
        self._text.update(escaped(narration(step, self.at + 1, len(steps.steps))))
        self.scroll_home(animate=False)
