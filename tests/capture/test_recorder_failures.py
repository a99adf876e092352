"""The recorder when recording fails: a real full filesystem, a real blocked pipe.

Traffic must never stop, slow down or grow memory because recording failed: the output that
fails is taken out and said, the others go on, and the queue keeps to its budget.
"""

from __future__ import annotations

import contextlib
import io
import os
import resource
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from k8s_wiretap.capture.events import Chunk, End, RequestSeen, ResponseSeen
from k8s_wiretap.capture.outputs import FileOutput
from k8s_wiretap.capture.reader import iter_records, load
from k8s_wiretap.capture.recorder import END_ROOM, Output, Recorder
from k8s_wiretap.views.console import ConsoleOutput

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


def exchange(recorder: Recorder, n: int, size: int, chunk: int = 64 * KIB) -> None:
    """A LIST of ConfigMaps whose JSON answer is `size` bytes, as the proxy hands it on."""
    exchange_id = f"list-{n}"
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
            [(b"User-Agent", b"kubectl/v1.37.0")],
            None,
            None,
        )
    )
    recorder.put(
        ResponseSeen(
            exchange_id, now, 200, "OK", "HTTP/1.1", [(b"Content-Type", b"application/json")]
        )
    )
    head, tail = b'{"kind":"ConfigMapList","items":["', b'"]}'
    body = head + b"x" * (size - len(head) - len(tail)) + tail
    for start in range(0, len(body), chunk):
        recorder.put(Chunk(exchange_id, now, body[start : start + chunk]))
    recorder.put(End(exchange_id, now))


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
