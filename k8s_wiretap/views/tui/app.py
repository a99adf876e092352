"""`k8s-wiretap replay FILE`: the Textual app over one recording.

Three workers do the reading, in threads, and post small messages: the index
(`listing/index.py`, the rows by byte offset, so the first screen shows before the file is
read), the selected exchange's detail (`listing/window.py`, on demand, after the cursor
has rested for `SETTLE` seconds), and the explanation of every row
(`listing/explaining.py`, started once the first detail is shown: until then the first
screen has the CPU). The app only wires them to the widgets: the list (`listing/`), the
tabs, the chain view (`detail/`: `c`) and an object's timeline (`o`), the filter bar, the
search and the `:` command line (`filtering/`), a walkthrough's narration
(`walkthrough/`: `w`, or `k8s-wiretap walkthrough`) and the themes (`themes.py`). A
recording still being written — a live proxy's, a playback's (`live/playback.py`),
`replay --follow` — is followed (`listing/follow.py`), the list keeping its end in view
(`live/follow_mode.py`).
"""

from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from rich.markup import escape
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel
from textual.reactive import var
from textual.timer import Timer
from textual.widgets import Footer, Static

from k8s_wiretap.capture.reader import RecordingError
from k8s_wiretap.views.tui.detail.chain_view import CHAIN_BINDINGS
from k8s_wiretap.views.tui.detail.detail_pane import DetailPane
from k8s_wiretap.views.tui.detail.event_screen import EVENT_BINDINGS
from k8s_wiretap.views.tui.detail.object_rows import Timelines
from k8s_wiretap.views.tui.detail.object_timeline import TIMELINE_BINDINGS, TimelineScreen
from k8s_wiretap.views.tui.detail.panes import TABS
from k8s_wiretap.views.tui.filtering.command_line import CommandLine
from k8s_wiretap.views.tui.filtering.commands import COMMAND_BINDINGS, Commands
from k8s_wiretap.views.tui.filtering.filter_bar import FilterBar
from k8s_wiretap.views.tui.filtering.state import FilterState
from k8s_wiretap.views.tui.help_screen import HelpScreen
from k8s_wiretap.views.tui.keymap import load_keymap
from k8s_wiretap.views.tui.listing.exchange_list import ExchangeList
from k8s_wiretap.views.tui.listing.explaining import explain_now, explain_rows
from k8s_wiretap.views.tui.listing.follow import KeepGoing
from k8s_wiretap.views.tui.listing.index import RecordingIndex
from k8s_wiretap.views.tui.listing.window import Windows
from k8s_wiretap.views.tui.live.follow_mode import FOLLOW_BINDINGS, REFRESH, FollowMode, policy
from k8s_wiretap.views.tui.live.merge import keep_going, shown
from k8s_wiretap.views.tui.live.playback import PLAYBACK_ACTIONS, PLAYBACK_BINDINGS, Player
from k8s_wiretap.views.tui.messages import (
    DetailFailed,
    DetailReady,
    Explained,
    Filtering,
    Indexed,
    IndexFailed,
    RowsSelected,
    SaveDone,
    Saving,
    Searched,
    Searching,
)
from k8s_wiretap.views.tui.selection import Check, Selection
from k8s_wiretap.views.tui.themes import DARK
from k8s_wiretap.views.tui.themes import install as install_themes
from k8s_wiretap.views.tui.walkthrough.chapters import Walkthrough, for_recording
from k8s_wiretap.views.tui.walkthrough.narration_panel import (
    WALK_ACTIONS,
    WALK_BINDINGS,
    NarrationPanel,
)
from k8s_wiretap.wire.controls import escape_controls
from k8s_wiretap.wire.words import counted

__all__ = ["ReplayApp"]

SETTLE = 0.12  # seconds the cursor rests before the selected exchange is explained
BACKGROUND = 50_000  # rows from which a new filter is checked in a worker
ON_SCREEN_EVERY = 1.0  # seconds between two looks for rows on screen without their words


class ReplayApp(App[int]):
    """A recording's exchanges, filtered, and the selected one explained."""

    CSS_PATH = "app.tcss"
    TITLE = "k8s-wiretap replay"
    filter_state: var[FilterState] = var(FilterState, init=False)  # what the list shows
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "quit", id="app.quit"),
        Binding("question_mark", "help", "help", id="app.help"),
        Binding("slash", "filter", "filter", id="app.filter"),
        Binding("n", "noise", "noise", id="app.noise"),
        Binding("o", "timeline", "object history", id="app.timeline"),
        Binding("f", "toggle_filter", "filter on/off", id="app.toggle_filter", show=False),
        Binding("escape", "leave", "back", id="app.back", show=False),
        Binding("tab", "tab(1)", "next tab", id="app.next_tab", show=False, priority=True),
        Binding("shift+tab", "tab(-1)", "prev tab", id="app.prev_tab", show=False, priority=True),
        *(
            Binding(str(n), f"show_tab('{key}')", title, id=f"app.tab_{key}", show=False)
            for n, (key, (title, _render)) in enumerate(TABS.items(), 1)
        ),
        *WALK_BINDINGS,
        *COMMAND_BINDINGS,
        *FOLLOW_BINDINGS,
        *PLAYBACK_BINDINGS,
    ]

    def __init__(
        self,
        path: Path | str,
        *,
        explain: bool = True,
        walkthrough: Walkthrough | None = None,
        follow: bool | None = False,
        writer: KeepGoing | None = None,
        playback: Player | None = None,
        label: str | None = None,
        theme: str = DARK,
    ) -> None:
        """`walkthrough`: opened at once (else `w` opens the one beside the recording);
        `follow`: read on past the end (None: if it looks written to, `listing/follow.py`);
        `writer`: what writes the file (a proxy, `playback`): followed while it says so;
        `label`: the title's, instead of "replay FILE"; `theme`: the one to start with."""
        super().__init__()
        install_themes(self, theme)
        self._user_keys = load_keymap(self.all_bindings())  # KeymapError: one line, no app
        self.source = Path(path)
        # a recording in parts (`proxy --workers`) is read from one merged file
        self._shown = shown(self.source, keep_going(follow, writer), writer)
        self.path = self._shown.path
        self.walkthrough = walkthrough or for_recording(self.source)
        self._walk_at_once = walkthrough is not None
        self.index = RecordingIndex(self.path)
        self.playback = playback
        name = escape(escape_controls(self.source.name))
        self.label = label or f"[bold]k8s-wiretap replay[/] {name}"
        self._policy = policy(self.path, self.index, follow, self._shown.writing)
        self.follow_mode = FollowMode(self.index)
        self._refresh: Timer | None = None
        self.windows = Windows(self.index)
        self.selection = Selection(self.index.rows)
        self.filtering = False  # a worker is checking the rows against a new filter
        self.filtered = 0.0  # how far it has got (0 to 1)
        self._generation = 0  # of the filter: a worker's late answer is dropped
        self.error: str | None = None  # why the recording could not be read
        self.explained_count = 0
        self.explained_all = False
        self._explain = explain
        self._explaining = False
        self._on_screen_at = -ON_SCREEN_EVERY  # when the rows on screen were last explained
        self._on_screen_busy = False
        self._stop = threading.Event()
        self._detail_lock = threading.Lock()
        self._settle: Timer | None = None
        self.timelines = Timelines(self.index, self.windows, self._detail_lock)

    def compose(self) -> ComposeResult:
        # Kept, not queried: workers' messages can still arrive while the app shuts down,
        # when the default screen and its widgets are gone and a query would raise.
        self._title_bar = Static(id="title")
        self._list = ExchangeList(self.index, id="list")
        self._detail = DetailPane(id="detail")
        self._filter_bar = FilterBar()
        self._narration = NarrationPanel(id="narration")
        self._command_line = CommandLine(id="command-line")
        self.commands = Commands(
            self,
            self.index,
            self._list,
            self._detail,
            self._command_line,
            windows=self.windows,
            lock=self._detail_lock,
            jump=lambda position: None if position is None else self.action_jump(position),
            stamp=lambda: (self.explained_count, self.index.taken),
            status=self._status,
            change=self.change_filter_state,
        )
        yield self._title_bar
        yield self._list
        yield self._narration
        yield self._detail
        yield self._command_line
        yield self._filter_bar
        yield Footer()

    @property
    def exchange_list(self) -> ExchangeList:
        return self._list

    @property
    def detail_pane(self) -> DetailPane:
        return self._detail

    def on_mount(self) -> None:
        if self._user_keys:
            self.set_keymap(self._user_keys)
        self.exchange_list.focus()
        self._title()
        self._status()
        self.scan()
        if self.playback is not None:
            self.set_interval(0.1, self._title)  # the clock
        if self._walk_at_once:
            self.action_walkthrough()

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Textual's notification, its control characters shown: a warning may quote a
        recorded value or a file's name (every screen's `notify` comes here)."""
        said, title = escape_controls(message), escape_controls(title)
        super().notify(said, title=title, severity=severity, timeout=timeout, markup=markup)

    def alert(self, message: str, title: str = "", *, resolved: bool = False) -> None:
        """What the writer of the file says went wrong (live: the proxy's "recording
        stopped: PATH: No space left on device"): a notification, and `title` (e.g.
        "recording stopped") stays in the title. `resolved`: the writer says it is over
        ("recording resumed: PATH"): a notification, and `title` leaves the title."""
        self.notify(
            escape(message),
            title="k8s-wiretap proxy",
            severity="information" if resolved else "error",
            timeout=3600,
        )
        mark = f"  [bold red]{escape(title)}[/]"
        if title and resolved and mark in self.label:
            self.label = self.label.replace(mark, "")
            self._title()
        elif title and not resolved and mark not in self.label:
            self.label += mark
            self._title()

    def exit(self, *args: Any, **kwargs: Any) -> None:
        """Quit; the workers reading the file stop at their next record."""
        self._stop.set()
        super().exit(*args, **kwargs)

    def on_unmount(self) -> None:
        self._stop.set()
        self._shown.close()

    def _widgets_gone(self) -> bool:
        """A worker's message came after the widgets went (the app is shutting down)."""
        return not self._list.is_attached

    # -- workers ----------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="index")
    def scan(self) -> None:
        def notify(rows: int) -> None:
            self.post_message(Indexed(rows))
            time.sleep(0)  # let the screen have the GIL: it is what people wait for

        try:
            self.index.scan(notify, every=200, stopped=self._stop.is_set, follow=self._policy)
        except RecordingError as error:
            self.post_message(IndexFailed(str(error)))
            return
        self.post_message(Indexed(len(self.index), done=True))

    @work(thread=True, exclusive=True, group="explain")
    def explain_all(self) -> None:
        def notify(count: int) -> None:
            self.post_message(Explained(count))

        follow = (lambda: not self.index.done) if self._policy is not None else None
        try:
            count = explain_rows(self.index, notify, self._stop.is_set, every=1000, follow=follow)
        except Exception as error:  # the list still works without summaries
            self.post_message(Explained(self.explained_count, done=True))
            self.call_from_thread(self.notify, f"explaining stopped: {error}", severity="error")
            return
        self.post_message(Explained(count, done=True))

    @work(thread=True, exclusive=True, group="on-screen")
    def explain_on_screen(self, positions: list[int]) -> None:
        """A followed recording's rows on screen that the stream has not explained yet
        (the newest, the open watches), explained now over their window."""
        try:
            with self._detail_lock:
                count = explain_now(self.index, self.windows, positions)
        except Exception:  # the stream's word still comes; the detail pane says what failed
            count = 0
        self.call_from_thread(self._explained_on_screen, count)

    def _explained_on_screen(self, count: int) -> None:
        self._on_screen_busy = False
        if count and not self._widgets_gone():
            if self.selection.update(self.index.changed()):
                self._show_selection()
            self.exchange_list.refresh()

    def _explain_on_screen(self) -> None:
        """Followed, the rows on screen get their words at once, as a replay shows them,
        not only once the stream has explained them (`listing/explaining.py`)."""
        if not (self._explain and self.follow_mode.active) or self._on_screen_busy:
            return
        now = time.monotonic()
        if now - self._on_screen_at < ON_SCREEN_EVERY:
            return
        rows = self.index.rows
        positions = [p for p in self.exchange_list.on_screen() if not rows[p].summary]
        if positions:
            self._on_screen_at, self._on_screen_busy = now, True
            self.explain_on_screen(positions)

    @work(thread=True, exclusive=True, group="detail")
    def load_detail(self, position: int, again: bool = False) -> None:
        with self._detail_lock:
            self.follow_mode.loading(position)
            if again:
                self.windows.forget()
            try:
                detail = self.windows.detail(position)
            except RecordingError as error:  # its records are gone (a truncated file)
                self.post_message(DetailFailed(position, f"cannot explain it: {error}"))
                return
            except Exception as error:  # shown in the pane: one exchange, not the app
                self.post_message(DetailFailed(position, f"cannot explain it: {error!r}"))
                return
        self.post_message(DetailReady(detail))

    # -- what the workers say ---------------------------------------------------------------
    def on_indexed(self, message: Indexed) -> None:
        if self._widgets_gone():
            return
        if self.selection.check is not None:
            self.selection.extend()
            self.exchange_list.show(self.selection.view())
        self.exchange_list.grown()
        following = self.follow_mode.active
        self.follow_mode.grown(self.exchange_list)
        if following != self.follow_mode.active:
            self.refresh_bindings()  # F
            self._start_explaining()  # followed: the rows' words as they come
        self._refresh_detail()
        self._title()
        self._explain_on_screen()
        if message.done and not self.index.rows:
            self._start_explaining()
        if message.done:
            self._find_steps()
        if message.done:
            for warning in self.index.warnings:
                self.notify(warning, severity="warning")
            if self.index.changed_file:
                self.notify(self.index.changed_file, severity="warning")
        self._status()

    def _refresh_detail(self) -> None:
        """The selected exchange grew (a followed watch): explain it again, now and then."""
        selected = self.exchange_list.selected
        if self._refresh is None and selected is not None and self.follow_mode.stale(selected):

            def again() -> None:
                self._refresh = None
                if self.exchange_list.selected == selected:
                    self.load_detail(selected, again=True)

            self._refresh = self.set_timer(REFRESH, again)

    def _start_explaining(self) -> None:
        """Once the first screen and detail are there: until then they have the CPU."""
        if self._explain and not self._explaining:
            self._explaining = True
            self.explain_all()

    def _find_steps(self) -> None:
        """An opened walkthrough's steps are found once the rows are explained."""
        ready = self.index.done and (self.explained_all or not self._explain)
        if ready and self._narration.waiting:
            self._narration.find(self.index, self.windows, self._detail_lock)

    def on_narration_panel_moved(self, message: NarrationPanel.Moved) -> None:
        step = message.step
        event = (step.cause or {}).get("event") or {}  # the event its narration names
        self.detail_pane.mark_event(step.detail.exchange.id, event.get("event"))
        self.action_jump(step.position)
        self.detail_pane.active = step.chapter.tab
        self.call_after_refresh(self.exchange_list.centre)

    def on_index_failed(self, message: IndexFailed) -> None:
        self.error = message.error
        self.exit(return_code=1)

    def on_explained(self, message: Explained) -> None:
        if self._widgets_gone():
            return
        self.explained_count = message.count
        self.explained_all = message.done
        if self.selection.update(self.index.changed()):
            self._show_selection()
        self.exchange_list.refresh()
        self._title(done=message.done)
        self._find_steps()
        self._explain_on_screen()

    def on_detail_ready(self, message: DetailReady) -> None:
        if self._widgets_gone():
            return
        if message.detail.position == self.exchange_list.selected:
            self.detail_pane.show(message.detail)
        self._start_explaining()

    def on_detail_failed(self, message: DetailFailed) -> None:
        if self._widgets_gone():
            return
        if message.position == self.exchange_list.selected:
            self.detail_pane.failed(message.error)
        self._start_explaining()

    def on_exchange_list_selected(self, message: ExchangeList.Selected) -> None:
        if self._settle is not None:
            self._settle.stop()
        self.follow_mode.moved(self.exchange_list)
        if message.position is None:
            return
        self.detail_pane.waiting()
        position = message.position
        settle = self.follow_mode.settle or SETTLE
        self._settle = self.set_timer(settle, lambda: self.load_detail(position))

    def on_exchange_list_opened(self, message: ExchangeList.Opened) -> None:
        self.detail_pane.scroller().focus()

    def on_filter_bar_applied(self, message: FilterBar.Applied) -> None:
        self.filter_state = self.filter_state.typed(message.text)

    def on_filter_bar_closed(self, message: FilterBar.Closed) -> None:
        self.exchange_list.focus()

    def on_command_line_entered(self, message: CommandLine.Entered) -> None:
        self.commands.entered(message)

    def on_command_line_closed(self, message: CommandLine.Closed) -> None:
        self.exchange_list.focus()

    # -- filtering --------------------------------------------------------------------------
    def watch_filter_state(self, old: FilterState, new: FilterState) -> None:
        """A key or a command changed the filter state: the rows are checked again if they
        are checked by something else now, a new search is run, and the bottom line says
        it."""
        if not new.shows_as(old):
            self._apply()
        if new.search is not old.search:
            self.commands.start(new.search)
        self._status()

    def change_filter_state(self, how: Callable[[FilterState], FilterState]) -> None:
        """The filter state made from the one before by `how` (the commands' search)."""
        self.filter_state = how(self.filter_state)

    def _apply(self) -> None:
        """Show the rows the filter state lets through (an index array); over
        `BACKGROUND` rows or more the rows are checked in a worker, saying how far it
        has got."""
        check = self.filter_state.check
        self.index.changed()  # what changes from now on is checked again
        self._generation += 1
        if check is None or len(self.index) < BACKGROUND:
            self.filtering = False
            self.selection.set(check)
            self._show_selection()
        else:
            self.filtering, self.filtered = True, 0.0
            self._status()
            self.select_rows(check, self._generation)

    @work(thread=True, exclusive=True, group="filter")
    def select_rows(self, check: Check, generation: int) -> None:
        def progress(done: float) -> None:
            self.post_message(Filtering(done, generation))

        selection = Selection(self.index.rows)
        selection.set(check, progress)
        self.post_message(RowsSelected(selection, generation))

    def on_filtering(self, message: Filtering) -> None:
        if message.generation == self._generation and self.filtering:
            self.filtered = message.done
            self._status()

    def on_rows_selected(self, message: RowsSelected) -> None:
        if message.generation != self._generation or self._widgets_gone():
            return  # a filter entered since, or the app is going
        self.filtering = False
        self.selection = message.selection
        self.selection.extend()
        self._show_selection()

    def on_searching(self, message: Searching) -> None:
        if not self._widgets_gone():
            self.commands.searching(message)

    def on_searched(self, message: Searched) -> None:
        if not self._widgets_gone():
            self.commands.searched(message)

    def on_saving(self, message: Saving) -> None:
        if not self._widgets_gone():
            self.commands.saving_at(message)

    def on_save_done(self, message: SaveDone) -> None:
        if not self._widgets_gone():
            self.commands.saved(message)

    def _show_selection(self) -> None:
        self.exchange_list.show(self.selection.view())
        self._status()

    def _status(self) -> None:
        self._filter_bar.status(
            self.filter_state,
            self.exchange_list.count,
            len(self.index),
            busy=self.filtered if self.filtering else None,
            search=self.commands.status(),
            notice=self._changed_file(),
        )

    def _changed_file(self) -> str:
        """A followed file truncated or replaced: said in the status line, once read."""
        if not self.index.done or self.index.changed_file is None:
            return ""
        kept = counted(len(self.index), "exchange")
        return f"{self.index.changed_file}: following stopped, {kept} kept"

    def _title(self, done: bool = False) -> None:
        index = self.index
        parts = [self.label, counted(len(index), "exchange")]
        if self.walkthrough is not None and self._narration.is_open:
            title = escape(escape_controls(self.walkthrough.title))
            parts[0] = f"[bold]k8s-wiretap walkthrough[/] {title}"
        if self.playback is not None:
            parts.append(self.playback.status())
        if self.follow_mode.active:
            parts.append(self.follow_mode.status(self.exchange_list))
        elif not index.done:
            parts.append("[yellow]reading…[/]")
        elif self._explain and not done and self.explained_count < len(index):
            parts.append(f"[dim]explained {self.explained_count:,}[/]")
        self._title_bar.update("  ·  ".join(parts))

    # -- actions ----------------------------------------------------------------------------
    @classmethod
    def all_bindings(cls) -> tuple[BindingType, ...]:
        """Every binding the app has, on any screen: what help lists and keys.yaml remaps."""
        return (
            *cls.BINDINGS,
            *ExchangeList.BINDINGS,
            *CHAIN_BINDINGS,
            *EVENT_BINDINGS,
            *TIMELINE_BINDINGS,
        )

    def action_help(self) -> None:
        shown = self.all_bindings()
        self.push_screen(HelpScreen([b for b in shown if isinstance(b, Binding)]))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The walkthrough's keys only while it is open, on the main screen, not typing;
        over another screen (the chain view, help) only quit and help."""
        if len(self.screen_stack) > 1 and action not in ("quit", "help", "command_palette"):
            return False
        if action == "walkthrough":
            return self.walkthrough is not None and not self._narration.is_open
        if action == "follow":
            return self.follow_mode.active
        if action in PLAYBACK_ACTIONS:
            return self.playback is not None
        if action in WALK_ACTIONS:
            busy = self._filter_bar.is_open or self._command_line.is_open
            return self._narration.is_open and not busy
        return True

    def action_walkthrough(self) -> None:
        if self.walkthrough is not None:
            self.screen.add_class("-walking")
            self.query_one(Footer).compact = True  # its keys too: all in 120 columns
            self.title = "k8s-wiretap walkthrough"
            self._narration.open(self.walkthrough)
            self._find_steps()
            self.refresh_bindings()
            self._title(done=self.explained_all)

    def action_walk(self, by: int) -> None:
        self._narration.step(by)

    def action_narration(self, by: int) -> None:
        self._narration.scroll_relative(y=by, animate=False)

    def action_leave_walkthrough(self) -> None:
        self.screen.remove_class("-walking")
        self.query_one(Footer).compact = False
        self.detail_pane.mark_event()
        self.title = self.TITLE
        self._narration.close()
        self.refresh_bindings()
        self._title(done=self.explained_all)

    def action_follow(self) -> None:
        self.follow_mode.resume(self.exchange_list)
        self._title()

    def action_playback(self, what: str) -> None:
        if self.playback is not None:
            self.playback.act(what)
            self._title()

    def action_filter(self) -> None:
        self._filter_bar.open(self.filter_state.text)

    def action_noise(self) -> None:
        self.filter_state = self.filter_state.noise_toggled()

    def action_toggle_filter(self) -> None:
        self.filter_state = self.filter_state.toggled()

    def action_leave(self) -> None:
        """esc: from the detail back to the list; on the list, clear the search, then the
        filter."""
        if not self.exchange_list.has_focus:
            self.exchange_list.focus()
        else:
            self.filter_state = self.filter_state.cleared()

    def action_tab(self, by: int) -> None:
        if isinstance(self.screen, HelpScreen) or self._filter_bar.is_open:
            return
        if self._command_line.is_open:
            return
        self.detail_pane.step(by)

    def action_jump(self, position: int) -> None:
        """Select the row at `position` (a hop of the causal chain, clicked); a filter that
        hides it is turned off."""
        rows = self.exchange_list
        if rows.view is not None and position not in rows.view:
            self.filter_state = self.filter_state.revealing()
        rows.cursor = position if rows.view is None else bisect.bisect_left(rows.view, position)
        rows.focus()

    def action_timeline(self) -> None:
        """`o`: the selected exchange's object, version by version (`detail/object_timeline.py`);
        dismissed with a row, it is selected."""
        position = self.exchange_list.selected
        if position is None:
            self.notify("no exchange selected", severity="warning")
            return
        jump = lambda at: None if at is None else self.action_jump(at)  # noqa: E731
        self.push_screen(TimelineScreen(self.timelines, position), jump)

    def action_open_event(self, number: int) -> None:
        """An event of the Events tab, clicked: opened whole."""
        self.commands.event(str(number))

    def action_command(self, key: str) -> None:
        """A key of `filtering/commands.py` (`:`, `s`, `<` `>`, `c`, `y`, `t`)."""
        self.commands.keys[key]()

    def action_show_tab(self, key: str) -> None:
        self.detail_pane.active = key
