"""Playback: a recording played again on its own clock, so a room can watch it unfold.

`replay FILE --speed 1` does not show the file at once: a `Player` thread copies its
records, in file order, into a private temporary recording as the playback `Clock`
reaches each record's time, and the app follows that file as it would a live proxy's
(`listing/follow.py`). Everything the live view does comes with it: rows appear as their request
comes, get their status and duration when the response and end come, and a watch's
events arrive one by one (the detail is explained over what has been played so far).

The clock runs at `speed` times recording time (`SPEEDS`: ¼x to 64x), pauses, and steps:
`step()` plays up to the next exchange's request and pauses there. It reads time from an
injected `now` (time.monotonic by default), so tests drive it deterministically.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Generator
from pathlib import Path
from typing import IO, NamedTuple

from textual.binding import Binding, BindingType

from k8s_wiretap.capture.reader import GZIP_MAGIC, loads
from k8s_wiretap.views.tui.listing.follow import chunks, gunzipped, lines
from k8s_wiretap.views.tui.listing.rows import clock as clock_text

__all__ = ["PLAYBACK_ACTIONS", "PLAYBACK_BINDINGS", "SPEEDS", "Clock", "Player"]

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
TICK = 0.01  # seconds the player sleeps between two looks at the clock

PLAYBACK_BINDINGS: list[BindingType] = [
    Binding("p", "playback('pause')", "pause/play", id="playback.pause"),
    Binding("full_stop", "playback('step')", "step", id="playback.step", show=False),
    Binding("right_square_bracket", "playback('faster')", "faster", id="playback.faster"),
    Binding("left_square_bracket", "playback('slower')", "slower", id="playback.slower"),
]
PLAYBACK_ACTIONS = frozenset({"playback"})


class Clock:
    """Recording time, running at `speed` from `start` while not paused."""

    def __init__(
        self, start: float, speed: float = 1.0, now: Callable[[], float] = time.monotonic
    ) -> None:
        self._now = now
        self._lock = threading.Lock()
        self._at, self._since = start, now()  # recording time `_at` at `_since`
        self.speed = speed
        self.paused = False

    def time(self) -> float:
        with self._lock:
            return self._time()

    def _time(self) -> float:
        if self.paused:
            return self._at
        return self._at + (self._now() - self._since) * self.speed

    def _rebase(self, at: float | None = None) -> None:
        self._at, self._since = self._time() if at is None else at, self._now()

    def set_speed(self, speed: float) -> None:
        with self._lock:
            self._rebase()
            self.speed = speed

    def faster(self, by: int = 1) -> float:
        """The next speed of `SPEEDS` up (`by` -1: down)."""
        at = min(range(len(SPEEDS)), key=lambda n: abs(SPEEDS[n] - self.speed))
        self.set_speed(SPEEDS[max(0, min(len(SPEEDS) - 1, at + by))])
        return self.speed

    def pause(self, paused: bool = True) -> None:
        with self._lock:
            self._rebase()
            self.paused = paused

    def jump(self, at: float) -> None:
        """Recording time is `at` now (a step)."""
        with self._lock:
            self._rebase(max(at, self._time()))


class Player:
    """Plays `source` into a temporary recording (`path`) on `clock`, in a thread."""

    def __init__(
        self, source: Path, speed: float = 1.0, now: Callable[[], float] = time.monotonic
    ) -> None:
        self.source = source
        self._folder = Path(tempfile.mkdtemp(prefix="k8s-wiretap-playback-"))  # 0700
        self.path = self._folder / source.name.removesuffix(".gz")
        self._out: IO[bytes] = os.fdopen(
            os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb"
        )
        self._records = _timed_lines(source)
        first = next(self._records, None)  # the header
        self._pending = next(self._records, None)
        self.start = self._pending.time if self._pending else 0.0
        self.end = self.start
        self.clock = Clock(self.start, speed, now)
        if first is not None:
            self._write(first.line)
        self._stop = threading.Event()
        self._step = threading.Event()
        self._thread = threading.Thread(target=self._run, name="k8s-wiretap playback", daemon=True)

    @property
    def playing(self) -> bool:
        """Records are still to come (what the app's follower asks)."""
        return self._pending is not None and not self._stop.is_set()

    def run(self) -> Player:
        self._thread.start()
        return self

    def _write(self, line: bytes) -> None:
        self._out.write(line if line.endswith(b"\n") else line + b"\n")

    def _run(self) -> None:
        while self._pending is not None and not self._stop.is_set():
            if self._step.is_set():
                self._step.clear()
                self._play_step()
            self._play_until(self.clock.time())
            self._out.flush()
            time.sleep(TICK)
        self._out.flush()

    def _play_until(self, now: float) -> None:
        while self._pending is not None and self._pending.time <= now:
            self._advance()

    def _advance(self) -> _Line:
        assert self._pending is not None
        played = self._pending
        self._write(played.line)
        self.end = max(self.end, played.time)
        self._pending = next(self._records, None)
        return played

    def _play_step(self) -> None:
        """Up to and including the next request record; the clock paused at its time."""
        self.clock.pause()
        while self._pending is not None:
            played = self._advance()
            if played.kind == "request":
                self.clock.jump(played.time)
                return

    # -- the app's keys ---------------------------------------------------------------------
    def act(self, what: str) -> None:
        clock = self.clock
        if what == "pause":
            clock.pause(not clock.paused)
        elif what == "step":
            self._step.set()
        elif what in ("faster", "slower"):
            clock.faster(1 if what == "faster" else -1)

    def status(self) -> str:
        """The clock for the title: ▶ 2x 22:57:16.578 +12.3 s."""
        clock = self.clock
        now = clock.time() if self.playing else self.end
        state = "⏸" if clock.paused else "▶"
        speed = f"{clock.speed:g}x"
        ended = "" if self.playing else " [dim]played[/]"
        return f"{state} {speed} {clock_text(now)} +{max(0.0, now - self.start):.1f} s{ended}"

    def close(self) -> None:
        """Stop playing; the temporary recording is removed."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)
        self._out.close()
        self._records.close()
        shutil.rmtree(self._folder, ignore_errors=True)


class _Line(NamedTuple):
    time: float
    kind: str
    line: bytes


def _timed_lines(path: Path) -> Generator[_Line, None, None]:
    """Each record line of a recording, plain or gzip, with its record's kind and time (a
    line without a time has the time of the one before it)."""
    warnings: list[str] = []
    with path.open("rb") as handle:
        gzip = handle.read(2) == GZIP_MAGIC
        handle.seek(0)
        data = chunks(handle, None)
        last = 0.0
        for _offset, line in lines(gunzipped(data, path, warnings) if gzip else data):
            if not line.strip():
                continue
            try:
                record = loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                last = float(record.get("time") or last)
                yield _Line(last, str(record.get("record")), line)
