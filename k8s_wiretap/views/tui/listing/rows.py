"""One row per exchange: its facts as one value, what the list shows and filters on, never
a body.

`Row` holds them: those the index reads from the records (request, response, events, end)
and those the explanation layer gives later (the real component, the summary, whether the
exchange is noise; it runs behind the index in a worker of its own). The index keeps no
`Row` objects: each field is a column over every row (`table.py`), and `table[n]` makes
row n's `Row` when it is asked for (the list draws a row, a filter checks one). How a
field is kept is said beside it, in its annotation: `Word()` an interned string (4 bytes
a row), `Number(code)` an array of that type code, `Flag(bit)` a bit of the row's flags.
A new fact is a new field here; the table keeps it from then on.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, fields
from typing import Annotated, get_type_hints

__all__ = [
    "EXPLAINED",
    "NOISE",
    "WATCH",
    "Fact",
    "Flag",
    "Id",
    "Kept",
    "Number",
    "Row",
    "Word",
    "clock",
    "duration_text",
    "human_size",
    "kept",
]

WATCH, EXPLAINED, NOISE = 1, 2, 4  # the bits of the table's `flags`
Fact = str | int | float | bool | None  # the value of one field


@dataclass(frozen=True)
class Id:
    """The exchange id: kept end to end in one byte string, found again by hash (`ids.py`)."""


@dataclass(frozen=True)
class Word:
    """A string: a code into an interned table (`strings.py`), "" its code 0."""


@dataclass(frozen=True)
class Number:
    """A number in an `array` of type `code` ("d" float, "H" 0 to 65535, "I", "q");
    `none`, if given, is what stands for None (NaN, 0)."""

    code: str
    none: float | None = None


@dataclass(frozen=True)
class Flag:
    """A bit of the row's flags; with `known`, None until that bit is set too."""

    bit: int
    known: int = 0


Kept = Id | Word | Number | Flag


@dataclass(frozen=True, slots=True)
class Row:
    """One exchange's facts, as the list shows them."""

    id: Annotated[str, Id()]
    time: Annotated[float, Number("d")]  # the request's
    method: Annotated[str, Word()] = ""
    path: Annotated[str, Word()] = ""
    component: Annotated[str, Word()] = ""  # the explanation's, once it has come
    verb: Annotated[str, Word()] = ""
    resource: Annotated[str, Word()] = ""  # with its subresource: deployments/scale
    namespace: Annotated[str, Word()] = ""
    name: Annotated[str, Word()] = ""
    status: Annotated[int | None, Number("H", none=0)] = None  # None: no response (yet)
    ended: Annotated[float | None, Number("d", none=math.nan)] = None  # the end record's
    size: Annotated[int, Number("q")] = 0  # bytes of body, every event's included
    events: Annotated[int, Number("I")] = 0  # a watch's
    error: Annotated[str, Word()] = ""
    watch: Annotated[bool, Flag(WATCH)] = False
    summary: Annotated[str, Word()] = ""  # from the explanation, once it has come
    noise: Annotated[bool | None, Flag(NOISE, known=EXPLAINED)] = None  # None until explained
    version: Annotated[int, Number("I")] = 0  # bumped on every change: a drawn line is stale

    @property
    def target(self) -> str:
        """namespace/name, or just the name (or the path of a non-resource request)."""
        if not self.resource:
            return self.path.split("?")[0]
        if not self.namespace:
            return self.name
        return f"{self.namespace}/{self.name}" if self.name else self.namespace  # a collection

    @property
    def duration(self) -> float | None:
        return None if self.ended is None else max(0.0, self.ended - self.time)

    @property
    def status_text(self) -> str:
        if self.status is not None:
            return str(self.status)
        return "err" if self.error else "…"


def kept() -> dict[str, Kept]:
    """How each field of `Row` is kept, by name, in the fields' order."""
    hints = get_type_hints(Row, include_extras=True)
    return {f.name: hints[f.name].__metadata__[0] for f in fields(Row)}


def clock(timestamp: float) -> str:
    """HH:MM:SS.mmm, local time, as the story prints it."""
    return dt.datetime.fromtimestamp(timestamp).strftime("%H:%M:%S.%f")[:-3]


def human_size(size: int) -> str:
    """1234 → 1.2K: four characters or so."""
    if size < 1024:
        return f"{size}B"
    value = float(size)
    for unit in ("K", "M", "G"):
        value /= 1024
        if value < 1024 or unit == "G":
            return f"{value:.1f}{unit}" if value < 10 else f"{value:.0f}{unit}"
    return f"{size}B"


def duration_text(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds < 100:
        return f"{seconds:.1f}s"
    return f"{seconds / 60:.0f}m"
