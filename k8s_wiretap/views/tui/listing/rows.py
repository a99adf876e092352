"""One row per exchange: what the list shows and filters on, never a body.

A row is filled from the records as the index reads them (request, response, end, the
count of events) and, later, from the explanation layer (the real component, the summary
and whether the exchange is noise), which runs behind the index in a worker of its own.
Where its records sit in the file (`spans`: offset and length, one pair per record) is
what the detail pane reads back when the exchange is selected.
"""

from __future__ import annotations

import datetime as dt
from array import array
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

__all__ = ["Row", "RowLike", "clock", "duration_text", "human_size"]


class RowLike:
    """What a row reads as: a `Row`, or a view of the index's columns (`table.py`), with
    the words made from its fields."""

    __slots__ = ()

    if TYPE_CHECKING:  # the fields, each a `Row` attribute or a view's property

        @property
        def id(self) -> str: ...
        @property
        def time(self) -> float: ...
        @property
        def method(self) -> str: ...
        @property
        def path(self) -> str: ...
        @property
        def component(self) -> str: ...
        @property
        def verb(self) -> str: ...
        @property
        def resource(self) -> str: ...
        @property
        def namespace(self) -> str: ...
        @property
        def name(self) -> str: ...
        @property
        def status(self) -> int | None: ...
        @property
        def ended(self) -> float | None: ...
        @property
        def size(self) -> int: ...
        @property
        def events(self) -> int: ...
        @property
        def error(self) -> str: ...
        @property
        def watch(self) -> bool: ...
        @property
        def summary(self) -> str: ...
        @property
        def noise(self) -> bool | None: ...
        @property
        def version(self) -> int: ...
        @property
        def spans(self) -> array[int]: ...

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


@dataclass(slots=True, eq=False)
class Row(RowLike):
    """A row as an object of its own (the index keeps columns: `table.py`)."""

    id: str
    time: float
    method: str
    path: str
    component: str
    verb: str
    resource: str
    namespace: str
    name: str
    status: int | None = None
    ended: float | None = None
    size: int = 0
    events: int = 0
    error: str = ""
    watch: bool = False
    summary: str = ""  # from the explanation, once it has come
    noise: bool | None = None  # None until explained
    version: int = 0  # bumped on every change: the list's rendered line is stale
    spans: array[int] = field(default_factory=lambda: array("q"))


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
