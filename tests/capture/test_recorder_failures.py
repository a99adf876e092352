"""The recorder when recording fails: a real full filesystem, a real blocked pipe.

Traffic must never stop, slow down or grow memory because recording failed: the output that
fails is taken out and said, the others go on, and the queue keeps to its budget; with
`retry`, the recording file is written again once its disk has room, with a note of the gap.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from textual.pilot import Pilot

from k8s_wiretap.capture.events import Chunk, End, RequestSeen, ResponseSeen
from k8s_wiretap.capture.outputs import FileOutput
from k8s_wiretap.capture.reader import iter_records, load
from k8s_wiretap.capture.recorder import END_ROOM, Output, Recorder
from k8s_wiretap.views.console import ConsoleOutput
from k8s_wiretap.views.tui import ReplayApp
from tests.views.tui.pilot import drive

KIB = 1024
MIB = 1024 * KIB


@contextlib.contextmanager
def small_filesystem(folder: Path, size: str = "1m") -> Iterator[str]:
    """A real filesystem of `size` at `folder`, to fill: a tmpfs mount (root with
    CAP_SYS_ADMIN, as the test machines run). Yields what the disk says when it is full.
    Without the right to mount, RLIMIT_FSIZE stands in: this process may then write no
    file past `size` (SIGXFSZ ignored, so a write fails with EFBIG instead of killing us),
    and what it says is "File too large"."""
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode == 0:
        try:
            yield "No space left on device"
        finally:
            subprocess.run(["umount", "-l", str(folder)], check=False)
        return
    limit = int(size[:-1]) * MIB
    previous = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, previous[1]))
    try:
        yield "File too large"
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, previous)
        signal.signal(signal.SIGXFSZ, handler)


def free_space(full: str) -> None:
    """Room again on a `small_filesystem` whose files were deleted: with the RLIMIT_FSIZE
    stand-in (`full` is "File too large"), deleting frees nothing, so the limit goes."""
    if full == "File too large":
        resource.setrlimit(resource.RLIMIT_FSIZE, resource.getrlimit(resource.RLIMIT_FSIZE)[1:] * 2)


def begin(recorder: Recorder, exchange_id: str) -> None:
    """The request and the response head of a LIST of ConfigMaps, as the proxy hands them on."""
    ask(recorder, exchange_id)
    answer(recorder, exchange_id)


def ask(recorder: Recorder, exchange_id: str) -> None:
    """The request of a LIST of ConfigMaps."""
    now = time.time()
    recorder.put(
        RequestSeen(
            exchange_id,
            now,
            "default",
            {"address": "127.0.0.1:1"},
            "https://127.0.0.1:6443",
            "GET",
            "/api/v1/configmaps",
            "HTTP/1.1",
            [(b"User-Agent", b"kubectl/v1.33.0")],
            None,
            None,
        )
    )


def answer(recorder: Recorder, exchange_id: str) -> None:
    """The response head of `ask`'s LIST."""
    now = time.time()
    recorder.put(
        ResponseSeen(
            exchange_id, now, 200, "OK", "HTTP/1.1", [(b"Content-Type", b"application/json")]
        )
    )


def finish(recorder: Recorder, exchange_id: str, size: int, chunk: int = 64 * KIB) -> None:
    """The rest of `begin`'s LIST: a JSON answer of `size` bytes, in chunks, and the end."""
    head, tail = b'{"kind":"ConfigMapList","items":["', b'"]}'
    body = head + b"x" * (size - len(head) - len(tail)) + tail
    now = time.time()
    for start in range(0, len(body), chunk):
        recorder.put(Chunk(exchange_id, now, body[start : start + chunk]))
    recorder.put(End(exchange_id, now))


def exchange(recorder: Recorder, n: int, size: int, chunk: int = 64 * KIB) -> None:
    """A LIST of ConfigMaps whose JSON answer is `size` bytes, as the proxy hands it on."""
    begin(recorder, f"list-{n}")
    finish(recorder, f"list-{n}", size, chunk)


def test_a_full_disk_takes_the_recording_out_and_the_console_goes_on(tmp_path: Path) -> None:
    """30 LISTs of 100 KiB into a 1 MiB filesystem: the file fails, is said once
    ("recording stopped: PATH: No space left on device") and taken out; the console prints
    every exchange and the failure; the file reads back up to where the disk filled."""
    with small_filesystem(tmp_path / "disk") as full:
        path = tmp_path / "disk" / "recording.jsonl"
        printed = io.StringIO()
        file, console = FileOutput(path, redacted=False, max_body=16 * MIB), ConsoleOutput(printed)
        failures: list[tuple[str, Output | None]] = []
        recorder = Recorder([file, console], on_failure=lambda *failure: failures.append(failure))
        recorder.start()
        for n in range(30):
            exchange(recorder, n, 100 * KIB)
        recorder.close()

        assert failures == [(f"recording stopped: {path}: {full}", file)]
        assert recorder.outputs == [console]
        lines = printed.getvalue().splitlines()
        assert sum("/api/v1/configmaps" in line for line in lines) == 30
        assert any(line.endswith(f"error: recording stopped: {path}: {full}") for line in lines)
        recording = load(path)
        assert 0 < len(recording.exchanges) < 30
        assert path.stat().st_size <= MIB


def test_a_recording_resumes_once_its_disk_has_room_again(tmp_path: Path) -> None:
    """`retry`: a real 1 MiB filesystem, with 300 KiB of another file on it, fills up with
    LISTs: the recording is said stopped, and suspended. While the disk is full, LISTs go
    by (dropped and counted) and the retries fail. The other file is deleted: within a
    retry the recording resumes ("recording resumed: PATH (N records lost)"), its next line
    is a note of the gap, and what follows is recorded. `load` gives the exchanges before
    and after the gap, the gap's note, an exchange open across the gap with its whole
    body, and one whose request fell in the gap from its end (with a warning)."""
    with small_filesystem(tmp_path / "disk") as full:
        other, path = tmp_path / "disk" / "other", tmp_path / "disk" / "recording.jsonl"
        other.write_bytes(os.urandom(300 * KIB))
        file = FileOutput(path, redacted=False, max_body=16 * MIB)
        failures: list[tuple[str, Output | None]] = []
        resumed: list[tuple[str, Output]] = []
        recorder = Recorder(
            [file],
            on_failure=lambda *failure: failures.append(failure),
            retry=0.2,
            on_resumed=lambda *back: resumed.append(back),
        ).start()
        for n in range(5):
            exchange(recorder, n, 10 * KIB)
        begin(recorder, "across")  # open across the gap
        ask(recorder, "headless")  # its response head falls in the gap
        wait_for(lambda: '"id":"across"' in path.read_text(), "the first exchanges")
        for n in range(5, 30):
            exchange(recorder, n, 100 * KIB)
        wait_for(lambda: bool(failures), "the disk to fill")
        begin(recorder, "cut")  # its request and response fall in the gap, its end does not
        answer(recorder, "headless")
        for n in range(30, 40):
            exchange(recorder, n, 10 * KIB)
        time.sleep(0.5)  # retries while the disk is still full fail
        assert not resumed and recorder.outputs == []
        other.unlink()
        free_space(full)
        wait_for(lambda: bool(resumed), "the recording to resume")
        finish(recorder, "across", 100 * KIB)
        finish(recorder, "cut", 10 * KIB)
        finish(recorder, "headless", 10 * KIB)
        for n in range(40, 45):
            exchange(recorder, n, 10 * KIB)
        recorder.close()
        assert failures == [(f"recording stopped: {path}: {full}", file)]
        [(said, output)] = resumed
        assert output is file
        lost = re.fullmatch(rf"recording resumed: {path} \(([\d,]+) records? lost\)", said)
        assert lost, said
        recording = load(path)
        [gap] = [note["message"] for note in recording.notes if "not written" in note["message"]]
        between = (
            rf"recording gap: {lost[1]} records? not written between (\S+Z) and (\S+Z) \({full}\)"
        )
        times = re.fullmatch(between, gap)
        assert times and times[1] <= times[2], gap
        assert int(lost[1].replace(",", "")) >= 10 * 3  # the LISTs of the gap, at least
        ended = {e.id: e for e in recording.exchanges if e.end is not None}
        assert {f"list-{n}" for n in range(5)} <= set(ended)
        assert {f"list-{n}" for n in range(40, 45)} <= set(ended)
        assert not {f"list-{n}" for n in range(30, 40)} & set(ended)  # in the gap
        assert ended["across"].request.path == "/api/v1/configmaps"
        assert ended["across"].response_body is not None
        assert ended["across"].response_body.size == 100 * KIB
        assert ended["cut"].request.unrecorded
        headless = ended["headless"]
        assert headless.response is None and headless.response_body is not None
        assert not headless.request.unrecorded
        readable(path, len(recording.exchanges))
        assert any("exchange cut whose request was not recorded" in w for w in recording.warnings)
        cut_short = [w for w in recording.warnings if w.endswith("not a complete record")]
        assert len(cut_short) <= 1  # the line the failure cut, and no record glued onto it
        assert len(recording.warnings) == 1 + len(cut_short), recording.warnings


def readable(path: Path, exchanges: int) -> None:
    """`explain` and `replay` (its every exchange explained) read the recording."""
    explained = subprocess.run(
        [sys.executable, "-m", "k8s_wiretap", "explain", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert explained.returncode == 0 and "Traceback" not in explained.stderr, explained.stderr

    async def listed(app: ReplayApp, pilot: Pilot[int]) -> None:
        assert app.exchange_list.count == exchanges

    drive(listed, path)


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_a_recorder_that_falls_behind_keeps_to_its_budget_and_notes_the_gap(
    tmp_path: Path,
) -> None:
    """The console writes into a pipe nobody reads yet: the recorder blocks, as on a stuck
    terminal. 50 MiB of LISTs go by; the queue holds at most its budget (4 MiB here, and
    the room for ends), the rest is dropped and counted. Once the pipe is read, the
    recording says how much was dropped, every exchange it has ends, and those that lost a
    part say so instead of keeping a body with a hole in it."""
    read_end, write_end = os.pipe()
    path = tmp_path / "recording.jsonl"
    file = FileOutput(path, redacted=False, max_body=16 * MIB)
    console = ConsoleOutput(os.fdopen(write_end, "w"))
    recorder = Recorder([file, console], budget=4 * MIB).start()
    for n in range(200):
        exchange(recorder, n, 256 * KIB)
        assert recorder.queued_bytes <= 4 * MIB + END_ROOM
    assert recorder.dropped > 0

    def drain() -> None:
        while os.read(read_end, 65536):
            pass

    drained = threading.Thread(target=drain)
    drained.start()
    recorder.close()
    console.stream.close()  # the end of the pipe: the reader sees EOF
    drained.join(30)
    os.close(read_end)

    warnings: list[str] = []
    records = list(iter_records(path, warnings))
    assert not warnings
    gaps = [r for r in records if r["record"] == "note" and "id" not in r]
    assert len(gaps) == 1
    assert gaps[0]["message"].startswith("recording gap: ")
    assert "dropped: the recorder fell behind by more than 4 MiB" in gaps[0]["message"]
    requests = {r["id"] for r in records if r["record"] == "request"}
    ends = {r["id"]: r for r in records if r["record"] == "end"}
    assert 0 < len(requests) < 200
    assert set(ends) == requests  # nothing of an exchange without its request, all end
    incomplete = {r["id"] for r in records if r["record"] == "note" and "id" in r}
    assert incomplete, "some exchange lost a part"
    for exchange_id, end in ends.items():
        if exchange_id in incomplete:
            assert "body" not in end
        else:
            assert end["body"]["size"] == 256 * KIB


class Exits:
    """An output that ends the recorder's thread as a bug would (SystemExit gets through
    every `except Exception`)."""

    def write(self, record: dict[str, object]) -> None:
        if record["record"] == "end":
            raise SystemExit("a bug")

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_a_recorder_that_dies_is_said_and_keeps_nothing(tmp_path: Path) -> None:
    failures: list[tuple[str, Output | None]] = []
    recorder = Recorder([Exits()], on_failure=lambda *failure: failures.append(failure))
    recorder.start()
    exchange(recorder, 0, 10 * KIB)
    deadline = time.monotonic() + 10
    while not failures and time.monotonic() < deadline:
        time.sleep(0.01)
    assert failures == [("recording stopped: the recorder failed: SystemExit('a bug')", None)]
    for n in range(1, 100):
        exchange(recorder, n, 1 * MIB)
    assert recorder.queued_bytes == 0
    recorder.close()


def test_the_proxys_put_never_waits_for_a_stuck_recorder(tmp_path: Path) -> None:
    """With the recorder blocked on a pipe, `put` still returns at once: 40 MiB of events
    are taken (queued or dropped) while the recorder has not moved."""
    read_end, write_end = os.pipe()
    recorder = Recorder([ConsoleOutput(os.fdopen(write_end, "w"))], budget=1 * MIB).start()
    for n in range(2000):  # lines enough to fill the pipe
        exchange(recorder, n, 100)
    time.sleep(0.5)
    done = threading.Event()

    def traffic() -> None:
        for n in range(40):
            exchange(recorder, n, MIB)
        done.set()

    threading.Thread(target=traffic).start()
    assert done.wait(30), "put blocked"
    assert recorder.queued_bytes <= 1 * MIB + END_ROOM
    with contextlib.suppress(OSError):
        os.close(read_end)  # the recorder's next write fails (EPIPE): it takes the output out
    recorder.close()
