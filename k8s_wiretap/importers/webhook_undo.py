"""A webhook batch recorded whole or not at all: where the recording and the import stood
before the batch (`Undo.mark`), and taking both back there (`Undo.restore`) when the batch
cannot be written, so that the API server's next try of it is recorded as if it came first.

What is taken back: the file (truncated to its size before the batch, `FileOutput.rewind`),
the sink's counts and open exchanges, and the import's open exchanges (copies, in their
order), counts and finished ids (those the batch finished are let go again: they are the
last ones added). An id the batch pushed out of the finished ones (past `DONE_LIMIT`) stays
in the Bloom filter of forgotten ids: should it come again, it is given a derived id (said
in a note), as any id the filter holds by chance is.

The copies are of what is open (watches, requests not yet answered): bounded by the import's
own bound on open exchanges, not by the recording.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from k8s_wiretap.importers.audit import AuditImport
from k8s_wiretap.importers.sink import Sink

__all__ = ["Undo"]


@dataclass(frozen=True)
class Undo:
    """Where `sink` and `importer` stood (`mark`)."""

    sink: Sink
    importer: AuditImport
    position: tuple[int, bool]  # the file's (`FileOutput.position`)
    sink_counts: tuple[int, int]  # exchanges, skipped
    sink_open: dict[str, Any]
    importer_open: dict[str, Any]
    importer_counts: dict[str, int]
    last_done: str | None  # the last finished id

    @classmethod
    def mark(cls, sink: Sink, importer: AuditImport) -> Undo:
        """Where both stand now (what the sink holds is written first: OSError if it
        cannot be)."""
        output = sink._output
        output.flush()
        return cls(
            sink,
            importer,
            output.position,
            (sink.exchanges, sink.skipped),
            _copies(sink._open),
            _copies(importer._open),
            _counts(importer),
            next(reversed(importer._done), None),
        )

    def restore(self) -> None:
        """Take both back to the mark: the counts and what is open first, then the file
        (OSError when it cannot be truncated)."""
        sink, importer = self.sink, self.importer
        sink.exchanges, sink.skipped = self.sink_counts
        sink._open = _copies(self.sink_open)
        importer._open = _copies(self.importer_open)
        for name, value in self.importer_counts.items():
            setattr(importer, name, value)
        done = importer._done
        while done and next(reversed(done)) != self.last_done:
            done.popitem(last=True)
        sink._output.rewind(self.position)


def _copies(opened: Any) -> Any:
    """A copy of a map of open exchanges (of its kind: a dict, an OrderedDict), each state
    copied, with its list of stages when it has one."""
    copied = type(opened)()
    for key, state in opened.items():
        stages = getattr(state, "stages", None)
        changes = {"stages": list(stages)} if stages is not None else {}
        copied[key] = dataclasses.replace(state, **changes)
    return copied


def _counts(importer: AuditImport) -> dict[str, int]:
    """The import's counts (its fields that are numbers)."""
    values = {f.name: getattr(importer, f.name) for f in dataclasses.fields(importer)}
    return {k: v for k, v in values.items() if isinstance(v, int) and not isinstance(v, bool)}
