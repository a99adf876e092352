"""`:save FILE` and `:save-filtered FILE`: the recording, or the exchanges the list shows, as
a recording of their own.

The new file is a valid recording: the original's header first, then the records of the
chosen exchanges in the order they were recorded (each re-read from the original by its
byte offset, nothing decoded), with the etcd records that are theirs — for a write, the
change etcd recorded at the write's key and revision, as the explanation layer names them
(`summaries.py`: the whole recording keeps all of etcd's), and every note (what the
recording says of itself: that a signal stopped it, that a write to it failed; true of any
part of it too). A subset keeps the recording's first `/version` exchange too: it says
which release the protobuf bodies are decoded with.
A name ending in `.gz` is written gzip-compressed. The file is written under a temporary
name beside FILE and put in place only once complete (`capture.outputs.whole_file`); an
existing file is never replaced unless asked (`force`: `:save!`); what an error, or a save
stopped (`stopped()`: the app quits), left half-written is removed. The mode is 0600: a
recording holds cluster data. `progress(stage, fraction)` says how far it has got: finding
a subset's etcd records, then writing (`BATCH` records at a time, as the original has
them: bytes copied, not parsed and written again).
"""

from __future__ import annotations

import contextlib
import gzip
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO

from k8s_wiretap.capture.assemble import Assembler
from k8s_wiretap.capture.outputs import recording_problem, whole_file
from k8s_wiretap.capture.reader import Recording
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.explainer import Explainer
from k8s_wiretap.kube.verbs import WRITES
from k8s_wiretap.views.tui.listing.index import RecordingIndex
from k8s_wiretap.wire.words import counted

__all__ = ["BATCH", "Progress", "SaveError", "Saved", "save"]

Progress = Callable[[str, float], None]  # (what it is doing, fraction done)
BATCH = 2_000  # records written at once, between two words of progress
FINDING, WRITING = "finding their etcd records", "writing"


class SaveError(Exception):
    """Why the file was not written, in one line."""


class Saved:
    """What was written: `exchanges` (the chosen, and /version), `etcd` records."""

    def __init__(self, path: Path, exchanges: int, etcd: int) -> None:
        self.path, self.exchanges, self.etcd = path, exchanges, etcd

    def __str__(self) -> str:
        etcd = f" and {counted(self.etcd, 'etcd record')}" if self.etcd else ""
        return f"saved {counted(self.exchanges, 'exchange')}{etcd} to {self.path}"


def save(
    index: RecordingIndex,
    positions: Sequence[int] | None,
    path: Path,
    *,
    force: bool = False,
    progress: Progress | None = None,
    stopped: Callable[[], bool] | None = None,
) -> Saved:
    """Write the rows at `positions` (None: every row, and all of etcd's records) of
    `index` to a new recording at `path`. SaveError says why not."""
    problem = recording_problem(path, overwrite=force, hint=f":save! {path} replaces it")
    if problem is not None:
        raise SaveError(f"cannot save: {problem}")
    if not index.header:
        raise SaveError("cannot save: the recording is not read yet")
    said = progress or (lambda _stage, _done: None)
    chosen = list(range(len(index))) if positions is None else list(positions)
    if positions is not None and index.release is not None and index.release not in chosen:
        chosen = sorted({*chosen, index.release})
    if positions is not None:
        said(FINDING, 0.0)
    etcd = _all_etcd(index) if positions is None else _etcd_of(index, chosen)
    notes = index.notes
    spans = sorted([*_spans(index, chosen), *etcd, *zip(notes[::2], notes[1::2], strict=True)])
    head = json.dumps(index.header, separators=(",", ":"), ensure_ascii=False).encode()

    def batches() -> Iterator[bytes]:
        yield head + b"\n"
        for at in range(0, len(spans), BATCH):
            if stopped is not None and stopped():
                raise SaveError(f"save to {path} stopped")
            said(WRITING, at / len(spans))
            yield b"".join(index.raw(offset, length) for offset, length in spans[at : at + BATCH])
        said(WRITING, 1.0)

    try:
        _write(path, batches(), force=force)
    except OSError as error:
        raise SaveError(f"cannot save to {path}: {error.strerror or error}") from error
    return Saved(path, len(chosen), len(etcd))


def _spans(index: RecordingIndex, positions: Iterable[int]) -> Iterator[tuple[int, int]]:
    for position in positions:
        spans = index.rows.spans(position)
        yield from zip(spans[::2], spans[1::2], strict=True)


def _etcd_spans(index: RecordingIndex) -> Iterator[tuple[float, int, int]]:
    etcd = index.etcd
    for at in range(0, len(etcd), 3):
        yield etcd[at], int(etcd[at + 1]), int(etcd[at + 2])


def _all_etcd(index: RecordingIndex) -> list[tuple[int, int]]:
    return [(offset, length) for _time, offset, length in _etcd_spans(index)]


def _etcd_of(index: RecordingIndex, positions: list[int]) -> list[tuple[int, int]]:
    """The etcd records of the writes among `positions`: at the key and revision the
    explanation layer gives each."""
    if not index.etcd:
        return []
    verb = index.rows.word
    writes = [p for p in positions if verb("verb", p) in WRITES or p == index.release]
    wanted = _keys(index, writes)
    if not wanted:
        return []
    found = []
    for _time, offset, length in _etcd_spans(index):
        record = index.read(offset, length)
        if (record.get("key"), record.get("revision")) in wanted:
            found.append((offset, length))
    return found


def _keys(index: RecordingIndex, positions: list[int]) -> set[tuple[str, int]]:
    """(etcd key, revision) of each write at `positions`, as the explanation says."""
    assembler = Assembler()
    records = [index.read(offset, length) for offset, length in sorted(_spans(index, positions))]
    assembler.feed_all(records)
    explainer = Explainer(Analysis.of(Recording(index.header, assembler.exchanges)))
    keys = set()
    for exchange in assembler.exchanges:
        etcd = explainer.summaries.explain(exchange).etcd or {}
        if etcd.get("key") and etcd.get("revision") is not None:
            keys.add((str(etcd["key"]), int(etcd["revision"])))
    return keys


def _write(path: Path, batches: Iterable[bytes], *, force: bool) -> None:
    """Write the batches of lines through a temporary file in the same folder, put in
    place once complete (`force`: over what is there)."""
    with whole_file(path, overwrite=force) as raw, _writer(raw, path) as write:
        for batch in batches:
            write(batch)


@contextlib.contextmanager
def _writer(raw: IO[bytes], path: Path) -> Iterator[Callable[[bytes], object]]:
    """What writes to `raw`: through gzip for a `.gz` name."""
    if path.suffix != ".gz":
        yield raw.write
        return
    with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed:
        yield packed.write
