"""The index: one row per exchange of the real recordings, records read back by offset."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.capture import records
from k8s_wiretap.capture.assemble import Assembler
from k8s_wiretap.capture.format import cut_note, header_record
from k8s_wiretap.capture.reader import RecordingError, load
from k8s_wiretap.views.tui.listing.index import RecordingIndex
from tests.recorded import exchange_count
from tests.views.tui.recorded import STORY, STORY_1_20, explained_index, indexed


@pytest.mark.parametrize(("name", "path"), [("default", STORY), ("1.20", STORY_1_20)])
def test_one_row_per_exchange_as_the_reader_assembles_them(name: str, path: Path) -> None:
    index, recording = indexed(name), load(path)
    assert [r.id for r in index.rows] == [e.id for e in recording.exchanges]
    for row, exchange in zip(index.rows, recording.exchanges, strict=True):
        assert (row.method, row.path, row.verb) == (
            exchange.method,
            exchange.path,
            exchange.info.verb,
        )
        assert row.status == exchange.status
        assert row.events == len(exchange.events)
        assert row.ended == (exchange.end.time if exchange.end else None)
    assert not index.warnings
    assert index.done


def test_records_read_back_by_offset_are_the_recorded_ones() -> None:
    index = indexed()
    patch = next(n for n, r in enumerate(index.rows) if r.verb == "patch")
    records = index.records([patch], 0, 0)
    assert records[0]["record"] == "header"
    assert [r["record"] for r in records[1:]] == ["request", "response", "end"]
    assert {r["id"] for r in records[1:]} == {index.rows[patch].id}


def test_etcd_records_are_indexed_by_time() -> None:
    index = indexed()
    assert len(index.etcd) // 3 == len(load(STORY).etcd) > 0
    since, until = index.rows[0].time, index.rows[-1].time + 60
    assert (
        sum(r["record"] == "etcd" for r in index.records([], since, until)) == len(index.etcd) // 3
    )


def test_the_release_comes_from_the_first_version_exchange() -> None:
    index = indexed()
    assert index.release is not None
    assert index.rows[index.release].path == "/version"


def test_rows_get_the_explanations_words() -> None:
    index = explained_index()
    assert all(row.summary and row.noise is not None for row in index.rows)
    scale = next(r for r in index.rows if r.resource == "deployments/scale")
    assert scale.summary.startswith("kubectl scale sets Deployment default/web's replicas")
    heartbeats = [r for r in index.rows if r.resource == "leases" and r.component == "kubelet"]
    assert heartbeats and all(r.noise for r in heartbeats)  # the explanation's word
    kubelet = [r for r in index.rows if r.component == "kubelet"]
    assert kubelet and any(r.verb == "watch" for r in kubelet)


def _story_lines() -> list[bytes]:
    return gzip.decompress(STORY.read_bytes()).splitlines(keepends=True)


def test_a_plain_file_indexes_like_the_gzip_one(tmp_path: Path) -> None:
    plain = tmp_path / "story.jsonl"
    plain.write_bytes(b"".join(_story_lines()))
    index = RecordingIndex(plain)
    index.scan()
    assert [r.id for r in index.rows] == [r.id for r in indexed().rows]
    assert index.records([5], 0, 0)[1:] == indexed().records([5], 0, 0)[1:]
    index.close()


def test_a_cut_gzip_keeps_what_came_before_the_cut(tmp_path: Path) -> None:
    cut = tmp_path / "cut.jsonl.gz"
    data = STORY.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    index = RecordingIndex(cut)
    index.scan()
    assert 0 < len(index) < len(indexed())
    assert any("gzip stream cut short" in w for w in index.warnings)


def test_a_cut_last_line_is_skipped_with_a_warning(tmp_path: Path) -> None:
    lines = _story_lines()
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(lines[:-1]) + lines[-1][:20])
    index = RecordingIndex(cut)
    index.scan()
    assert len(index) == len(indexed())
    assert any("not a record" in w for w in index.warnings)


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"hello world\n", "not a k8s-wiretap recording (no header line)"),
        (b"", "not a k8s-wiretap recording (no header line)"),
        (
            json.dumps(
                {"record": "header", "format": "k8s-wiretap-recording", "version": 2}
            ).encode(),
            "k8s-wiretap-recording version 2 is not k8s-wiretap-recording version 1",
        ),
    ],
)
def test_what_is_not_a_recording_is_refused(tmp_path: Path, content: bytes, said: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(RecordingError, match=re.escape(said)):
        RecordingIndex(path).scan()


def test_corrupt_gzip_data_is_refused(tmp_path: Path) -> None:
    data = bytearray(STORY.read_bytes())
    data[5000:5100] = bytes(100)
    path = tmp_path / "corrupt.jsonl.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(RecordingError, match="corrupt gzip data"):
        RecordingIndex(path).scan()


def test_rows_are_there_before_the_file_is_read_and_a_scan_can_stop() -> None:
    index = RecordingIndex(STORY)
    seen: list[tuple[int, bool]] = []
    index.scan(lambda rows: seen.append((rows, index.done)), every=100)
    assert seen[0] == (100, False) and seen[-1] == (exchange_count(STORY), True)
    assert [rows for rows, _ in seen] == sorted(rows for rows, _ in seen)
    stopping = RecordingIndex(STORY)
    stopping.scan(every=100, stopped=lambda: len(stopping) >= 300)
    assert len(stopping) == 300 and not stopping.done


def test_a_recording_a_signal_cut_is_said_to_be_cut(tmp_path: Path) -> None:
    cut = tmp_path / "cut.jsonl"
    note = cut_note("SIGTERM", "it holds the exchanges written before", 1.0)
    cut.write_bytes(b"".join(_story_lines()) + json.dumps(note).encode() + b"\n")
    index = RecordingIndex(cut)
    index.scan()
    assert len(index) == len(indexed())
    said = "a cut recording: recording cut by SIGTERM: it holds the exchanges written before"
    assert index.warnings == [f"{cut}: {said}"]
    index.close()


def test_records_become_rows_as_the_assembler_makes_exchanges_of_them(tmp_path: Path) -> None:
    """The index has no dispatch of its own: a record whose request was not recorded is a
    row with the assembler's warning, a malformed one is skipped with its warning, and a
    watch's events are counted with their sizes."""
    header = header_record(redacted=True, max_body=64)
    watch = [
        records.request(id="w", time=2.0, method="GET", path="/api/v1/pods?watch=1", headers=[]),
        records.response(id="w", time=2.1, status=200, headers=[]),
        *(
            records.event(id="w", seq=n, time=2.2, kind="watch", data={"text": "{}", "size": 9})
            for n in range(3)
        ),
        records.end(id="w", time=3.0, events=3),
    ]
    lost = [
        records.response(id="lost", time=5.0, status=503, headers=[]),
        {"record": "response", "id": "lost", "time": 5.1, "headers": []},  # no status
        records.end(id="lost", time=6.0, error="bad chunk header"),
    ]
    written: list[dict[str, Any]] = [json.loads(json.dumps(r)) for r in [header, *watch, *lost]]
    path = tmp_path / "rec.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in written))
    index = RecordingIndex(path)
    index.scan()
    assembler = Assembler()
    assembler.feed_all(written[1:])
    assert [r.id for r in index.rows] == [e.id for e in assembler.exchanges] == ["w", "lost"]
    assert index.warnings == assembler.warnings and len(index.warnings) == 2
    assert "response record for exchange lost whose request was not recorded" in index.warnings[0]
    assert index.warnings[1].startswith("skipped a malformed response record of lost")
    w, orphan = index.rows
    assert (w.events, w.size, w.ended) == (3, 27, 3.0)
    assert (orphan.method, orphan.path, orphan.status, orphan.error) == (
        "",
        "",
        503,
        "bad chunk header",
    )
    assert index.open == 0
    index.close()
