"""A recording in parts on screen: the parts merged into one followed file, in time order."""

from __future__ import annotations

import asyncio
import heapq
import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from k8s_wiretap.capture import parts
from k8s_wiretap.capture.reader import iter_records, load
from k8s_wiretap.views.tui import ReplayApp
from k8s_wiretap.views.tui.live import merge
from k8s_wiretap.views.tui.live.merge import AUTO, HOLD, shown
from tests.capture.test_parts import exchange, request, two_workers, write_part
from tests.conftest import wait_until
from tests.views.tui.pilot import until


def append(path: Path, *records: dict[str, object]) -> None:
    with path.open("a") as handle:
        handle.write("".join(json.dumps(r) + "\n" for r in records))


def test_a_finished_recording_in_parts_is_merged_once(tmp_path: Path) -> None:
    source = two_workers(tmp_path)
    merged = shown(source, None)
    try:
        assert merged.merger is not None and merged.merger.wait(10)
        assert merged.writing is not None and not merged.writing()
        assert merged.path.name == source.name and merged.path.stat().st_mode & 0o777 == 0o600
        records = list(iter_records(merged.path, []))
        assert "part" not in records[0] and "recording" not in records[0]
        assert [r["id"] for r in records[1:] if r["record"] == "request"] == list("abcd")
        assert [e.id for e in load(merged.path).exchanges] == [e.id for e in load(source).exchanges]
    finally:
        merged.close()
    assert not merged.path.parent.exists()


def test_a_recording_in_one_file_is_shown_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"record": "header", "format": "k8s-wiretap-recording"}) + "\n")
    running = lambda: True  # noqa: E731
    recording = shown(path, running, running)
    assert recording.path == path and recording.writing is running and recording.merger is None


def test_followed_parts_are_merged_in_time_order_as_they_grow(tmp_path: Path) -> None:
    source = tmp_path / "rec.jsonl"
    write_part(source, "r1", 0, [])
    write_part(source, "r1", 1, [])
    live = [True]
    merged = shown(source, lambda: live[0], lambda: live[0])
    try:
        now = time.time()
        # worker 1's record of an earlier time reaches its file after worker 0's later one
        append(source, request("late", now + 0.05))
        time.sleep(0.05)
        append(parts.part_path(source, 1), request("early", now))
        write_part(source, "r1", 2, [request("restarted", now + 0.1)])  # a new worker's part

        def written() -> list[str]:
            return [r["id"] for r in iter_records(merged.path, []) if r["record"] == "request"]

        wait_until(lambda: len(written()) == 3, 10, "the three requests merged")
        assert written() == ["early", "late", "restarted"]
        writing = merged.writing
        assert writing is not None and writing()
        live[0] = False
        wait_until(lambda: not writing(), 10, "the merge to end with the proxy")
    finally:
        merged.close()


def test_records_of_one_time_keep_their_parts_order(tmp_path: Path) -> None:
    source = tmp_path / "rec.jsonl"
    # x's request was written after a later record, so it sorts with that record's time;
    # its end, of the same time, must still come after it (else an end without a request)
    late = {"record": "note", "time": 5.0, "level": "info", "message": "late"}
    x = [request("x", 4.9), {"record": "end", "id": "x", "time": 5.0}]
    write_part(source, "r1", 0, [late, *x])
    write_part(source, "r1", 1, exchange("b", 1.0))
    merged = shown(source, None)
    try:
        assert merged.merger is not None and merged.merger.wait(10)
        records = list(iter_records(merged.path, []))[1:]
        assert [(r["record"], r.get("id")) for r in records[-3:]] == [
            ("note", None),
            ("request", "x"),
            ("end", "x"),
        ]
        assert not load(merged.path).warnings
    finally:
        merged.close()


def test_a_followed_record_is_held_a_moment_for_earlier_ones(tmp_path: Path) -> None:
    source = two_workers(tmp_path)
    merged = shown(source, lambda: True)
    try:
        append(source, request("now", time.time()))
        started = time.monotonic()
        wait_until(
            lambda: any(r.get("id") == "now" for r in iter_records(merged.path, [])),
            10,
            "the record to be written",
        )
        assert time.monotonic() - started >= HOLD * 0.5  # held, not written at once
    finally:
        merged.close()


def test_replay_by_default_follows_parts_still_written(tmp_path: Path) -> None:
    source = tmp_path / "rec.jsonl"
    write_part(source, "r1", 0, [request("open", time.time())])
    write_part(source, "r1", 1, exchange("b", time.time()))
    followed = shown(source, AUTO)
    try:
        time.sleep(0.5)
        assert followed.writing is not None and followed.writing()  # open, and written now
    finally:
        followed.close()


def test_replay_by_default_reads_a_finished_recording_in_parts_once(tmp_path: Path) -> None:
    finished = shown(two_workers(tmp_path), AUTO)
    try:
        assert finished.writing is not None
        wait_until(lambda: not finished.writing(), 10, "a finished recording read once")  # type: ignore[misc]
    finally:
        finished.close()


def test_the_tui_lists_every_exchange_of_every_part(tmp_path: Path) -> None:
    source = two_workers(tmp_path)
    write_part(source, "r1", 2, exchange("e", 2.5))

    async def main() -> tuple[ReplayApp, list[str]]:
        app = ReplayApp(source)  # as `replay rec.jsonl` opens it
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.index.done, "the index")
            return app, [row.id for row in app.index.rows]

    app, ids = asyncio.run(main())
    assert ids == ["a", "b", "e", "c", "d"]
    assert app.path != source and not app.path.exists()  # merged, and removed on quitting


def test_parts_larger_than_a_chunk_merge_whole_and_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(merge, "CHUNK", 100)  # every record spans chunks
    most = [0]

    def push(heap: list[Any], item: Any) -> None:
        heapq.heappush(heap, item)
        most[0] = max(most[0], len(heap))

    monkeypatch.setattr(merge, "heapq", SimpleNamespace(heappush=push, heappop=heapq.heappop))
    source = tmp_path / "rec.jsonl"
    write_part(source, "r1", 0, [r for n in range(0, 60, 2) for r in exchange(f"e{n}", n)])
    write_part(source, "r1", 1, [r for n in range(1, 60, 2) for r in exchange(f"e{n}", n)])
    merged = shown(source, None)
    try:
        assert merged.merger is not None and merged.merger.wait(30)
        recording = load(merged.path)
        assert [e.id for e in recording.exchanges] == [f"e{n}" for n in range(60)]
        assert all(e.end is not None for e in recording.exchanges) and not recording.warnings
        assert most[0] <= 12  # a few records held at a time, not the recording (180)
    finally:
        merged.close()
