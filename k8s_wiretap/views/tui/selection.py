"""Which rows the list shows: a filter and the noise switch, as a mask of one byte a row.

The mask is computed once when the filter changes, then kept up to date as rows come
(`extend`: only the new ones are checked) and as the explanation layer changes rows
(`update`: only those); the list's view is the index array of the rows it lets
through, made from the mask at C speed (`itertools.compress`).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable
from itertools import compress

from k8s_wiretap.views.tui.rows import Row

__all__ = ["Selection"]

Check = Callable[[Row], bool]


class Selection:
    def __init__(self, rows: list[Row]) -> None:
        self.rows = rows
        self.check: Check | None = None
        self.mask = bytearray()

    def set(self, check: Check | None) -> None:
        """Let through what `check` does (None: every row)."""
        self.check = check
        self.mask = bytearray()
        self.extend()

    def extend(self) -> None:
        """Check the rows that came since."""
        if self.check is None:
            return
        check, rows, start = self.check, self.rows, len(self.mask)
        self.mask += bytes(check(rows[n]) for n in range(start, len(rows)))

    def update(self, positions: Iterable[int]) -> bool:
        """Check again the rows at `positions` (changed); whether the view changed."""
        if self.check is None:
            return False
        check, rows, mask, changed = self.check, self.rows, self.mask, False
        for position in positions:
            if position < len(mask):
                shown = check(rows[position])
                changed = changed or shown != mask[position]
                mask[position] = shown
        return changed

    def view(self) -> array[int] | None:
        """The positions let through, in order; None when every row is."""
        if self.check is None:
            return None
        return array("q", compress(range(len(self.mask)), self.mask))
