"""Reading recordings back: tolerant of a cut-off last line, strict about what it is."""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from k8s_wiretap.capture.format import cut_note, header_record, stop_note
from k8s_wiretap.capture.reader import RecordingError, load, loads


def write(path: Path, records: Sequence[Mapping[str, object]], tail: str = "") -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + tail)
    return path


REQUEST = {
    "record": "request",
    "id": "a",
    "time": 1.0,
    "method": "GET",
    "path": "/api/v1/pods",
    "headers": [["User-Agent", "kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07"]],
    "listener": "default",
}


def test_a_cut_off_last_line_is_skipped_with_a_warning(tmp_path: Path) -> None:
    path = write(
        tmp_path / "r.jsonl",
        [header_record(redacted=True, max_body=1), REQUEST],
        '{"record": "response", "id": "a", "sta',
    )
    recording = load(path)
    assert len(recording.exchanges) == 1
    assert recording.exchanges[0].response is None
    assert recording.warnings == [f"{path}: a cut recording: its last line is cut short (skipped)"]
    assert recording.exchanges[0].component == "kubectl"
    assert recording.exchanges[0].info.verb == "list"


def test_not_a_recording(tmp_path: Path) -> None:
    with pytest.raises(RecordingError, match="no header line"):
        load(write(tmp_path / "x.jsonl", [REQUEST]))
    with pytest.raises(RecordingError, match="version 99"):
        load(
            write(
                tmp_path / "y.jsonl",
                [{"record": "header", "format": "k8s-wiretap-recording", "version": 99}],
            )
        )
    with pytest.raises(RecordingError, match="cannot read"):
        load(tmp_path / "missing.jsonl")


def test_a_document_that_quotes_a_header_is_not_a_recording(tmp_path: Path) -> None:
    """The README shows a header line in its text: the first line decides, not a later one."""
    text = tmp_path / "notes.md"
    header = json.dumps(header_record(redacted=True, max_body=1))
    text.write_text(f"# Notes\n\nA recording starts so:\n\n{header}\n{json.dumps(REQUEST)}\n")
    with pytest.raises(RecordingError, match="not a k8s-wiretap recording"):
        load(text)
    readme = Path(__file__).resolve().parents[2] / "README.md"
    with pytest.raises(RecordingError, match="not a k8s-wiretap recording"):
        load(readme)


def test_a_malformed_record_is_skipped_with_a_warning(tmp_path: Path) -> None:
    broken = {**REQUEST, "id": "b", "body": {"base64": "not base64 ✗", "size": 3}}
    lost = {"record": "event", "id": "a", "time": 2.0}  # no seq, no kind
    path = write(
        tmp_path / "r.jsonl", [header_record(redacted=True, max_body=1), REQUEST, broken, lost]
    )
    recording = load(path)
    assert [e.id for e in recording.exchanges] == ["a"]
    assert recording.exchanges[0].events == []
    assert len(recording.warnings) == 2
    assert all(w.startswith("skipped a malformed ") for w in recording.warnings)


@pytest.mark.parametrize(
    "line",
    [
        b'{"record": "note", "message": "\\ud800"}',  # a lone surrogate: orjson refuses it
        b'{"record": "note", "time": NaN, "limit": Infinity}',
        b'{"record": "note", "n": 123456789012345678901234567890}',  # orjson rounds it
        b'{"record": "note", "n": [{"m": -9223372036854775809}]}',
        b'\xef\xbb\xbf{"record": "note"}',  # a byte-order mark
        b'{"record": "note", "n": 18446744073709551615, "t": 1.5, "x": [1, "2", null]}',
        b'{"record": "note", "headers": [["a", "b"], ["n", 123456789012345678901234567890]]}',
        b'{"record": "note", "pair": ["a", 123456789012345678901234567890]}',
        b'"just a string"',
    ],
)
def test_loads_reads_what_json_reads(line: bytes) -> None:
    value = loads(line)
    assert repr(value) == repr(json.loads(line))  # NaN != NaN; the repr tells floats apart


@pytest.mark.parametrize("line", [b'{"record": "no', b"\xff", b"", b"[1,]"])
def test_loads_refuses_what_json_refuses(line: bytes) -> None:
    with pytest.raises(ValueError):
        json.loads(line)
    with pytest.raises(ValueError):
        loads(line)


def test_blank_lines_and_a_gzip_recording_read_as_ever(tmp_path: Path) -> None:
    lines = [json.dumps(header_record(redacted=True, max_body=1)), "", " \t", json.dumps(REQUEST)]
    text = "\n".join(lines) + "\n\n"
    plain = tmp_path / "r.jsonl"
    plain.write_text(text)
    packed = tmp_path / "r.jsonl.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    for path in (plain, packed):
        recording = load(path)
        assert [e.id for e in recording.exchanges] == ["a"]
        assert recording.warnings == []


def test_a_recording_a_signal_cut_is_said_to_be_cut(tmp_path: Path) -> None:
    cut = cut_note("SIGTERM", "it holds the 1 exchange written before", 2.0)
    path = write(tmp_path / "cut.jsonl", [header_record(redacted=True, max_body=10), REQUEST, cut])
    recording = load(path)
    assert [e.id for e in recording.exchanges] == ["a"]
    assert recording.warnings == [
        f"{path}: a cut recording: recording cut by SIGTERM: it holds the 1 exchange written before"
    ]


def test_a_last_line_without_its_end_is_said_to_be_cut(tmp_path: Path) -> None:
    path = write(tmp_path / "cut.jsonl", [header_record(redacted=True, max_body=10)])
    path.write_text(path.read_text() + json.dumps(REQUEST))  # whole JSON, no newline
    recording = load(path)
    assert [e.id for e in recording.exchanges] == ["a"]
    assert recording.warnings == [
        f"{path}: a cut recording: its last line has no end (it was being written)"
    ]


def test_a_live_recording_a_signal_stopped_is_no_cut_recording(tmp_path: Path) -> None:
    stopped = stop_note("SIGINT", 2.0)
    path = write(tmp_path / "live.jsonl", [header_record(redacted=True, max_body=10), stopped])
    assert load(path).warnings == []
    assert load(path).notes == [stopped]
