"""Reading a recording that is still being written, as `tail -f` does.

The proxy's recorder appends records in bursts (one write and flush every ~20 ms), so a
reader that reaches the end of the file may find a burst half written: a last line
without its newline. While following, that line is waited for, never reported as cut
short; only when following stops (the writer is gone) is a partial last line what it is.

`chunks(handle, keep_going)` yields the file's data and, each time it has caught up with
the end, one empty chunk (nothing more for now), then polls every `POLL` seconds for as
long as `keep_going()` says; `lines(chunks)` cuts the chunks into (offset, line) pairs and
passes the empty chunk on as `(offset, b"")`. Both the index and the explaining worker
read through them, each at its own pace.

When is a recording followed? `replay --follow` always, `--no-follow` never; by default
(`AutoFollow`) a recording is followed when, once read to its end, some exchange in it
is still open (no end record: a proxy that stops cleanly ends every exchange it has, so
open exchanges mean it still runs, or it crashed) and the file was written to in the last
`RECENT` seconds (a crashed proxy's old recording is not waited on). A live proxy's TUI
and a playback always follow: their writer says when it is done.

A followed file can change under the reader: emptied or cut shorter (`> file`, a
`--overwrite` run, a log rotation's copy-and-truncate) or replaced by another file at its
name (`mv`). Each time it has caught up, `chunks` looks (`Changed`: the open file now
shorter than what was read of it, or the name another file's) and raises `FileChanged`,
saying which in one line: what was read stays, and following stops. A file only removed
is still followed: what its writer adds still comes (a live proxy's temporary recording
goes when the proxy stops).
"""

from __future__ import annotations

import contextlib
import os
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, cast

from k8s_wiretap.capture import records
from k8s_wiretap.capture.reader import GZIP_MAGIC, RecordingError, loads

__all__ = [
    "POLL",
    "RECENT",
    "AutoFollow",
    "Changed",
    "FileChanged",
    "KeepGoing",
    "chunks",
    "clock_record",
    "followed_records",
    "lines",
]

CHUNK = 1 << 20
POLL = 0.05  # seconds between two looks at the end of a followed file
RECENT = 60.0  # seconds: a file written to since then may still be written to
KeepGoing = Callable[[], bool]


class FileChanged(Exception):
    """The followed file was truncated or replaced: what was read of it is all there is."""


class Changed:
    """Whether the file open as `handle` has been truncated, or `path` names another file
    now (None: neither)."""

    def __init__(self, path: Path, handle: BinaryIO) -> None:
        self.path, self.handle = path, handle
        opened = os.fstat(handle.fileno())
        self.file = (opened.st_dev, opened.st_ino)

    def __call__(self) -> str | None:
        read, size = self.handle.tell(), os.fstat(self.handle.fileno()).st_size
        if size < read:
            return f"{self.path.name} was truncated to {size:,} bytes"
        try:
            now = os.stat(self.path)
        except OSError:
            return None  # removed: its writer may still write to it
        if (now.st_dev, now.st_ino) != self.file:
            return f"{self.path.name} was replaced by another file"
        return None


def chunks(
    handle: BinaryIO,
    keep_going: KeepGoing | None,
    size: int = CHUNK,
    poll: float = POLL,
    changed: Callable[[], str | None] | None = None,
) -> Iterator[bytes]:
    """The data of `handle`; at its end, b"" and, while `keep_going()`, what comes next.
    FileChanged when, at its end, `changed()` says why the file is no longer the one read."""
    while True:
        data = handle.read(size)
        if data:
            yield data
            continue
        if keep_going is None or not keep_going():
            return
        why = changed() if changed is not None else None
        if why is not None:
            raise FileChanged(why)
        yield b""
        time.sleep(poll)


def gunzipped(data: Iterator[bytes], path: Path, warnings: list[str]) -> Iterator[bytes]:
    """The decompressed data of gzip `data` (a gzip file being written decompresses as far
    as it has come); the empty chunks of `chunks` are passed on."""
    decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
    for chunk in data:
        if not chunk:
            yield b""
            continue
        try:
            yield decompressor.decompress(chunk)
        except zlib.error as error:
            raise RecordingError(f"{path}: corrupt gzip data ({error})") from error
        if decompressor.eof:
            return
    if not decompressor.eof:
        warnings.append(f"{path}: gzip stream cut short")


def lines(data: Iterator[bytes]) -> Iterator[tuple[int, bytes]]:
    """(offset, line) for each line of the stream of chunks, (offset, b"") for each empty
    chunk (caught up); a last line without its newline only once the stream ends."""
    offset, rest = 0, b""
    for chunk in data:
        if not chunk:
            yield offset + len(rest), b""
            continue
        buffer = rest + chunk
        start = 0
        while (end := buffer.find(b"\n", start)) >= 0:
            yield offset, buffer[start : end + 1]
            offset += end + 1 - start
            start = end + 1
        rest = buffer[start:]
    if rest:
        yield offset, rest


def followed_records(
    path: Path, keep_going: KeepGoing, idle: Callable[[], object], warnings: list[str]
) -> Iterator[dict[str, Any]]:
    """The records of a recording being written (header first), following it while
    `keep_going()`; `idle()` each time the end is reached. Lines that are not records are
    skipped and said in `warnings`, as `capture.reader.iter_records` does. A file that
    changes under it (`FileChanged`) ends the records: the index says so."""
    last: tuple[float, float] | None = None  # the latest record's time, when it was read
    with path.open("rb") as handle, contextlib.suppress(FileChanged):
        gzip = handle.read(2) == GZIP_MAGIC
        handle.seek(0)
        data = chunks(handle, keep_going, changed=Changed(path, handle))
        for offset, line in lines(gunzipped(data, path, warnings) if gzip else data):
            if not line:
                idle()
                if last is not None:
                    yield clock_record(last[0] + time.monotonic() - last[1])
            elif line.strip():
                record = _record(line)
                if record is None:
                    warnings.append(f"{path}: skipped a line at byte {offset}: not a record")
                    continue
                if isinstance(record.get("time"), (int, float)):
                    last = (max(float(record["time"]), last[0] if last else 0.0), time.monotonic())
                yield record


def clock_record(now: float) -> dict[str, Any]:
    """What the recording's clock says while nothing is written (`explain.stream`'s
    "clock" record): its latest time, plus the seconds since it was read. Live, that is
    the time now; played back faster, less than the playback's (explained later, never
    earlier, than the stream would have with the records to come)."""
    return cast(dict[str, Any], records.clock(time=now))


def _record(line: bytes) -> dict[str, Any] | None:
    try:
        record = loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) and "record" in record else None


class AutoFollow:
    """`replay`'s default: follow when, at its end, the recording looks still written to.

    Called at every end the reader reaches; the first call decides, from `open_exchanges()`
    and the file's modification time, and the decision stays."""

    def __init__(self, path: Path, open_exchanges: Callable[[], int]) -> None:
        self.path = path
        self.open_exchanges = open_exchanges
        self.decided: bool | None = None

    def __call__(self) -> bool:
        if self.decided is None:
            self.decided = self.open_exchanges() > 0 and _recent(self.path)
        return self.decided


def _recent(path: Path) -> bool:
    try:
        return time.time() - os.stat(path).st_mtime < RECENT
    except OSError:
        return False
