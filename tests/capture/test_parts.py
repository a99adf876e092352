"""A recording in parts (`proxy --workers N`): found from part 0, merged by time; joined
into the one file named when the proxy stops."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.capture import parts
from k8s_wiretap.capture.format import header_record
from k8s_wiretap.capture.reader import file_records, iter_records, load
from tests.capture.test_recorder_failures import KIB, small_filesystem


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
    (tmp_path / "rec.jsonl.part-3").write_text("not a recording\n")
    (tmp_path / "rec.jsonl.1").write_text("not a part's name\n")
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
    cut = f"{path}.part-1: a cut recording: its last line is cut short (skipped)"
    assert recording.warnings == [cut]


def test_a_recording_in_one_file_has_no_parts(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(header_record(redacted=True, max_body=1)) + "\n")
    (tmp_path / "one.jsonl.part-1").write_text(path.read_text())  # a copy, not a part
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


def plain(path: Path) -> list[dict[str, Any]]:
    """The file read as any script reads it: json, line by line."""
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_join_makes_the_file_named_hold_every_part_in_time_order(tmp_path: Path) -> None:
    path = two_workers(tmp_path)
    write_part(path, "r1", 2, exchange("e", 2.5))  # a restarted worker's
    before = {p.name: p.read_bytes().splitlines(keepends=True)[1:] for p in parts.all_parts(path)}
    warnings: list[str] = []
    assert parts.join(path, warnings) == [parts.part_path(path, 1), parts.part_path(path, 2)]
    assert warnings == []
    records = plain(path)
    assert not set(parts.PART_FIELDS) & set(records[0])  # one recording, not a part
    assert records[0]["format"] == "k8s-wiretap-recording" and records[0]["redacted"] is True
    assert [r["id"] for r in records[1:] if r["record"] == "request"] == ["a", "b", "e", "c", "d"]
    times = [r["time"] for r in records[1:]]
    assert times == sorted(times)
    # every line as its worker wrote it, byte for byte, and nothing else
    lines = path.read_bytes().splitlines(keepends=True)[1:]
    assert sorted(lines) == sorted(line for part in before.values() for line in part)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rec.jsonl"]
    assert path.stat().st_mode & 0o777 == 0o600
    assert [e.id for e in load(path).exchanges] == ["a", "b", "e", "c", "d"]
    assert parts.join(path, warnings) == [] and plain(path) == records  # once is all


def test_join_leaves_files_of_another_recording_and_a_one_file_recording(tmp_path: Path) -> None:
    path = two_workers(tmp_path)
    other = write_part(path, "an-earlier-run", 2, exchange("old", 2.5))
    kept = other.read_bytes()
    assert parts.join(path, []) == [parts.part_path(path, 1)]
    assert other.read_bytes() == kept
    assert [r.get("id") for r in plain(path) if r["record"] == "request"] == ["a", "b", "c", "d"]
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps(header_record(redacted=True, max_body=1)) + "\n")
    written = one.read_bytes()
    assert parts.join(one, []) == [] and one.read_bytes() == written


def test_join_leaves_out_a_line_a_dead_worker_cut_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    write_part(path, "r1", 0, exchange("a", 1.0))
    cut = '{"record": "end", "id": "b", "ti\n' + json.dumps(end("b", 2.5)) + "\n"
    write_part(path, "r1", 1, [request("b", 2.0)], tail=cut)
    warnings: list[str] = []
    parts.join(path, warnings)
    assert warnings == [f"{path}.part-1: left out line 3: not a complete record"]
    assert [(r["record"], r.get("id")) for r in plain(path)[1:]] == [
        ("request", "a"),
        ("response", "a"),
        ("end", "a"),
        ("request", "b"),
        ("end", "b"),
    ]
    assert load(path).warnings == []


def test_a_join_that_fails_leaves_every_part_as_it_was(tmp_path: Path) -> None:
    """A full disk under the merge: the error is raised, no temporary is left, and every
    part is as it was, still read as one from the file named."""
    with small_filesystem(tmp_path / "disk", "1m") as full:
        # the parts fit, the merged copy of them does not (on a 1 MiB disk; with the
        # stand-in, one file may not pass 1 MiB, so the parts are larger)
        body = "x" * (300 * KIB if full == "No space left on device" else 600 * KIB)
        path = tmp_path / "disk" / "rec.jsonl"
        write_part(path, "r1", 0, [request("a", 1.0, path=f"/api/{body}"), end("a", 1.1)])
        write_part(path, "r1", 1, [request("b", 2.0, path=f"/api/{body}"), end("b", 2.1)])
        before = {p: p.read_bytes() for p in parts.all_parts(path)}
        with pytest.raises(OSError, match=full):
            parts.join(path, [])
        assert sorted(p.name for p in path.parent.iterdir()) == ["rec.jsonl", "rec.jsonl.part-1"]
        assert {p: p.read_bytes() for p in parts.all_parts(path)} == before
        assert [e.id for e in load(path).exchanges] == ["a", "b"]
