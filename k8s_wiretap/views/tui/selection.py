"""Which rows the list shows: a filter and the noise switch, as a mask of one byte a row.

The mask is computed once when the filter changes, then kept up to date as rows come
(`extend`: only the new ones are checked) and as the explanation layer changes rows
(`update`: only those); the list's view is the index array of the rows it lets
through, made from the mask at C speed (`itertools.compress`). Over the index's columns
(`listing/table.py`) a check that has a `mask` (a filter, `filtering/filters.py`) is
checked `CHUNK` rows at a time at C speed, saying how far it has got (`progress`); any
other check, or rows, one by one.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Sequence
from itertools import compress
from typing import Protocol, runtime_checkable

from k8s_wiretap.views.tui.listing.masks import from_mask
from k8s_wiretap.views.tui.listing.rows import Row
from k8s_wiretap.views.tui.listing.table import RowTable

__all__ = ["CHUNK", "Check", "ColumnCheck", "Progress", "Selection"]

Check = Callable[[Row], bool]
Progress = Callable[[float], None]
CHUNK = 65_536  # rows checked at once over columns


@runtime_checkable
class ColumnCheck(Protocol):
    """A check that also reads the index's columns: a byte a row, as a mask (`listing/masks.py`)."""

    def __call__(self, row: Row) -> bool: ...

    def mask(self, rows: RowTable, start: int, stop: int) -> int: ...


class Selection:
    def __init__(self, rows: Sequence[Row]) -> None:
        self.rows = rows
        self.check: Check | None = None
        self.mask = bytearray()

    def set(self, check: Check | None, progress: Progress | None = None) -> None:
        """Let through what `check` does (None: every row); `progress(fraction done)`
        after each chunk of rows."""
        self.check = check
        self.mask = bytearray()
        self.extend(progress)

    def extend(self, progress: Progress | None = None) -> None:
        """Check the rows that came since."""
        check, rows, start = self.check, self.rows, len(self.mask)
        if check is None:
            return
        stop = len(rows)
        if not self._columns(check):
            self.mask += bytes(check(rows[n]) for n in range(start, stop))
            return
        for low in range(start, stop, CHUNK):
            self.mask += self._checked(low, min(low + CHUNK, stop))
            if progress is not None:
                progress((min(low + CHUNK, stop) - start) / (stop - start))

    def update(self, positions: Iterable[int]) -> bool:
        """Check again the rows at `positions` (changed); whether the view changed."""
        check, mask = self.check, self.mask
        if check is None:
            return False
        positions = [p for p in positions if p < len(mask)]
        if not positions:
            return False
        low, high = min(positions), max(positions) + 1
        if self._columns(check) and high - low <= 4 * len(positions) + 1000:
            # the explanation goes in order: check the run of rows they are in, at once
            again = self._checked(low, high)
            changed = again != mask[low:high]
            mask[low:high] = again
            return changed
        changed = False
        for position in positions:
            shown = check(self.rows[position])
            changed = changed or shown != mask[position]
            mask[position] = shown
        return changed

    def view(self) -> array[int] | None:
        """The positions let through, in order; None when every row is."""
        if self.check is None:
            return None
        return array("q", compress(range(len(self.mask)), self.mask))

    def _columns(self, check: Check) -> bool:
        return isinstance(check, ColumnCheck) and isinstance(self.rows, RowTable)

    def _checked(self, start: int, stop: int) -> bytes:
        assert isinstance(self.check, ColumnCheck) and isinstance(self.rows, RowTable)
        return from_mask(self.check.mask(self.rows, start, stop), stop - start)
