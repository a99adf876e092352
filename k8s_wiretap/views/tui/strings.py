"""Interned strings: each different string kept once, rows holding its small number.

The index's rows repeat a few words endlessly (components, verbs, resources, namespaces,
names, paths, summaries), so a row holds each as a code into a `Strings` table: 4 bytes a
field, not a string. Code 0 is always "". A filter asks a table once per different
string (`matching`), not once per row.
"""

from __future__ import annotations

from collections.abc import Callable
from sys import intern

__all__ = ["Strings"]


class Strings:
    """Strings by code and codes by string; append-only, so safe to read from a thread
    while another adds."""

    def __init__(self) -> None:
        self.values: list[str] = [""]
        self._codes: dict[str, int] = {"": 0}

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, code: int) -> str:
        return self.values[code]

    def code(self, text: str) -> int:
        """The code of `text`, given one if it is new."""
        code = self._codes.get(text)
        if code is None:
            code = self._codes[text] = len(self.values)
            self.values.append(intern(text))
        return code

    def matching(self, test: Callable[[str], bool], known: bytearray | None = None) -> bytearray:
        """One byte a code, 1 where `test(string)`: a lookup table for the rows' codes.
        `known`, an earlier answer for the same test, is extended, not made again."""
        table = known if known is not None else bytearray()
        values = self.values
        table += bytes(test(values[code]) for code in range(len(table), len(values)))
        return table
