"""What the workers tell the app: small messages, floods merged (`can_replace`)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from k8s_wiretap.views.tui.listing.window import Detail
from k8s_wiretap.views.tui.selection import Selection

__all__ = [
    "DetailFailed",
    "DetailReady",
    "Explained",
    "Filtering",
    "IndexFailed",
    "Indexed",
    "RowsSelected",
    "SaveDone",
    "Saving",
    "Searched",
    "Searching",
]


@dataclass
class Indexed(Message):
    """The index holds `rows` rows (`done`: the whole file is read)."""

    rows: int
    done: bool = False

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, Indexed)


@dataclass
class IndexFailed(Message):
    """The file is not a recording this version reads: the app exits saying why."""

    error: str


@dataclass
class Explained(Message):
    """`count` exchanges have their summary (`done`: all of them)."""

    count: int
    done: bool = False

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, Explained)


@dataclass
class DetailReady(Message):
    detail: Detail


@dataclass
class DetailFailed(Message):
    position: int
    error: str


@dataclass
class Filtering(Message):
    """A worker has checked `done` (0 to 1) of the rows against the filter of
    `generation`."""

    done: float
    generation: int

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, Filtering)


@dataclass
class RowsSelected(Message):
    """A worker has checked every row against the filter of `generation`."""

    selection: Selection
    generation: int


@dataclass
class Searching(Message):
    """A worker has looked at `done` (0 to 1) of the rows for the search of
    `generation`."""

    done: float
    generation: int

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, Searching)


@dataclass
class Searched(Message):
    """A worker's answer to the search of `generation`: a byte a row, 1 where it
    matches, over the rows as `stamp` says they were."""

    found: bytes
    stamp: object
    generation: int


@dataclass
class Saving(Message):
    """A save to `path` is `stage` ("writing"...), `done` (0 to 1) of it."""

    path: str
    stage: str
    done: float

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, Saving)


@dataclass
class SaveDone(Message):
    """A save has ended: what it wrote, or why not (`error`), in one line."""

    said: str
    error: bool = False
