"""What the `:` commands and the keys beside them do (`command_line.py` reads them).

`Commands` holds the app's parts they act on — the index, the list, the detail pane, the
search (`search.py`) — and runs a typed line or a key: filter, search and its next and
previous match, save (in a worker: `save.py`), copy a body to the clipboard (Textual's
`App.copy_to_clipboard`, OSC 52), the theme (`themes.py`), the chain view
(`detail/chain_view.py`), help. Each says what it did, or why not, in one line (a notification;
`said` keeps the last, for tests).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from rich.markup import escape
from textual.app import App
from textual.binding import Binding, BindingType
from textual.worker import get_current_worker

from k8s_wiretap.views.tui.detail.chain_view import ChainScreen
from k8s_wiretap.views.tui.detail.detail_pane import DetailPane
from k8s_wiretap.views.tui.detail.event_screen import EventScreen
from k8s_wiretap.views.tui.detail.panes import body_text
from k8s_wiretap.views.tui.filtering.command_line import Command, CommandError, CommandLine, parse
from k8s_wiretap.views.tui.filtering.filter_bar import FilterBar
from k8s_wiretap.views.tui.filtering.search import Finder, Search
from k8s_wiretap.views.tui.filtering.state import FilterState
from k8s_wiretap.views.tui.listing.exchange_list import ExchangeList
from k8s_wiretap.views.tui.listing.index import RecordingIndex
from k8s_wiretap.views.tui.listing.window import Windows
from k8s_wiretap.views.tui.messages import SaveDone, Saving, Searched, Searching
from k8s_wiretap.views.tui.save import SaveError, save
from k8s_wiretap.views.tui.themes import THEMES, theme_name, toggled
from k8s_wiretap.wire.words import counted

__all__ = ["COMMAND_BINDINGS", "Commands"]

# each runs `app.command(KEY)`, KEY one of `Commands.keys`
COMMAND_BINDINGS: list[BindingType] = [
    Binding("colon", "command('line')", "command", id="app.command"),
    Binding("s", "command('search')", "search", id="app.search"),
    Binding("greater_than_sign", "command('next')", "next match", id="app.next_match", show=False),
    Binding(
        "less_than_sign", "command('previous')", "previous match", id="app.prev_match", show=False
    ),
    Binding("c", "command('chain')", "chain", id="app.chain"),
    Binding("u", "command('cause')", "up the chain", id="app.cause", show=False),
    Binding("U", "command('root')", "the chain's root", id="app.chain_root", show=False),
    Binding("y", "command('copy')", "copy body", id="app.copy", show=False),
    Binding("t", "command('theme')", "light/dark", id="app.theme", show=False),
]


class Commands:
    def __init__(
        self,
        app: App[Any],
        index: RecordingIndex,
        listing: ExchangeList,
        detail: DetailPane,
        line: CommandLine,
        *,
        windows: Windows,
        lock: threading.Lock,
        jump: Callable[[int | None], None],
        stamp: Callable[[], object],
        status: Callable[[], None],
        change: Callable[[Callable[[FilterState], FilterState]], None],
    ) -> None:
        """The chain view explains with `windows` (holding `lock`) and is dismissed to
        `jump`; `stamp()` changes when rows do (for the search); `status()` says it;
        `change(how)` makes the app's filter state `how(state)` (a search typed)."""
        self.app, self.index, self.listing, self.detail = app, index, listing, detail
        self._chain = (windows, lock, jump)
        self._status = status
        self._change = change
        self.finder = Finder(app, listing, stamp)
        self.said = ""
        self.saving: Saving | None = None  # a save going on: how far it has got
        self.keys: dict[str, Callable[[], None]] = {
            "line": lambda: line.open("command"),
            "search": lambda: line.open("search", self.finder.search.text),
            "next": lambda: self.find(1),
            "previous": lambda: self.find(-1),
            "chain": self.chain,
            "cause": lambda: self.cause(root=False),
            "root": lambda: self.cause(root=True),
            "copy": lambda: self.copy(""),
            "theme": lambda: self.theme(""),
        }

    # -- what was typed ---------------------------------------------------------------------
    def entered(self, message: CommandLine.Entered) -> None:
        if message.mode == "search":
            self.search(message.text)
        else:
            self.run(message.text)

    def run(self, text: str) -> None:
        try:
            command = parse(text)
        except CommandError as error:
            self._say(str(error), error=True)
            return
        run: dict[str, Callable[[Command], object]] = {
            "filter": lambda c: self.app.post_message(FilterBar.Applied(c.argument)),
            "search": lambda c: self.search(c.argument),
            "save": self.save,
            "save-filtered": self.save,
            "copy": lambda c: self.copy(c.argument),
            "theme": lambda c: self.theme(c.argument),
            "chain": lambda _c: self.chain(),
            "event": lambda c: self.event(c.argument),
            "help": lambda _c: self.app.call_later(self.app.run_action, "help"),
            "quit": lambda _c: self.app.exit(),
        }
        run[command.name](command)

    def _say(self, text: str, *, error: bool = False) -> None:
        self.said = text
        self.app.notify(text, severity="error" if error else "information", markup=False)

    # -- search -----------------------------------------------------------------------------
    def search(self, text: str) -> None:
        """Search for `text`: a new search in the filter state, which the app runs
        (`start`)."""
        self._change(lambda state: state.searching(text))

    def start(self, search: Search) -> None:
        """Run the filter state's new search (a worker's answer comes to `searched`)."""
        found = self.finder.set(search)
        if search and found is False:
            self._nothing()
        self._changed()

    def find(self, by: int) -> None:
        """`>` `<`: while the matches are being found, made when they are."""
        if not self.finder.search:
            self._say("no search (s, or :search TEXT)", error=True)
        elif self.finder.step(by) is False:
            self._nothing()
        self._changed()

    def searching(self, message: Searching) -> None:
        self.finder.searching_at(message)
        self._changed()

    def searched(self, message: Searched) -> None:
        if self.finder.found(message) is False:
            self._nothing()
        self._changed()

    def _nothing(self) -> None:
        self._say(f"search: nothing matches {self.finder.search.text!r}", error=True)

    def _changed(self) -> None:
        self._status()  # it says the search

    # -- save -------------------------------------------------------------------------------
    def save(self, command: Command) -> None:
        """In a worker, one at a time, saying how far it has got (`saving`, `saved`)."""
        if self.saving is not None:
            self._say(f"cannot save: still saving {self.saving.path}", error=True)
            return
        path = Path(command.argument).expanduser()
        view = self.listing.view
        positions = None if command.name == "save" or view is None else list(view)
        self.saving = Saving(str(path), "writing", 0.0)
        self._status()
        work = partial(self._save, positions, path, command.force)
        self.app.run_worker(work, thread=True, group="save")

    def _save(self, positions: list[int] | None, path: Path, force: bool) -> None:
        worker = get_current_worker()

        def progress(stage: str, done: float) -> None:
            self.app.post_message(Saving(str(path), stage, done))

        try:
            saved = save(
                self.index,
                positions,
                path,
                force=force,
                progress=progress,
                stopped=lambda: worker.is_cancelled,
            )
        except SaveError as error:
            self.app.post_message(SaveDone(str(error), error=True))
        except Exception as error:  # one line, and the next save can start
            self.app.post_message(SaveDone(f"cannot save to {path}: {error!r}", error=True))
        else:
            self.app.post_message(SaveDone(str(saved)))

    def saving_at(self, message: Saving) -> None:
        if self.saving is not None:
            self.saving = message
            self._status()

    def saved(self, message: SaveDone) -> None:
        self.saving = None
        self._say(message.said, error=message.error)
        self._status()

    def status(self) -> str:
        """What the status line says of the search and of a save going on (rich markup)."""
        parts = [self.finder.status()]
        if self.saving is not None:
            saving = self.saving  # the figure first: a narrow line cuts the name
            doing = f"{saving.done:.0%}" if saving.stage == "writing" else f"({saving.stage})"
            parts.append(f"[yellow]saving {doing}: {escape(Path(saving.path).name)}[/]")
        return "  ·  ".join(part for part in parts if part)

    # -- copy -------------------------------------------------------------------------------
    def copy(self, which: str) -> None:
        """The request or response body, as shown (`which` "": the tab's, else the
        response's)."""
        detail = self.detail.detail
        if detail is None or detail.position != self.listing.selected:
            self._say("nothing to copy: the exchange is still being explained", error=True)
            return
        which = which or ("request" if self.detail.active == "request" else "response")
        fmt = detail.record.get(f"{which}_format")
        if fmt in (None, "empty"):
            self._say(f"nothing to copy: the {which} has no body", error=True)
            return
        text = body_text(detail.record.get(f"{which}_body"))
        self.app.copy_to_clipboard(text)
        lines = text.count("\n") + 1
        shown = counted(lines, "line")
        self._say(f"copied the {which} body ({fmt}, as shown: {shown}) to the clipboard")

    # -- theme, chain -----------------------------------------------------------------------
    def theme(self, word: str) -> None:
        name = theme_name(word) if word else toggled(self.app.theme)
        if name is None or name not in THEMES:
            self._say(f"no theme {word!r}: light or dark", error=True)
            return
        self.app.theme = name
        self._say(f"theme: {name}")

    def event(self, number: str) -> None:
        """Open the selected watch's event `number` (the Events tab's #)."""
        detail = self.detail.detail
        if detail is None or detail.position != self.listing.selected:
            self._say("no event to open: the exchange is still being explained", error=True)
            return
        if not detail.events:
            self._say("no events: the selected exchange is not a watch", error=True)
            return
        if not number.isdigit() or int(number) >= len(detail.events):
            self._say(f"event {number!r}: 0 to {len(detail.events) - 1}, please", error=True)
            return
        self.app.push_screen(EventScreen(detail.events, int(number)))

    def cause(self, *, root: bool) -> None:
        """The Explain tab's causal chain from the keys, as a click on its hops: select the
        exchange that caused the selected one (the hop above it), or the chain's root."""
        detail = self.detail.detail
        if detail is None or detail.position != self.listing.selected:
            self._say("no chain yet: the exchange is still being explained", error=True)
            return
        ids = [hop.id for hop in detail.chain]
        here = ids.index(detail.exchange.id) if detail.exchange.id in ids else 0
        above = [hop.position for hop in detail.chain[:here] if hop.position is not None]
        if not above:
            self._say("nothing in the recording caused it: its chain begins here", error=True)
            return
        self._chain[2](above[0] if root else above[-1])

    def chain(self) -> None:
        position = self.listing.selected
        if position is None:
            self._say("no exchange selected", error=True)
            return
        windows, lock, jump = self._chain
        self.app.push_screen(ChainScreen(self.index, windows, lock, position), jump)
