"""Tests over the index's columns (`table.py`) at C speed: masks, not loops over rows.

A mask of rows `start` to `stop` is a Python int holding one byte a row (1: it matches),
so that and, or and not are one big-integer operation each over a million rows. A word
term looks its field's strings up once each (`Strings.matching`: a byte per code) and maps
the rows' codes through that table (`bytes(map(...))`, in C); flags go through
`bytes.translate`. `Lookups` keeps a term's tables, extended as the strings grow.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from k8s_wiretap.views.tui.listing.table import RowTable

__all__ = ["Lookups", "flag_mask", "from_mask", "ones", "status_mask", "word_mask"]

BYTE = Callable[[int], bool]


def ones(count: int) -> int:
    """Every row of `count` matches."""
    return int.from_bytes(b"\x01" * count, "little")


def from_mask(mask: int, count: int) -> bytes:
    """The mask as one byte a row, 0 or 1."""
    return mask.to_bytes(count, "little")


def _mask(values: bytes | bytearray) -> int:
    return int.from_bytes(values, "little")


class Lookups:
    """One test's lookup tables, by field: a byte a code, made once per string."""

    def __init__(self, test: Callable[[str], bool]) -> None:
        self.test = test
        self._tables: dict[tuple[int, str], bytes] = {}
        self._lock = threading.Lock()

    def table(self, rows: RowTable, name: str) -> bytes:
        strings = rows.strings[name]
        key = (id(rows), name)
        with self._lock:
            known = self._tables.get(key, b"")
            if len(known) < len(strings):
                known = self._tables[key] = bytes(strings.matching(self.test, bytearray(known)))
        return known


def word_mask(rows: RowTable, name: str, lookups: Lookups, start: int, stop: int) -> int:
    """The rows whose field `name` passes the test."""
    table = lookups.table(rows, name)
    return _mask(bytes(map(table.__getitem__, rows.codes[name][start:stop])))


def flag_mask(rows: RowTable, bit: int, start: int, stop: int) -> int:
    """The rows with flag `bit` set."""
    translation = bytes(1 if value & bit else 0 for value in range(256))
    return _mask(rows.flags[start:stop].translate(translation))


class StatusTest:
    """A test of the status as the list shows it (`Row.status_text`)."""

    def __init__(self, test: Callable[[str], bool]) -> None:
        self.test = test
        self._table = bytearray(65536)
        self._known: set[int] = set()
        self.failed = Lookups(lambda error: test("err" if error else "…"))


def status_mask(rows: RowTable, status: StatusTest, start: int, stop: int) -> int:
    """The rows whose status text passes the test: the number, else "err" or "…"."""
    statuses = rows.status[start:stop]
    table, known = status._table, status._known
    for value in set(statuses) - known:
        table[value] = value != 0 and status.test(str(value))
        known.add(value)
    matched = _mask(bytes(map(table.__getitem__, statuses)))
    if 0 not in known:
        return matched
    none = _mask(bytes(map(NONE.__getitem__, statuses)))
    return matched | (none & word_mask(rows, "error", status.failed, start, stop))


NONE = bytes([1]) + bytes(65535)  # status 0: no response
ERROR_STATUS = bytes(400) + bytes([1]) * (65536 - 400)


def error_mask(rows: RowTable, start: int, stop: int) -> int:
    """An error, or a status of 400 and above."""
    statuses = _mask(bytes(map(ERROR_STATUS.__getitem__, rows.status[start:stop])))
    failed = rows.codes["error"][start:stop]
    return statuses | _mask(bytes(map(bool, failed)))
