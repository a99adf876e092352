"""A webhook batch recorded whole or not at all: where the recording and the import stood
before the batch (`Undo.mark`), and taking both back there (`Undo.restore`) when the batch
cannot be written, so that the API server's next try of it is recorded as if it came first.

What is taken back: the file (truncated to its size before the batch, `FileOutput.rewind`),
the sink's counts and open exchanges, and the import's open exchanges (in their order),
counts and finished ids (those the batch finished are let go again: they are the last ones
added). An id the batch pushed out of the finished ones (past `DONE_LIMIT`) stays in the
Bloom filter of forgotten ids: should it come again, it is given a derived id (said in a
note), as any id the filter holds by chance is.

A batch's mark costs what the batch touches, not what is open (a cluster may hold a
hundred thousand watches open, and batches come several a second): the maps of open
exchanges are `Journal`s, which keep a copy of each exchange as it was before the batch
first touched it (read, replaced or removed); the mark itself keeps only their order.
"""

from __future__ import annotations

import copy
import dataclasses
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from k8s_wiretap.importers.audit import AuditImport
from k8s_wiretap.importers.sink import Sink

__all__ = ["Journal", "Undo"]

_ABSENT = object()  # a key the batch added


class Journal(OrderedDict[str, Any]):
    """A map of open exchanges that, once `begin` is called, keeps each state as it was
    before it was first reached through the map (`before`), for `rewound`."""

    def __init__(self, *args: Any) -> None:
        self.before: dict[str, Any] | None = None
        self.order: list[str] = []
        super().__init__(*args)

    def begin(self) -> None:
        """From now on, keep what is touched (what was kept for the last batch goes)."""
        self.before, self.order = {}, list(self)

    def rewound(self) -> Journal:
        """The map as it was at `begin` (its order too)."""
        before = self.before or {}
        restored = Journal()
        for key in self.order:
            state = before.get(key, _ABSENT)
            restored[key] = OrderedDict.__getitem__(self, key) if state is _ABSENT else state
        return restored

    def _touch(self, key: str) -> None:
        before = self.before
        if before is not None and key not in before:
            state = OrderedDict.get(self, key, _ABSENT)
            before[key] = state if state is _ABSENT else _copy(state)

    def get(self, key: str, default: Any = None) -> Any:
        self._touch(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self._touch(key)
        return super().__getitem__(key)

    def __setitem__(self, key: str, value: Any) -> None:
        self._touch(key)
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self._touch(key)
        super().__delitem__(key)

    def pop(self, key: str, *default: Any) -> Any:
        self._touch(key)
        return super().pop(key, *default)

    def popitem(self, last: bool = True) -> tuple[str, Any]:
        if self:
            self._touch(next(reversed(self)) if last else next(iter(self)))
        return super().popitem(last)


@dataclass(frozen=True)
class Undo:
    """Where `sink` and `importer` stood (`mark`)."""

    sink: Sink
    importer: AuditImport
    position: tuple[int, bool]  # the file's (`FileOutput.position`)
    sink_counts: tuple[int, int]  # exchanges, skipped
    importer_counts: dict[str, int]
    last_done: Any  # the last finished request's key (`audit.Event.key`)
    last_id: str | None  # the last exchange id given

    @classmethod
    def mark(cls, sink: Sink, importer: AuditImport) -> Undo:
        """Where both stand now (what the sink holds is written first: OSError if it
        cannot be)."""
        output = sink._output
        output.flush()
        for owner in (sink, importer):
            if not isinstance(owner._open, Journal):
                owner._open = Journal(owner._open)
            owner._open.begin()
        return cls(
            sink,
            importer,
            output.position,
            (sink.exchanges, sink.skipped),
            _counts(importer),
            next(reversed(importer._done), None),
            next(reversed(importer._ids), None),
        )

    def restore(self) -> None:
        """Take both back to the mark: the counts and what is open first, then the file
        (OSError when it cannot be truncated)."""
        sink, importer = self.sink, self.importer
        sink.exchanges, sink.skipped = self.sink_counts
        for owner in (sink, importer):
            opened = owner._open
            if isinstance(opened, Journal):
                owner._open = opened.rewound()
        for name, value in self.importer_counts.items():
            setattr(importer, name, value)
        done = importer._done
        while done and next(reversed(done)) != self.last_done:
            done.popitem(last=True)
        ids = importer._ids
        while ids and next(reversed(ids)) != self.last_id:
            ids.popitem(last=True)
        sink._output.rewind(self.position)


def _copy(state: Any) -> Any:
    """A copy of an exchange's state, its lists, sets and maps copied too (a batch
    appends to its stages, adds to its values)."""
    copied = copy.copy(state)
    for name, value in _attributes(state):
        if isinstance(value, list | set | dict):
            setattr(copied, name, copy.copy(value))
    return copied


def _attributes(state: Any) -> list[tuple[str, Any]]:
    """An object's attributes, whether in its `__dict__` or its classes' slots (the
    sink's `_Open` has slots)."""
    if hasattr(state, "__dict__"):
        return list(vars(state).items())
    names: list[str] = []
    for cls in type(state).__mro__:
        slots = getattr(cls, "__slots__", ())
        names += [slots] if isinstance(slots, str) else slots
    return [(n, getattr(state, n)) for n in names if hasattr(state, n)]


def _counts(importer: AuditImport) -> dict[str, int]:
    """The import's counts (its fields that are numbers)."""
    values = {f.name: getattr(importer, f.name) for f in dataclasses.fields(importer)}
    return {k: v for k, v in values.items() if isinstance(v, int) and not isinstance(v, bool)}
