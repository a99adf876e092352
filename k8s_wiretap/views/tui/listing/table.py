"""The index's rows as columns: arrays of numbers, a few bytes a field, not an object a row.

A million `Row` objects took some 900 MB; here each field of `Row` (`rows.py`) is one
column over all the rows, kept as its annotation says: words as codes into interned
tables (`strings.py`), numbers in arrays (`array('d')` times, `array('H')` statuses, ...),
flags as bits, the ids one byte string (`ids.py`); where each row's records sit is one
flat list of spans, chained row by row (a watch's events come between other exchanges'
records): about 200 bytes a row in all. `table[n]` makes row n's `Row`, a value; a filter
reads the columns themselves (`masks.py`). Rows are added and changed by the index's
thread only.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast, overload

from k8s_wiretap.views.tui.ids import Ids
from k8s_wiretap.views.tui.listing.rows import Fact, Flag, Id, Kept, Number, Row, Word, kept
from k8s_wiretap.views.tui.strings import Strings

__all__ = ["RowTable"]

NO_SPAN = -1


class _Words:
    """A `Word` field: a code a row into its strings."""

    def __init__(self) -> None:
        self.strings = Strings()
        self.codes = array("I")

    def grow(self, value: Fact) -> None:
        self.codes.append(self.strings.code(str(value or "")))

    def set(self, position: int, value: Fact) -> None:
        self.codes[position] = self.strings.code(str(value or ""))

    def get(self, position: int) -> str:
        return self.strings.values[self.codes[position]]


class _Numbers:
    """A `Number` field: an array; `none` stands for None."""

    def __init__(self, kept: Number) -> None:
        self.values: array[Any] = array(kept.code)
        self.none = kept.none
        self._nan = kept.none is not None and math.isnan(kept.none)

    def _stored(self, value: Fact) -> float:
        if value is None:
            return 0 if self.none is None else self.none
        assert not isinstance(value, str), "a number"
        return value

    def grow(self, value: Fact) -> None:
        self.values.append(self._stored(value))

    def set(self, position: int, value: Fact) -> None:
        self.values[position] = self._stored(value)

    def get(self, position: int) -> float | None:
        value: float = self.values[position]
        if self._nan:
            return None if math.isnan(value) else value
        return None if value == self.none else value


class _Flag:
    """A `Flag` field: a bit of the rows' `flags` (None while its `known` bit is clear)."""

    def __init__(self, flags: bytearray, kept: Flag) -> None:
        self.flags, self.bit, self.known = flags, kept.bit, kept.known

    def grow(self, value: Fact) -> None:
        self.set(len(self.flags) - 1, value)

    def set(self, position: int, value: Fact) -> None:
        flags = self.flags[position] & ~(self.bit | self.known)
        if value is not None or not self.known:
            flags |= self.known | (self.bit if value else 0)
        self.flags[position] = flags

    def get(self, position: int) -> bool | None:
        flags = self.flags[position]
        return None if self.known and not flags & self.known else bool(flags & self.bit)


_Store = _Words | _Numbers | _Flag


class RowTable(Sequence[Row]):
    """Every row's fields, column by column."""

    def __init__(self) -> None:
        self.ids = Ids()
        self.flags = bytearray()
        self.stores: dict[str, _Store] = {
            name: self._store(how) for name, how in kept().items() if not isinstance(how, Id)
        }
        words = {n: s for n, s in self.stores.items() if isinstance(s, _Words)}
        self.strings = {name: store.strings for name, store in words.items()}
        self.codes = {name: store.codes for name, store in words.items()}
        numbers = {n: s.values for n, s in self.stores.items() if isinstance(s, _Numbers)}
        # the columns the index and the filters read by name
        self.time: array[float] = numbers["time"]
        self.ended: array[float] = numbers["ended"]  # NaN until the end record
        self.status: array[int] = numbers["status"]  # 0: no response (yet)
        self.size: array[int] = numbers["size"]
        self.events: array[int] = numbers["events"]
        self.version: array[int] = numbers["version"]
        self._growing = [(n, s.grow) for n, s in self.stores.items() if n != "time"]
        self._getters = [store.get for store in self.stores.values()]  # `Row`'s order, id apart
        # spans: offset and length of each record, and the next span of its row
        self.offsets, self.lengths, self.next = array("q"), array("I"), array("i")
        self.first, self.last = array("i"), array("i")  # each row's first and last span

    def _store(self, how: Kept) -> _Store:
        if isinstance(how, Word):
            return _Words()
        if isinstance(how, Number):
            return _Numbers(how)
        assert isinstance(how, Flag)
        return _Flag(self.flags, how)

    def __len__(self) -> int:
        return len(self.time)

    @overload
    def __getitem__(self, position: int) -> Row: ...
    @overload
    def __getitem__(self, position: slice) -> list[Row]: ...
    def __getitem__(self, position: int | slice) -> Row | list[Row]:
        if isinstance(position, slice):
            return [self._row(n) for n in range(len(self))[position]]
        if position < 0:
            position += len(self)
        if not 0 <= position < len(self):
            raise IndexError("row index out of range")
        return self._row(position)

    def __iter__(self) -> Iterator[Row]:
        return (self._row(n) for n in range(len(self)))

    def _row(self, position: int) -> Row:
        facts = [get(position) for get in self._getters]
        return Row(self.ids.id_of(position), *cast(list[Any], facts))

    # -- adding and changing rows -----------------------------------------------------------
    def append(self, exchange_id: str, time: float, facts: Mapping[str, Fact]) -> int:
        """A new row (the facts its request gives; the others as `Row` has them at first);
        its position. The time comes last: its column's length is the table's, so another
        thread sees a row once it is whole."""
        self.flags.append(0)
        for name, grow in self._growing:
            grow(facts.get(name))
        self.first.append(NO_SPAN)
        self.last.append(NO_SPAN)
        position = self.ids.add(exchange_id)
        self.time.append(time)  # the length of the table: last
        return position

    def set(self, name: str, position: int, value: Fact) -> None:
        """Field `name` of row `position` is `value` now."""
        self.stores[name].set(position, value)

    def word(self, name: str, position: int) -> str:
        return self.strings[name].values[self.codes[name][position]]

    def explain(self, position: int, facts: Mapping[str, Fact]) -> None:
        """The explanation's word on row `position` (its component, summary, noise)."""
        for name, value in facts.items():
            self.stores[name].set(position, value)
        self.version[position] += 1

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
