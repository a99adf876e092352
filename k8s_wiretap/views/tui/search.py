"""Free-text search over what the list shows, with next and previous match.

Unlike a filter, a search hides nothing: it moves the cursor. A row matches when the text
(case-insensitive, as typed) is in its summary, its path, its component or its
namespace/name. The matches are line numbers of the list's view (its filter applied),
found again only when the rows or the view have changed since (`Search.matches`).
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable, Sequence
from itertools import compress

from rich.markup import escape

from k8s_wiretap.views.tui.exchange_list import ExchangeList
from k8s_wiretap.views.tui.masks import Lookups, from_mask, word_mask
from k8s_wiretap.views.tui.rows import RowLike
from k8s_wiretap.views.tui.table import RowTable

__all__ = ["Finder", "Search", "matches_row", "matching_rows"]

SEARCHED = ("summary", "path", "component", "method")  # and the target


def matches_row(row: RowLike, needle: str) -> bool:
    """Whether `needle` (lower case) is in what the row shows."""
    return any(
        needle in text.lower()
        for text in (row.summary, row.path, row.component, row.target, row.method)
    )


def matching_rows(rows: RowTable, needle: str) -> bytes:
    """`matches_row` over every row of the index's columns, a byte a row (1: a match):
    each different string is looked at once."""
    lookups = Lookups(lambda text: needle in text.lower())
    count = len(rows)
    found = 0
    for name in SEARCHED:
        found |= word_mask(rows, name, lookups, 0, count)
    # the target: a resource's namespace/name (without a resource, the path: searched)
    if "/" in needle:
        target = int.from_bytes(_targets(rows, needle, count), "little")
    else:
        target = word_mask(rows, "namespace", lookups, 0, count)
        target |= word_mask(rows, "name", lookups, 0, count)
    return from_mask(found | (target & _resources(rows, count)), count)


def _resources(rows: RowTable, count: int) -> int:
    return int.from_bytes(bytes(map(bool, rows.codes["resource"][:count])), "little")


def _targets(rows: RowTable, needle: str, count: int) -> bytes:
    """Where `needle` (with a /) is in namespace/name: each pair looked at once."""
    codes, strings = rows.codes, rows.strings
    seen: dict[tuple[int, int], bool] = {}

    def test(namespace: int, name: int) -> bool:
        key = (namespace, name)
        found = seen.get(key)
        if found is None:
            text = f"{strings['namespace'][namespace]}/{strings['name'][name]}"
            found = seen[key] = namespace != 0 and name != 0 and needle in text.lower()
        return found

    pairs = zip(codes["namespace"][:count], codes["name"][:count], strict=True)
    return bytes(test(namespace, name) for namespace, name in pairs)


class Search:
    """One search's text and where it matches in a view of the rows."""

    def __init__(self, text: str = "") -> None:
        self.text = text.strip()
        self._stamp: tuple[object, ...] | None = None
        self._view: Sequence[int] | None = None
        self._lines = array("q")

    def __bool__(self) -> bool:
        return bool(self.text)

    def matches(
        self, rows: Sequence[RowLike], view: Sequence[int] | None, stamp: object = None
    ) -> array[int]:
        """The view's line numbers whose rows match (`view` None: every row). `stamp`
        says what the rows are (their count, how many are explained): the same stamp and
        view give the matches found last time."""
        key = (stamp, len(rows), len(view) if view is not None else -1)
        if key != self._stamp or view is not self._view:
            self._lines = self._find(rows, view)
            self._stamp, self._view = key, view
        return self._lines

    def _find(self, rows: Sequence[RowLike], view: Sequence[int] | None) -> array[int]:
        needle = self.text.lower()
        if not isinstance(rows, RowTable):
            positions = range(len(rows)) if view is None else view
            return array("q", (n for n, p in enumerate(positions) if matches_row(rows[p], needle)))
        found = matching_rows(rows, needle)
        if view is None:
            return array("q", compress(range(len(found)), found))
        shown = bytes(map(found.__getitem__, view))
        return array("q", compress(range(len(shown)), shown))

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

    def status(self, lines: Sequence[int], cursor: int) -> str:
        """`search "web": 2 of 5` (rich markup), for the status line."""
        if not self.text:
            return ""
        shown = escape(self.text)
        if not lines:
            return f'search [bold]"{shown}"[/]: [red]no match[/]'
        at = self.ordinal(lines, cursor)
        where = f"{at} of {len(lines):,}" if at else f"{len(lines):,} matches"
        return f'search [bold]"{shown}"[/]: {where} [dim](> <)[/]'


class Finder:
    """The search over an exchange list: set it, step the list's cursor along its matches,
    say where it is. `stamp()` changes when the rows do (the explanation fills them)."""

    def __init__(self, listing: ExchangeList, stamp: Callable[[], object]) -> None:
        self.listing, self._stamp = listing, stamp
        self.search = Search()

    def set(self, text: str) -> bool:
        """Search for `text` ("" clears it), the cursor to the first match from it on;
        whether there is one."""
        self.search = Search(text)
        return bool(self.search) and self.step(0)

    def clear(self) -> None:
        self.search = Search()

    def lines(self) -> array[int]:
        listing = self.listing
        return self.search.matches(listing.index.rows, listing.view, self._stamp())

    def step(self, by: int) -> bool:
        """The cursor to the next (1) or previous (-1) match; whether there is one."""
        if not self.search:
            return False
        to = Search.step(self.lines(), self.listing.cursor, by)
        if to is None:
            return False
        self.listing.cursor = to
        return True

    def status(self) -> str:
        return self.search.status(self.lines(), self.listing.cursor) if self.search else ""
