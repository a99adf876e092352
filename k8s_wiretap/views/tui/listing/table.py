"""The index's rows as columns: arrays of numbers, a few bytes a field, not an object a row.

A million `Row` objects took some 900 MB; here each field is one array over all the rows
(`array('d')` times, `array('H')` statuses, ...), the words are codes into interned
tables (`strings.py`), the ids one byte string (`ids.py`), and where each row's records
sit is one flat list of spans, chained row by row (a watch's events come between other
exchanges' records): about 200 bytes a row in all. `table[n]` is a `RowView`, a live
view of row n that reads as a `Row`; a filter reads the columns themselves
(`filtering/filters.py`). Rows are added and changed by the index's thread only.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator, Sequence
from typing import overload
from weakref import WeakValueDictionary

from k8s_wiretap.views.tui.ids import Ids
from k8s_wiretap.views.tui.listing.rows import RowLike
from k8s_wiretap.views.tui.strings import Strings

__all__ = ["EXPLAINED", "NOISE", "WATCH", "RowTable", "RowView"]

WATCH, EXPLAINED, NOISE = 1, 2, 4  # the bits of `flags`
WORDS = ("method", "path", "component", "verb", "resource", "namespace", "name")
NO_SPAN = -1


class RowTable(Sequence["RowView"]):
    """Every row's fields, column by column."""

    def __init__(self) -> None:
        self.ids = Ids()
        self.time, self.ended = array("d"), array("d")  # ended: NaN until the end record
        self.status = array("H")  # 0: no response (yet)
        self.size, self.events, self.version = array("q"), array("I"), array("I")
        self.flags = bytearray()
        self.strings = {name: Strings() for name in (*WORDS, "summary", "error")}
        self.codes = {name: array("I") for name in self.strings}
        self._words = [(name, self.codes[name], self.strings[name].code) for name in WORDS]
        # spans: offset and length of each record, and the next span of its row
        self.offsets, self.lengths, self.next = array("q"), array("I"), array("i")
        self.first, self.last = array("i"), array("i")  # each row's first and last span
        self._views: WeakValueDictionary[int, RowView] = WeakValueDictionary()

    def __len__(self) -> int:
        return len(self.time)

    @overload
    def __getitem__(self, position: int) -> RowView: ...
    @overload
    def __getitem__(self, position: slice) -> list[RowView]: ...
    def __getitem__(self, position: int | slice) -> RowView | list[RowView]:
        if isinstance(position, slice):
            return [RowView(self, n) for n in range(len(self))[position]]
        if position < 0:
            position += len(self)
        if not 0 <= position < len(self):
            raise IndexError("row index out of range")
        view = self._views.get(position)
        if view is None:  # one view of a row at a time: `rows[n] is rows[n]`, as with objects
            view = self._views[position] = RowView(self, position)
        return view

    def __iter__(self) -> Iterator[RowView]:
        return (RowView(self, n) for n in range(len(self)))

    # -- adding and changing rows -----------------------------------------------------------
    def append(self, exchange_id: str, time: float, words: dict[str, str], watch: bool) -> int:
        """A new row (its request's fields); its position. The time comes last: its
        column's length is the table's, so another thread sees a row once it is whole."""
        for name, codes, code in self._words:
            codes.append(code(words[name]))
        for name in ("summary", "error"):
            self.codes[name].append(0)
        self.ended.append(math.nan)
        self.status.append(0)
        self.size.append(0)
        self.events.append(0)
        self.version.append(0)
        self.flags.append(WATCH if watch else 0)
        self.first.append(NO_SPAN)
        self.last.append(NO_SPAN)
        position = self.ids.add(exchange_id)
        self.time.append(time)  # the length of the table: last
        return position

    def span(self, position: int, offset: int, length: int) -> None:
        """Row `position` has a record at `offset`, `length` bytes long."""
        at = len(self.offsets)
        self.offsets.append(offset)
        self.lengths.append(length)
        self.next.append(NO_SPAN)
        if self.last[position] == NO_SPAN:
            self.first[position] = at
        else:
            self.next[self.last[position]] = at
        self.last[position] = at

    def spans(self, position: int) -> array[int]:
        """Offset and length of each of row `position`'s records, flat, in file order."""
        found = array("q")
        offsets, lengths, following = self.offsets, self.lengths, self.next
        at = self.first[position]
        while at != NO_SPAN:
            found.append(offsets[at])
            found.append(lengths[at])
            at = following[at]
        return found

    def set_word(self, name: str, position: int, text: str) -> None:
        self.codes[name][position] = self.strings[name].code(text)

    def word(self, name: str, position: int) -> str:
        return self.strings[name].values[self.codes[name][position]]

    def explain(self, position: int, component: str, summary: str, noise: bool) -> None:
        """The explanation's word on row `position`."""
        self.set_word("component", position, component)
        self.set_word("summary", position, summary)
        flags = self.flags[position] & WATCH
        self.flags[position] = flags | EXPLAINED | (NOISE if noise else 0)
        self.version[position] += 1


class RowView(RowLike):
    """Row `position` of a table, read live: what a `Row` has, from the columns."""

    __slots__ = ("__weakref__", "_table", "position")

    def __init__(self, table: RowTable, position: int) -> None:
        self._table, self.position = table, position

    def __eq__(self, other: object) -> bool:
        """The same row of the same table (as a `Row` is equal only to itself)."""
        if not isinstance(other, RowView):
            return NotImplemented
        return self._table is other._table and self.position == other.position

    def __hash__(self) -> int:
        return hash((id(self._table), self.position))

    def __repr__(self) -> str:
        return f"RowView({self.position}, {self.id!r}, {self.method} {self.path})"

    @property
    def id(self) -> str:
        return self._table.ids.id_of(self.position)

    @property
    def time(self) -> float:
        return self._table.time[self.position]

    @property
    def method(self) -> str:
        return self._table.word("method", self.position)

    @property
    def path(self) -> str:
        return self._table.word("path", self.position)

    @property
    def component(self) -> str:
        return self._table.word("component", self.position)

    @property
    def verb(self) -> str:
        return self._table.word("verb", self.position)

    @property
    def resource(self) -> str:
        return self._table.word("resource", self.position)

    @property
    def namespace(self) -> str:
        return self._table.word("namespace", self.position)

    @property
    def name(self) -> str:
        return self._table.word("name", self.position)

    @property
    def status(self) -> int | None:
        return self._table.status[self.position] or None

    @property
    def ended(self) -> float | None:
        ended = self._table.ended[self.position]
        return None if math.isnan(ended) else ended

    @property
    def size(self) -> int:
        return self._table.size[self.position]

    @property
    def events(self) -> int:
        return self._table.events[self.position]

    @property
    def error(self) -> str:
        return self._table.word("error", self.position)

    @property
    def watch(self) -> bool:
        return bool(self._table.flags[self.position] & WATCH)

    @property
    def summary(self) -> str:
        return self._table.word("summary", self.position)

    @property
    def noise(self) -> bool | None:
        flags = self._table.flags[self.position]
        return bool(flags & NOISE) if flags & EXPLAINED else None

    @property
    def version(self) -> int:
        return self._table.version[self.position]

    @property
    def spans(self) -> array[int]:
        return self._table.spans(self.position)
