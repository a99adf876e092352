"""The terms of a filter (`filters.py`), each checkable two ways.

Called on one row (`term(row)`), a term reads its fields; asked for a `mask` of the
index's rows `start` to `stop`, it reads the columns (`listing/masks.py`): `~c scheduler`
looks at each different component once and maps the rows' component codes through the
answer, so most terms never touch a string a row. Both ways say the same (the tests hold
them to it).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from k8s_wiretap.views.tui.listing.masks import (
    Lookups,
    StatusTest,
    error_mask,
    flag_mask,
    ones,
    status_mask,
    word_mask,
)
from k8s_wiretap.views.tui.listing.rows import NOISE, WATCH, Row
from k8s_wiretap.views.tui.listing.table import RowTable

__all__ = [
    "NOISY",
    "WATCHES",
    "AllOf",
    "AnyOf",
    "Anywhere",
    "Errors",
    "Everything",
    "Field",
    "Flag",
    "Not",
    "Status",
    "Term",
]

ANYWHERE = ("component", "verb", "resource", "namespace", "name", "path", "summary")


class Term:
    """What a filter is made of."""

    def __call__(self, row: Row) -> bool:
        raise NotImplementedError

    def mask(self, rows: RowTable, start: int, stop: int) -> int:
        """The rows from `start` to `stop` that match, a byte each (`listing/masks.py`)."""
        raise NotImplementedError


class Everything(Term):
    def __call__(self, row: Row) -> bool:
        return True

    def mask(self, rows: RowTable, start: int, stop: int) -> int:
        return ones(stop - start)


class Field(Term):
    """One field (`name`, an attribute of a row) searched by a regular expression."""

    def __init__(self, name: str, regex: re.Pattern[str]) -> None:
        self.name, self.regex = name, regex
        self.lookups = Lookups(lambda text: regex.search(text) is not None)

    def __call__(self, row: Row) -> bool:
        return self.regex.search(getattr(row, self.name)) is not None

    def mask(self, rows: RowTable, start: int, stop: int) -> int:
        return word_mask(rows, self.name, self.lookups, start, stop)


class Anywhere(Term):
    """A bare word: in any of the `ANYWHERE` fields, case-insensitively."""

    def __init__(self, text: str) -> None:
        self.needle = needle = text.lower()
        self.lookups = Lookups(lambda text: needle in text.lower())

    def __call__(self, row: Row) -> bool:
        return any(self.needle in getattr(row, name).lower() for name in ANYWHERE)

    def mask(self, rows: RowTable, start: int, stop: int) -> int:
        found = 0
        for name in ANYWHERE:
            found |= word_mask(rows, name, self.lookups, start, stop)
        return found


class Status(Term):
    """The status as the list shows it: the number, "err" or "…"."""

    def __init__(self, regex: re.Pattern[str]) -> None:
        self.regex = regex
        self.test = StatusTest(lambda text: regex.search(text) is not None)

    def __call__(self, row: Row) -> bool:
        return self.regex.search(row.status_text) is not None

    def mask(self, rows: RowTable, start: int, stop: int) -> int:
        return status_mask(rows, self.test, start, stop)


class Errors(Term):
    """An error, or a status of 400 and above."""

    def __call__(self, row: Row) -> bool:
        return bool(row.error) or (row.status or 0) >= 400

    def mask(self, rows: RowTable, start: int, stop: int) -> int:
        return error_mask(rows, start, stop)


class Flag(Term):
    """A watch, or noise: a bit of the rows' flags."""

    def __init__(self, bit: int, read: Callable[[Row], bool | None]) -> None:
        self.bit, self.read = bit, read

    def __call__(self, row: Row) -> bool:
        return bool(self.read(row))

    def mask(self, rows: RowTable, start: int, stop: int) -> int:
        return flag_mask(rows, self.bit, start, stop)


WATCHES = Flag(WATCH, lambda row: row.watch)
NOISY = Flag(NOISE, lambda row: row.noise)


class AllOf(Term):
    def __init__(self, terms: list[Term]) -> None:
        self.terms = terms

    def __call__(self, row: Row) -> bool:
        return all(term(row) for term in self.terms)

    def mask(self, rows: RowTable, start: int, stop: int) -> int:
        found = self.terms[0].mask(rows, start, stop)
        for term in self.terms[1:]:
            if not found:
                break
            found &= term.mask(rows, start, stop)
        return found


class AnyOf(Term):
    def __init__(self, terms: list[Term]) -> None:
        self.terms = terms

    def __call__(self, row: Row) -> bool:
        return any(term(row) for term in self.terms)

    def mask(self, rows: RowTable, start: int, stop: int) -> int:
        found = 0
        for term in self.terms:
            found |= term.mask(rows, start, stop)
        return found


class Not(Term):
    def __init__(self, inner: Term) -> None:
        self.inner = inner

    def __call__(self, row: Row) -> bool:
        return not self.inner(row)

    def mask(self, rows: RowTable, start: int, stop: int) -> int:
        return self.inner.mask(rows, start, stop) ^ ones(stop - start)
