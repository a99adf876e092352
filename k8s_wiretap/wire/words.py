"""A count and its noun as a person reads them: `1 event`, `2 events`, `1,024 exchanges`.

Every count the views, the commands and the importers print goes through `counted`, so a
single one is never "1 events".
"""

from __future__ import annotations

__all__ = ["counted"]


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`count` and `noun`, the noun plural unless the count is one (`plural`, else the
    noun and an "s"); thousands separated by commas."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"
