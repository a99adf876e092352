"""The index of a recording: rows by byte offset, built while the file is read.

`RecordingIndex.scan()` reads the file once, as a stream, and makes one row per exchange
(columns of arrays, `table.py`: `index.rows[n]` is a `Row`, `rows.py`) with where
each of its records sits (offset, length); it runs in a
worker, so the list shows the first rows before the rest is read. A gzip recording is
decompressed once, into an anonymous temporary file, so that its records can be read back
by offset like a plain file's. Nothing is decoded here: `records(rows)` reads the records
of the exchanges asked for back (the detail pane's, `window.py`).

A file that is not a recording, or of a newer format version, or whose gzip data is
corrupt raises `RecordingError` (capture/reader.py's error, with its words); a cut-off
last line or gzip stream is a warning, as when `explain` loads it.

The records become exchanges in `capture.assemble.Assembler`, as everywhere else (a record
whose request was not recorded is a row with the same warning): the index keeps, of each
exchange, its row, and of each record, where it sits.

A recording still being written is followed (`scan(follow=...)`, `follow.py`): at the end
of the file the index says so (`caught_up`, and a notice) and reads on as records come,
`tail -f` style; rows grow (a watch's events, its end) as their records arrive. `done`
only once following stops.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import threading
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from k8s_wiretap.capture import reader
from k8s_wiretap.capture.assemble import Assembler, Update
from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.reader import RecordingError
from k8s_wiretap.capture.records import cut_of
from k8s_wiretap.explain.who import who_of
from k8s_wiretap.views.tui.listing.follow import (
    Changed,
    FileChanged,
    KeepGoing,
    chunks,
    gunzipped,
    lines,
)
from k8s_wiretap.views.tui.listing.rows import Fact
from k8s_wiretap.views.tui.listing.table import RowTable

__all__ = ["RecordingIndex", "check_header"]

GZIP_MAGIC = b"\x1f\x8b"
Notify = Callable[[int], None]


def check_header(path: Path, line: bytes) -> dict[str, Any]:
    """The header record of a recording's first line; RecordingError if it is none."""
    try:
        record = json.loads(line)
    except ValueError:
        record = None
    if not isinstance(record, dict):
        raise RecordingError(f"{path}: not a k8s-wiretap recording (no header line)")
    reader.check_header(path, record)
    return record


class RecordingIndex:
    """Rows of a recording, in the order their requests were recorded, and their records."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.header: dict[str, Any] = {}
        self.rows = RowTable()
        self.by_id = self.rows.ids  # the row of an exchange id
        self.etcd = array("d")  # time, offset, length of each etcd record, flat
        self.notes = array("q")  # offset, length of each note record, flat (`:save` copies)
        self.release: int | None = None  # the row of the first /version exchange
        self.warnings: list[str] = []
        self.open = 0  # exchanges with no end record yet
        self.caught_up = False  # the end of the file was reached (once)
        self.done = False  # and nothing more is read
        self.changed_file: str | None = None  # why a followed file stopped being read
        self.taken = 0  # records taken: what changed since a notice
        self.lock = threading.Lock()  # rows are made here and explained elsewhere
        # what it holds: the exchanges still open (their events are not kept)
        self._assembler = Assembler(keep=False, events=False, warnings=self.warnings)
        self._explained: dict[str, dict[str, Fact]] = {}  # came before their row
        self._components: dict[tuple[object, ...], str] = {}
        self._changed = array("q")  # rows explained since `changed()` was asked
        self._fd: int | None = None
        self._spill: BinaryIO | None = None

    def __len__(self) -> int:
        return len(self.rows)

    # -- reading the file -------------------------------------------------------------------
    def scan(
        self,
        notify: Notify | None = None,
        every: int = 500,
        stopped: Callable[[], bool] = lambda: False,
        follow: KeepGoing | None = None,
    ) -> None:
        """Read the whole file, calling `notify(rows so far)` every `every` new rows;
        give up when `stopped()` (the app is closing). With `follow`, read on past the end
        while `follow()` says so, calling `notify` each time the end is reached with
        something new."""
        seen = told = 0

        def keep_going() -> bool:
            return not stopped() and follow is not None and follow()

        try:
            for offset, line in self._lines(keep_going if follow is not None else None):
                if stopped():
                    return
                if not line:
                    if not self.header:
                        continue  # an empty file: its header is being written
                    first, self.caught_up = not self.caught_up, True
                    if notify is not None and (first or self.taken != told):
                        seen, told = len(self.rows), self.taken
                        notify(seen)
                    continue
                if not self.header:
                    self.header = check_header(self.path, line)
                    continue
                if not line.strip():
                    continue
                self._take(offset, line)
                if notify is not None and len(self.rows) - seen >= every:
                    seen, told = len(self.rows), self.taken
                    notify(seen)
        except FileChanged as change:  # what was read stays; nothing more is
            self.changed_file = str(change)
        self.caught_up = self.done = True
        if not self.header:
            raise RecordingError(f"{self.path}: not a k8s-wiretap recording (no header line)")
        if notify is not None:
            notify(len(self.rows))

    def _lines(self, keep_going: KeepGoing | None) -> Iterator[tuple[int, bytes]]:
        try:
            handle = self.path.open("rb")
        except OSError as error:
            raise RecordingError(f"cannot read {self.path}: {error.strerror}") from error
        with handle:
            if handle.read(2) == GZIP_MAGIC:
                handle.seek(0)
                # open as long as the index: records are read back from it
                self._spill = tempfile.TemporaryFile(prefix="k8s-wiretap-replay-")  # noqa: SIM115
                self._fd = self._spill.fileno()
                yield from lines(self._gunzip(handle, keep_going))
            else:
                handle.seek(0)
                self._fd = os.open(self.path, os.O_RDONLY)
                yield from lines(chunks(handle, keep_going, changed=Changed(self.path, handle)))

    def _gunzip(self, handle: BinaryIO, keep_going: KeepGoing | None) -> Iterator[bytes]:
        packed = chunks(handle, keep_going, changed=Changed(self.path, handle))
        for data in gunzipped(packed, self.path, self.warnings):
            os.write(self._fd or 0, data)
            yield data

    def _take(self, offset: int, line: bytes) -> None:
        try:
            record = reader.loads(line)  # as `explain` reads it, at orjson's speed
        except ValueError:
            self.warnings.append(f"{self.path}: skipped a line at byte {offset}: not a record")
            return
        if not isinstance(record, dict):
            return
        update = self._assembler.feed(record)
        if update is None:
            self._aside(offset, len(line))
            return
        exchange = update.exchange
        position = None if update.began else self.by_id.get(exchange.id)
        if position is None:
            position = self._row(exchange)
        rows = self.rows
        rows.span(position, offset, len(line))
        rows.version[position] += 1
        self.taken += 1
        kind = update.record
        if kind == "response" and exchange.response is not None:
            rows.status[position] = min(exchange.response.status, 65535)
        elif kind == "event":
            rows.events[position] += 1
            rows.size[position] += update.event.data.size if update.event else 0
        elif kind == "end":
            self.open -= math.isnan(rows.ended[position])
            self._ended(position, update)

    def _aside(self, offset: int, length: int) -> None:
        """What the assembler kept aside: etcd's records (indexed by time) and notes (the
        one that a signal cut the recording is said as soon as it is read)."""
        assembler = self._assembler
        for change in assembler.etcd:
            self.etcd.extend((change.time, offset, length))
        for note in assembler.notes:
            self.notes.extend((offset, length))
            cut = cut_of(note)
            if cut is not None:
                self.warnings.append(f"{self.path}: a cut recording: {cut}")
        assembler.etcd.clear()
        assembler.notes.clear()

    def _row(self, exchange: Exchange) -> int:
        """The row of an exchange the assembler began: its request's facts."""
        info = exchange.info
        resource = f"{info.resource}/{info.subresource}" if info.subresource else info.resource
        facts: dict[str, Fact] = {
            "method": exchange.method,
            "path": exchange.path,
            "component": self._component(exchange),
            "verb": info.verb,
            "resource": resource,
            "namespace": info.namespace,
            "name": info.name,
            "watch": info.verb == "watch",
        }
        with self.lock:
            position = self.rows.append(exchange.id, exchange.time, facts)
            self.open += 1
            if exchange.id in self._explained:
                self.rows.explain(position, self._explained.pop(exchange.id))
        body = exchange.request_body
        if body:
            self.rows.size[position] += body.size
        if self.release is None and exchange.path.split("?")[0] == "/version":
            self.release = position
        return position

    def _component(self, exchange: Exchange) -> str:
        """Who sent it, from the request alone (the explanation may say better later): what
        decides is the same for every request of one client, so it is asked once a client."""
        request = exchange.request
        key = (exchange.user_agent, request.identity, request.client.certificate, request.listener)
        component = self._components.get(key)
        if component is None:
            if len(self._components) > 10_000:
                self._components.clear()
            component = self._components[key] = who_of(exchange).component
        return component

    def _ended(self, position: int, update: Update) -> None:
        rows, end = self.rows, update.exchange.end
        if end is None:
            return
        rows.ended[position] = end.time or rows.time[position]
        if end.body is not None:
            rows.size[position] += end.body.size
        if end.error:
            rows.set("error", position, end.error)

    # -- what the explanation says ----------------------------------------------------------
    def explained(
        self, exchange_id: str, component: str, summary: str, noise: bool, **more: Fact
    ) -> None:
        """The explanation layer's word on an exchange (from the explaining worker): its
        component, summary and noise, and `more` facts of `Row` if it has them."""
        facts: dict[str, Fact] = {"component": component, "summary": summary, "noise": noise}
        facts |= more
        with self.lock:
            position = self.by_id.get(exchange_id)
            if position is None:
                self._explained[exchange_id] = facts
            else:
                self.rows.explain(position, facts)
                self._changed.append(position)

    def changed(self) -> array[int]:
        """The rows the explanation changed since the last call."""
        with self.lock:
            changed, self._changed = self._changed, array("q")
        return changed

    # -- reading records back ---------------------------------------------------------------
    def read(self, offset: int, length: int) -> dict[str, Any]:
        record: dict[str, Any] = json.loads(self._pread(offset, length))
        return record

    def raw(self, offset: int, length: int) -> bytes:
        """The record at `offset` as it is in the file, its line ending a newline."""
        line = self._pread(offset, length)
        return line if line.endswith(b"\n") else line + b"\n"

    def _pread(self, offset: int, length: int) -> bytes:
        assert self._fd is not None
        data = os.pread(self._fd, length, offset)
        if len(data) < length:  # RecordingError: said in one line
            raise RecordingError(f"{self.path.name} no longer has the record at byte {offset:,}")
        return data

    def records(self, positions: list[int], since: float, until: float) -> list[dict[str, Any]]:
        """The records of the rows at `positions`, and etcd's between `since` and `until`,
        in file order (the order they were recorded)."""
        spans: list[tuple[int, int]] = []
        for position in positions:
            row_spans = self.rows.spans(position)
            spans += zip(row_spans[::2], row_spans[1::2], strict=True)
        etcd = self.etcd
        for at in range(0, len(etcd), 3):
            if since <= etcd[at] <= until:
                spans.append((int(etcd[at + 1]), int(etcd[at + 2])))
        return [self.header, *(self.read(o, n) for o, n in sorted(spans))]

    def close(self) -> None:
        if self._spill is not None:
            self._spill.close()
        elif self._fd is not None:
            os.close(self._fd)
        self._fd = self._spill = None
