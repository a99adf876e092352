"""Free-text search over what the list shows, with next and previous match.

Unlike a filter, a search hides nothing: it moves the cursor. A row matches when the text
(case-insensitive, as typed) is in its summary, its path, its component or its
namespace/name. `Search` finds which rows match (a byte a row, over the index's columns
`CHUNK` rows at a time, saying how far it has got) and turns that into line numbers of
the list's view (its filter applied). `Finder` runs it for the list: at once under
`BACKGROUND` rows, else in a worker (as a filter is), a new search cancelling the one
still running; the moves asked for meanwhile (the first match, `>` `<`) are made when the
matches come. Rows that change later (more read, more explained) are looked at again.
"""

from __future__ import annotations

import bisect
import time
from array import array
from collections.abc import Callable, Sequence
from functools import partial
from itertools import compress, islice
from typing import Any

from rich.markup import escape
from textual.app import App
from textual.worker import get_current_worker

from k8s_wiretap.views.tui.listing.exchange_list import ExchangeList
from k8s_wiretap.views.tui.listing.masks import Lookups, from_mask, word_mask
from k8s_wiretap.views.tui.listing.rows import Row
from k8s_wiretap.views.tui.listing.table import RowTable
from k8s_wiretap.views.tui.messages import Searched, Searching
from k8s_wiretap.views.tui.selection import CHUNK
from k8s_wiretap.wire.words import counted

__all__ = ["BACKGROUND", "Finder", "Search", "matches_row", "matching_rows"]

SEARCHED = ("summary", "path", "component", "method")  # and the target
BACKGROUND = 50_000  # rows from which a search runs in a worker
AGAIN = 1.0  # seconds between a worker's answer and its next look at rows changed since

Progress = Callable[[float], None]
Stopped = Callable[[], bool]


def matches_row(row: Row, needle: str) -> bool:
    """Whether `needle` (lower case) is in what the row shows."""
    return any(
        needle in text.lower()
        for text in (row.summary, row.path, row.component, row.target, row.method)
    )


def matching_rows(
    rows: RowTable,
    needle: str,
    progress: Progress | None = None,
    stopped: Stopped | None = None,
    chunk: int = CHUNK,
) -> bytes | None:
    """`matches_row` over every row of the index's columns, a byte a row (1: a match):
    each different string is looked at once. `chunk` rows at a time, then
    `progress(fraction done)`; None if `stopped()` says to give up."""
    lookups = Lookups(lambda text: needle in text.lower())
    pairs: dict[tuple[int, int], bool] = {}
    count = len(rows)
    found = bytearray()
    for low in range(0, count, chunk):
        if stopped is not None and stopped():
            return None
        high = min(low + chunk, count)
        found += _matching(rows, needle, lookups, pairs, low, high)
        if progress is not None:
            progress(high / count)
    return bytes(found)


def _matching(
    rows: RowTable,
    needle: str,
    lookups: Lookups,
    pairs: dict[tuple[int, int], bool],
    low: int,
    high: int,
) -> bytes:
    found = 0
    for name in SEARCHED:
        found |= word_mask(rows, name, lookups, low, high)
    # the target: a resource's namespace/name (without a resource, the path: searched)
    if "/" in needle:
        target = int.from_bytes(_targets(rows, needle, pairs, low, high), "little")
    else:
        target = word_mask(rows, "namespace", lookups, low, high)
        target |= word_mask(rows, "name", lookups, low, high)
    return from_mask(found | (target & _resources(rows, low, high)), high - low)


def _resources(rows: RowTable, low: int, high: int) -> int:
    return int.from_bytes(bytes(map(bool, rows.codes["resource"][low:high])), "little")


def _targets(
    rows: RowTable, needle: str, seen: dict[tuple[int, int], bool], low: int, high: int
) -> bytes:
    """Where `needle` (with a /) is in namespace/name: each pair looked at once."""
    codes, strings = rows.codes, rows.strings

    def test(namespace: int, name: int) -> bool:
        key = (namespace, name)
        found = seen.get(key)
        if found is None:
            text = f"{strings['namespace'][namespace]}/{strings['name'][name]}"
            found = seen[key] = namespace != 0 and name != 0 and needle in text.lower()
        return found

    pairs = zip(codes["namespace"][low:high], codes["name"][low:high], strict=True)
    return bytes(test(namespace, name) for namespace, name in pairs)


class Search:
    """One search's text: which rows match, and where that is in a view of the rows."""

    def __init__(self, text: str = "") -> None:
        self.text = text.strip()
        self._stamp: tuple[object, ...] | None = None
        self._view: Sequence[int] | None = None
        self._lines = array("q")

    def __bool__(self) -> bool:
        return bool(self.text)

    def found(
        self,
        rows: Sequence[Row],
        progress: Progress | None = None,
        stopped: Stopped | None = None,
    ) -> bytes | None:
        """A byte a row, 1 where it matches (None: `stopped`)."""
        needle = self.text.lower()
        if isinstance(rows, RowTable):
            return matching_rows(rows, needle, progress, stopped)
        return bytes(matches_row(row, needle) for row in rows)

    @staticmethod
    def lines(found: bytes, view: Sequence[int] | None) -> array[int]:
        """The line numbers of `view` (None: every row) whose rows `found` says match
        (rows past its end: not yet looked at)."""
        if view is None:
            return array("q", compress(range(len(found)), found))
        known = islice(view, bisect.bisect_left(view, len(found)))
        shown = bytes(map(found.__getitem__, known))
        return array("q", compress(range(len(shown)), shown))

    def matches(
        self, rows: Sequence[Row], view: Sequence[int] | None, stamp: object = None
    ) -> array[int]:
        """The view's line numbers whose rows match (`view` None: every row), found now.
        `stamp` says what the rows are (their count, how many are explained): the same
        stamp and view give the matches found last time."""
        key = (stamp, len(rows), len(view) if view is not None else -1)
        if key != self._stamp or view is not self._view:
            self._lines = self.lines(self.found(rows) or b"", view)
            self._stamp, self._view = key, view
        return self._lines

    @staticmethod
    def step(lines: Sequence[int], cursor: int, by: int) -> int | None:
        """The match after (`by` 1) or before (-1) line `cursor`, wrapping around; the
        first at or after the cursor for `by` 0. None when nothing matches."""
        if not lines:
            return None
        if by >= 0:
            at = bisect.bisect_right(lines, cursor) if by else bisect.bisect_left(lines, cursor)
            return lines[at % len(lines)]
        at = bisect.bisect_left(lines, cursor) - 1
        return lines[at % len(lines)]

    @staticmethod
    def ordinal(lines: Sequence[int], cursor: int) -> int | None:
        """Which match (1-based) the cursor is on, or None."""
        at = bisect.bisect_left(lines, cursor)
        return at + 1 if at < len(lines) and lines[at] == cursor else None

    def status(self, lines: Sequence[int] | None, cursor: int, busy: str = "") -> str:
        """`search "web": 2 of 5` (rich markup), for the status line; `lines` None: the
        matches are being found (`busy` says how far)."""
        if not self.text:
            return ""
        shown = escape(self.text)
        if lines is None:
            return f'search [bold]"{shown}"[/]: [yellow]searching {busy}[/]'
        if not lines:
            return f'search [bold]"{shown}"[/]: [red]no match[/]'
        at = self.ordinal(lines, cursor)
        where = f"{at} of {len(lines):,}" if at else counted(len(lines), "match", "matches")
        return f'search [bold]"{shown}"[/]: {where} [dim](> <)[/]'


class Finder:
    """The search over an exchange list: set it, step the list's cursor along its matches,
    say where it is. `stamp()` changes when the rows do (read, explained): they are
    looked at again. Over `background` rows or more, in a worker of `app`'s that posts
    `Searching` and `Searched` (given back to `searching` and `found`)."""

    def __init__(
        self,
        app: App[Any],
        listing: ExchangeList,
        stamp: Callable[[], object],
        background: int | None = None,
    ) -> None:
        self.app, self.listing, self._stamp = app, listing, stamp
        self.background = BACKGROUND if background is None else background
        self.search = Search()
        self.progress: float | None = None  # how far a worker has got (None: no worker)
        self._found: bytes | None = None  # a byte a row: a match
        self._found_at: object = None  # the stamp it was found at
        self._lines = array("q")
        self._lines_of: tuple[bytes | None, Sequence[int] | None] = (None, None)
        self._moves: list[int] = []  # asked for before the matches came
        self._generation = 0  # of the search: a worker's late answer is dropped
        self._answered = 0.0  # when a worker last answered (time.monotonic)

    def set(self, search: Search) -> bool | None:
        """Run `search` (no text: none), the cursor to the first match from it on; whether
        there is one (None: a worker is looking, the cursor moves when it has)."""
        self.search = search
        self._generation += 1
        self._found = self._found_at = self.progress = None
        self._moves = [0] if self.search else []
        if not self.search:
            return False
        return self._settle()

    @property
    def searching(self) -> bool:
        """A search whose first matches are still being found."""
        return bool(self.search) and self._found is None

    def lines(self) -> array[int] | None:
        """The list's lines that match (None: not found yet); rows changed since the
        matches were found are looked at again (now, or by a worker)."""
        self._look()
        if self._found is None:
            return None
        view = self.listing.view
        if self._lines_of[0] is not self._found or self._lines_of[1] is not view:
            self._lines = Search.lines(self._found, view)
            self._lines_of = (self._found, view)
        return self._lines

    def step(self, by: int) -> bool | None:
        """The cursor to the next (1) or previous (-1) match; whether there is one (None:
        the matches are being found, the move is made when they are)."""
        if not self.search:
            return False
        lines = self.lines()
        if lines is None:
            self._moves.append(by)
            return None
        return self._move(lines, by)

    def status(self) -> str:
        if not self.search:
            return ""
        busy = f"{len(self.listing.index):,}… {self.progress or 0:.0%}"
        return self.search.status(self.lines(), self.listing.cursor, busy)

    # -- the worker -------------------------------------------------------------------------
    def searching_at(self, message: Searching) -> None:
        if message.generation == self._generation and self.progress is not None:
            self.progress = message.done

    def found(self, message: Searched) -> bool | None:
        """A worker's answer: the moves asked for meanwhile are made; whether the last
        found a match (None: an answer to an older search, or no move asked for)."""
        if message.generation != self._generation:
            return None
        self.progress, self._answered = None, time.monotonic()
        self._found, self._found_at = message.found, message.stamp
        return self._settle()

    def _settle(self) -> bool | None:
        lines = self.lines()
        if lines is None or not self._moves:
            return None
        moves, self._moves = self._moves, []
        for by in moves:
            self._move(lines, by)
        return bool(lines)

    def _move(self, lines: Sequence[int], by: int) -> bool:
        to = Search.step(lines, self.listing.cursor, by)
        if to is None:
            return False
        self.listing.cursor = to
        return True

    def _look(self) -> None:
        """Find the matches if the rows changed since they were found: at once under
        `background` rows; else in a worker, one at a time, and not again within `AGAIN`
        seconds of its last answer."""
        stamp = self._stamp()
        if not self.search or self.progress is not None or stamp == self._found_at:
            return
        rows = self.listing.index.rows
        if len(rows) < self.background:
            self._found, self._found_at = self.search.found(rows), stamp
            return
        if self._found is not None and time.monotonic() - self._answered < AGAIN:
            return
        self.progress = 0.0
        work = partial(self._work, self.search, rows, stamp, self._generation)
        self.app.run_worker(work, thread=True, group="search", exclusive=True)

    def _work(self, search: Search, rows: Sequence[Row], stamp: object, generation: int) -> None:
        worker = get_current_worker()

        def stopped() -> bool:
            return worker.is_cancelled or generation != self._generation

        def progress(done: float) -> None:
            self.app.post_message(Searching(done, generation))

        found = search.found(rows, progress, stopped)
        if found is not None:
            self.app.post_message(Searched(found, stamp, generation))
