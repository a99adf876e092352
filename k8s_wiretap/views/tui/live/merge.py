"""A recording in parts (`proxy --workers N`) on screen: its parts merged into one file.

The TUI reads one file: its index keeps each record's byte offset and reads records back
from there (`listing/index.py`), and it follows that file as it grows
(`listing/follow.py`). A recording in parts (`capture/parts.py`: `rec.jsonl`,
`rec.jsonl.part-1`, … one per worker process) is therefore merged first, as a playback is
played (`playback.py`): a `Merger` thread reads every part as it grows, parts that appear
later (a restarted worker's) included, and writes their records, in time order, into a
private temporary recording (`path`, 0600 in a 0700 folder, removed by `close()`), which
the app follows for as long as `writing()` says.

The parts are read a chunk at a time and a record is written once no part still being
read can have an earlier one, so a recording larger than memory merges in little. While
the parts are followed, a record is also held until it is `HOLD` seconds old: each
worker writes its records in bursts (~20 ms apart), so a record of one part may reach
its file after a later one of another part; held that long, they still come out in
time order. Once following stops every record left is written at once. Nothing is held
longer than that: live, the list runs `HOLD` behind the traffic.

When are the parts followed? For a live proxy while it runs (`keep_going`); for `replay`
as `--follow` / `--no-follow` say, and by default when, read to their end, some exchange
is still open and some part was written to in the last `listing.follow.RECENT` seconds,
as for a recording in one file.
"""

from __future__ import annotations

import heapq
import json
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from k8s_wiretap.capture import parts
from k8s_wiretap.capture.reader import loads
from k8s_wiretap.views.tui.listing.follow import POLL, RECENT, KeepGoing

__all__ = ["AUTO", "HOLD", "Merger", "Shown", "keep_going", "shown"]

HOLD = 0.25  # seconds a followed record waits for earlier ones of other parts
AUTO = "auto"  # follow as `replay` does by default
DISCOVER = 1.0  # seconds between two looks for a new part (a restarted worker's)
CHUNK = 1 << 20


class _Part:
    """One part file, read as it grows: its complete lines, its latest record time."""

    def __init__(self, path: Path, number: int) -> None:
        self.path = path
        self.number = number
        self.handle = path.open("rb")
        self.rest = b""
        self.header = True  # its first line is its header: not merged
        self.last = 0.0  # the latest record time read
        self.read_lines = 0  # lines read: ties of time keep the part's own order

    def read(self, final: bool) -> tuple[list[tuple[float, int, int, bytes]], bool]:
        """(time, part, number, line) for each line of the next `CHUNK` of the file (with
        `final`, at its end, a last line without its newline too), and whether more is
        there to read already."""
        chunk = self.handle.read(CHUNK)
        more = len(chunk) == CHUNK
        *complete, self.rest = (self.rest + chunk).split(b"\n")
        if final and not more and self.rest:
            complete.append(self.rest)
            self.rest = b""
        timed = []
        for line in complete:
            if not line.strip():
                continue
            if self.header:
                self.header = False
                continue
            self.read_lines += 1
            timed.append((self._time(line), self.number, self.read_lines, line + b"\n"))
        return timed, more

    def _time(self, line: bytes) -> float:
        try:
            record = loads(line)
        except ValueError:
            return self.last  # not a record: where it stands (the index says so)
        stamp = record.get("time") if isinstance(record, dict) else None
        if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
            self.last = max(self.last, float(stamp))
        return self.last

    def recent(self) -> bool:
        try:
            return time.time() - os.fstat(self.handle.fileno()).st_mtime < RECENT
        except OSError:
            return False

    def close(self) -> None:
        self.handle.close()


class Merger:
    """Merges the parts of `source` (part 0, header `header`) into `path`, in a thread;
    follows them while `keep_going()` (None: read them once; `AUTO`: decide as `replay`
    does by default)."""

    def __init__(
        self, source: Path, header: dict[str, Any], keep_going: KeepGoing | str | None
    ) -> None:
        self.source = source
        self.header = header
        self.keep_going = keep_going
        self._folder = Path(tempfile.mkdtemp(prefix="k8s-wiretap-parts-"))  # 0700
        self.path = self._folder / source.name
        self._out: IO[bytes] = os.fdopen(
            os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb"
        )
        self._out.write(_json_line(parts.single(header)))
        self._out.flush()
        self._parts: list[_Part] = [_Part(source, 0)]
        self._held: list[tuple[float, int, int, bytes]] = []
        self._open: set[str] = set()
        self._decided: bool | None = None
        self._looked = -DISCOVER  # when the folder was last looked at for new parts
        self._stop = threading.Event()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="k8s-wiretap merge", daemon=True)

    def run(self) -> Merger:
        self._thread.start()
        return self

    def writing(self) -> bool:
        """Records may still come (what the app's follower asks)."""
        return not self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Until every record is written (a merge that does not follow)."""
        return self._done.wait(timeout)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                if self._round(final=False):
                    continue  # more to read already
                if not self._following():  # caught up, and not following: the rest
                    while self._round(final=True) and not self._stop.is_set():
                        pass
                    return
                time.sleep(POLL)
        finally:
            self._out.flush()
            self._done.set()

    def _following(self) -> bool:
        """Caught up with every part: read on? (`AUTO` decides the first time.)"""
        keep_going = self.keep_going
        if keep_going is None:
            return False
        if keep_going == AUTO:
            if self._decided is None:
                self._decided = bool(self._open) and any(p.recent() for p in self._parts)
            return self._decided
        assert callable(keep_going)
        return keep_going()

    def _round(self, final: bool) -> bool:
        """Read the next chunk of every part, and write what is safe to write: records no
        later than what a part not read to its end has reached, and, unless `final`, at
        least `HOLD` seconds old. Whether some part has more to read already."""
        self._discover()
        behind = []  # how far the parts with more to read have come
        for part in self._parts:
            items, more = part.read(final)
            for item in items:
                heapq.heappush(self._held, item)
                self._track(item[3])
            if more:
                behind.append(part.last)
        cutoff = min(behind, default=float("inf"))
        if not final:
            cutoff = min(cutoff, time.time() - HOLD)
        held = self._held
        while held and held[0][0] <= cutoff:
            self._out.write(heapq.heappop(held)[3])
        self._out.flush()
        return bool(behind)

    def _discover(self) -> None:
        now = time.monotonic()
        if now - self._looked < DISCOVER:
            return
        self._looked = now
        known = {part.path for part in self._parts}
        for path in parts.siblings(self.source, self.header):
            if path not in known:
                number = parts.part_number(path)
                self._parts.append(_Part(path, number))

    def _track(self, line: bytes) -> None:
        """Which exchanges are open (for `AUTO`): requests without an end yet."""
        if b'"request"' not in line and b'"end"' not in line:
            return
        try:
            record = loads(line)
        except ValueError:
            return
        if not isinstance(record, dict):
            return
        if record.get("record") == "request":
            self._open.add(str(record.get("id")))
        elif record.get("record") == "end":
            self._open.discard(str(record.get("id")))

    def close(self) -> None:
        """Stop merging; the temporary recording is removed."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)
        self._out.close()
        for part in self._parts:
            part.close()
        shutil.rmtree(self._folder, ignore_errors=True)


def _json_line(record: dict[str, Any]) -> bytes:
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


class Shown:
    """What the app reads: `path`, written while `writing()`; `close()` when it quits."""

    def __init__(self, path: Path, writing: KeepGoing | None, merger: Merger | None = None) -> None:
        self.path = path
        self.writing = writing
        self.merger = merger

    def close(self) -> None:
        if self.merger is not None:
            self.merger.close()


def shown(
    source: Path, keep_going: KeepGoing | str | None, writing: KeepGoing | None = None
) -> Shown:
    """`source` as the app reads it: itself, written while `writing()`, for a recording
    in one file; for one in parts, a `Merger`'s file, its parts followed while
    `keep_going()` (None: not; `AUTO`: as `replay` decides by default). A file that is
    no recording is shown as it is (the app says what is wrong with it)."""
    header = _header(source)
    if header is None or "recording" not in header or header.get("part") != 0:
        return Shown(source, writing)
    merger = Merger(source, header, keep_going).run()
    return Shown(merger.path, merger.writing, merger)


def keep_going(follow: bool | None, writer: KeepGoing | None) -> KeepGoing | str | None:
    """How long to follow the parts, from what the app is told of its file: while its
    `writer` writes, else as `follow` says (`AUTO` for None)."""
    if writer is not None:
        return writer
    if follow is None:
        return AUTO
    return (lambda: True) if follow else None


def _header(path: Path) -> dict[str, Any] | None:
    try:
        with path.open("rb") as handle:
            record = loads(handle.readline(1 << 16))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("record") == "header" else None
