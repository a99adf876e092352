"""A recording in parts (`proxy --workers N`): found from part 0, merged by time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from k8s_wiretap.capture import parts
from k8s_wiretap.capture.format import header_record
from k8s_wiretap.capture.reader import file_records, iter_records, load


def request(exchange: str, at: float, path: str = "/api/v1/pods") -> dict[str, Any]:
    return {
        "record": "request",
        "id": exchange,
        "time": at,
        "method": "GET",
        "path": path,
        "headers": [["User-Agent", "kubectl/v1.33.0 (linux/amd64) kubernetes/abc"]],
        "listener": "default",
    }


def response(exchange: str, at: float) -> dict[str, Any]:
    return {"record": "response", "id": exchange, "time": at, "status": 200, "headers": []}


def end(exchange: str, at: float) -> dict[str, Any]:
    return {"record": "end", "id": exchange, "time": at}


def exchange(name: str, at: float) -> list[dict[str, Any]]:
    return [request(name, at), response(name, at + 0.01), end(name, at + 0.02)]


def write_part(
    path: Path, recording: str, part: int, records: list[dict[str, Any]], tail: str = ""
) -> Path:
    workers = 2 if part == 0 else None
    header = header_record(
        redacted=True, max_body=1024, **parts.part_header(recording, part, workers)
    )
    lines = "".join(json.dumps(r) + "\n" for r in [header, *records])
    parts.part_path(path, part).write_text(lines + tail)
    return parts.part_path(path, part)


def two_workers(folder: Path) -> Path:
    """Worker 0 served a at 1.0 and c at 3.0, worker 1 b at 2.0 and d at 4.0."""
    path = folder / "rec.jsonl"
    write_part(path, "r1", 0, exchange("a", 1.0) + exchange("c", 3.0))
    write_part(path, "r1", 1, exchange("b", 2.0) + exchange("d", 4.0))
    return path


def test_load_reads_every_part_merged_in_time_order(tmp_path: Path) -> None:
    recording = load(two_workers(tmp_path))
    assert [e.id for e in recording.exchanges] == ["a", "b", "c", "d"]
    assert all(e.response is not None and e.end is not None for e in recording.exchanges)
    assert recording.header["part"] == 0 and recording.header["workers"] == 2
    assert recording.warnings == []


def test_records_of_the_parts_interleave_by_time(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    write_part(path, "r1", 0, [request("a", 1.0), request("c", 1.5), end("a", 3.0), end("c", 3.1)])
    write_part(path, "r1", 1, [request("b", 1.2), end("b", 2.0)])
    records = list(iter_records(path, []))
    assert records[0]["record"] == "header" and records[0]["part"] == 0
    assert [(r["record"], r["id"]) for r in records[1:]] == [
        ("request", "a"),
        ("request", "b"),
        ("request", "c"),
        ("end", "b"),
        ("end", "a"),
        ("end", "c"),
    ]
    times = [r["time"] for r in records[1:]]
    assert times == sorted(times)


def test_one_file_alone_reads_only_its_own_records(tmp_path: Path) -> None:
    path = two_workers(tmp_path)
    assert [r.get("id") for r in file_records(path, [])][1:] == ["a"] * 3 + ["c"] * 3


def test_a_restarted_workers_part_is_found_by_its_number(tmp_path: Path) -> None:
    path = two_workers(tmp_path)
    assert parts.next_part(path) == 2
    write_part(path, "r1", 2, exchange("e", 2.5))
    assert [e.id for e in load(path).exchanges] == ["a", "b", "e", "c", "d"]
    assert parts.next_part(path) == 3


def test_files_of_another_recording_beside_it_are_not_parts(tmp_path: Path) -> None:
    path = two_workers(tmp_path)
    write_part(path, "an-earlier-run", 2, exchange("old", 2.5))
    (tmp_path / "rec.jsonl.3").write_text("not a recording\n")
    (tmp_path / "rec.jsonl.gz").write_text("neither\n")
    assert [e.id for e in load(path).exchanges] == ["a", "b", "c", "d"]


def test_a_part_file_named_alone_is_read_alone(tmp_path: Path) -> None:
    path = two_workers(tmp_path)
    assert [e.id for e in load(parts.part_path(path, 1)).exchanges] == ["b", "d"]


def test_a_part_cut_short_loses_only_its_last_line(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    write_part(path, "r1", 0, exchange("a", 1.0))
    write_part(path, "r1", 1, [request("b", 2.0)], tail='{"record": "end", "id": "b", "ti')
    recording = load(path)
    assert [e.id for e in recording.exchanges] == ["a", "b"]
    assert recording.by_id()["b"].end is None
    cut = f"{path}.1: a cut recording: its last line is cut short (skipped)"
    assert recording.warnings == [cut]


def test_a_recording_in_one_file_has_no_parts(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(header_record(redacted=True, max_body=1)) + "\n")
    (tmp_path / "one.jsonl.1").write_text(path.read_text())  # a copy, not a part
    assert parts.all_parts(path) == [path]
    assert parts.siblings(path, header_record(redacted=True, max_body=1)) == []


def test_records_without_a_time_keep_their_place_in_their_part(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    untimed = {"record": "note", "level": "info", "message": "after a"}
    write_part(path, "r1", 0, [request("a", 1.0), untimed, request("c", 3.0)])
    write_part(path, "r1", 1, [request("b", 2.0)])
    records = list(iter_records(path, []))[1:]
    assert [r.get("id", r.get("message")) for r in records] == ["a", "after a", "b", "c"]


def test_single_drops_the_part_fields(tmp_path: Path) -> None:
    header = header_record(redacted=True, max_body=1, **parts.part_header("r", 0, 2))
    assert parts.single(header) == header_record(redacted=True, max_body=1) | {
        "created": header["created"]
    }
