"""The recorder turns proxy events into records: framing, truncation, decoding, resilience."""

from __future__ import annotations

import gzip
import json
import queue
import struct
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.capture.events import Chunk, End, Message, Note, RequestSeen, ResponseSeen
from k8s_wiretap.capture.format import body_bytes
from k8s_wiretap.capture.outputs import FileOutput
from k8s_wiretap.capture.reader import load
from k8s_wiretap.capture.recorder import Recorder
from k8s_wiretap.capture.redact import Redactor


class Collect:
    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.flushes = 0

    def write(self, record: dict[str, Any]) -> None:
        self.records.append(record)

    def flush(self) -> None:
        self.flushes += 1

    def close(self) -> None:
        pass

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [r for r in self.records if r["record"] == kind]


def request(
    exchange: str,
    path: str,
    method: str = "GET",
    body: bytes | None = None,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> RequestSeen:
    return RequestSeen(
        exchange,
        time.time(),
        "default",
        {"address": "127.0.0.1:1"},
        "https://127.0.0.1:6443",
        method,
        path,
        "HTTP/1.1",
        headers or [(b"User-Agent", b"kubectl/v1.32.4")],
        body,
        None,
    )


def response(
    exchange: str,
    content_type: str = "application/json",
    extra: list[tuple[bytes, bytes]] | None = None,
) -> ResponseSeen:
    headers = [(b"Content-Type", content_type.encode()), *(extra or [])]
    return ResponseSeen(exchange, time.time(), 200, "OK", "HTTP/1.1", headers)


def test_watch_events_are_framed_across_chunks_with_arrival_times() -> None:
    out = Collect()
    recorder = Recorder([out])
    frames = [b"\x0a\x05ADDED", b"\x0a\x08MODIFIED"]
    stream = b"".join(struct.pack(">I", len(f)) + f for f in frames)
    recorder.handle(request("w", "/api/v1/pods?watch=true"))
    recorder.handle(response("w", "application/vnd.kubernetes.protobuf;stream=watch"))
    recorder.handle(Chunk("w", 10.0, stream[:3]))
    recorder.handle(Chunk("w", 11.0, stream[3:12]))
    recorder.handle(Chunk("w", 12.0, stream[12:]))
    recorder.handle(End("w", 13.0))
    events = out.of("event")
    assert [body_bytes(e["data"]) for e in events] == frames
    assert [e["time"] for e in events] == [11.0, 12.0]
    assert out.of("end")[0]["events"] == 2


def test_bodies_and_events_over_the_cap_are_truncated_not_dropped() -> None:
    out = Collect()
    recorder = Recorder([out], max_body=10)
    recorder.handle(request("a", "/api/v1/configmaps", "POST", body=b"x" * 25))
    recorder.handle(response("a"))
    recorder.handle(Chunk("a", 1.0, b"y" * 8))
    recorder.handle(Chunk("a", 1.1, b"y" * 8))
    recorder.handle(End("a", 1.2))
    body = out.of("request")[0]["body"]
    assert (body["text"], body["size"], body["truncated"]) == ("x" * 10, 25, True)
    body = out.of("end")[0]["body"]
    assert (body["text"], body["size"], body["truncated"]) == ("y" * 10, 16, True)
    recorder.handle(request("w", "/api/v1/pods?watch=1"))
    recorder.handle(response("w"))
    recorder.handle(Chunk("w", 2.0, b'{"type":"ADDED","object":{"kind":"Pod"}}\n'))
    event = out.of("event")[0]["data"]
    assert event["truncated"] and event["size"] == 40 and len(event["text"]) == 10


def test_gzip_bodies_are_recorded_decoded() -> None:
    out = Collect()
    recorder = Recorder([out])
    payload = json.dumps({"kind": "PodList", "items": []}).encode()
    recorder.handle(request("g", "/api/v1/pods"))
    recorder.handle(response("g", extra=[(b"Content-Encoding", b"gzip")]))
    recorder.handle(Chunk("g", 1.0, gzip.compress(payload)))
    recorder.handle(End("g", 1.1))
    body = out.of("end")[0]["body"]
    assert body["text"] == payload.decode() and body["decoded"] == "gzip"


def test_a_compressed_watch_list_is_recorded_event_by_event() -> None:
    """The default release gzips a watch list and closes the gzip member at each flush (the
    initial events, then every later event): each member's events are recorded, split as they
    came."""
    out = Collect()
    recorder = Recorder([out])
    events = [b'{"type":"ADDED","object":{}}\n', b'{"type":"BOOKMARK","object":{}}\n']
    later = b'{"type":"MODIFIED","object":{}}\n'
    recorder.handle(request("w", "/api/v1/pods?watch=1&sendInitialEvents=true"))
    recorder.handle(response("w", extra=[(b"Content-Encoding", b"gzip")]))
    recorder.handle(Chunk("w", 1.0, gzip.compress(b"".join(events))))
    second = gzip.compress(later)
    recorder.handle(Chunk("w", 2.0, second[:9]))
    recorder.handle(Chunk("w", 3.0, second[9:] + gzip.compress(later)))
    recorder.handle(End("w", 4.0))
    recorded = out.of("event")
    frames = [e.rstrip(b"\n") for e in (*events, later, later)]
    assert [body_bytes(e["data"]) for e in recorded] == frames
    assert [e["time"] for e in recorded] == [1.0, 1.0, 3.0, 3.0]
    assert out.of("end")[0]["events"] == 4


def test_websocket_messages_of_a_watch_are_watch_events_and_redacted() -> None:
    out = Collect()
    recorder = Recorder([out], redactor=Redactor())
    recorder.handle(request("ws", "/api/v1/namespaces/d/secrets?watch=true"))
    event = {"type": "ADDED", "object": {"kind": "Secret", "data": {"k": "c2VjcmV0"}}}
    recorder.handle(Message("ws", 1.0, "websocket", False, json.dumps(event).encode(), True))
    record = out.of("event")[0]
    assert record["kind"] == "watch" and record["transport"] == "websocket"
    assert "c2VjcmV0" not in record["data"]["text"] and record["data"]["redacted"]


def test_a_failure_inside_the_recorder_becomes_a_note() -> None:
    out = Collect()
    recorder = Recorder([out])
    recorder.handle(ResponseSeen("x", 1.0, 200, "OK", "HTTP/1.1", [(b"\xff", 1)]))  # type: ignore[list-item]
    note = out.of("note")[0]
    assert note["level"] == "error" and "ResponseSeen" in note["message"]


class Flushes:
    """Wraps a FileOutput: what a reader of the file sees after each of the recorder's
    flushes (read through a handle of its own, as `load` would)."""

    def __init__(self, output: FileOutput) -> None:
        self.output = output
        self.seen: queue.Queue[str] = queue.Queue()

    def write(self, record: dict[str, Any]) -> None:
        self.output.write(record)

    def flush(self) -> None:
        self.output.flush()
        self.seen.put(self.output.path.read_text())

    def close(self) -> None:
        self.output.close()

    def next_with(self, text: str, timeout: float = 10) -> str:
        """The file as the first flush that shows `text` left it."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                content = self.seen.get(timeout=left)
            except queue.Empty:
                break
            if text in content:
                return content
        raise AssertionError(f"no flush showed {text!r} within {timeout:.0f} s")


def test_the_thread_flushes_each_burst_to_the_file_and_closes_open_exchanges(
    tmp_path: Path,
) -> None:
    """A record is in the file after the recorder's next flush, while the recording is still
    open (a `kill -9` then loses nothing written before); closing ends what is open."""
    path = tmp_path / "r.jsonl"
    output = Flushes(FileOutput(path, redacted=False, max_body=100))
    recorder = Recorder([output]).start()
    recorder.put(request("open", "/api/v1/pods?watch=true"))
    recorder.put(Note(time.time(), "warning", "hello"))
    seen = output.next_with('"hello"')
    records = [json.loads(line) for line in seen.splitlines()]
    assert [r["record"] for r in records] == ["header", "request", "note"]  # no end yet
    assert load(path).exchanges[0].end is None  # what a reader sees: the watch still open
    recorder.close()
    recording = load(path)
    assert recording.exchanges[0].error == "recording stopped" and not recording.warnings


def test_a_recording_file_is_new_unless_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("old\n")
    with pytest.raises(FileExistsError):
        FileOutput(path, redacted=True, max_body=100)
    assert path.read_text() == "old\n"
    FileOutput(path, redacted=True, max_body=100, overwrite=True).close()
    assert load(path).header["redacted"] is True and "old" not in path.read_text()
    fresh = tmp_path / "fresh.jsonl"
    FileOutput(fresh, redacted=False, max_body=100).close()
    assert fresh.stat().st_mode & 0o777 == 0o600  # it holds cluster data


MIB = 1 << 20
RUNAWAY = {  # a watch whose frame never ends, as each framing would see it
    "application/json;stream=watch": b'{"type":"ADDED","object":{"data":"' + b"x" * (MIB - 35),
    "application/vnd.kubernetes.protobuf;stream=watch": struct.pack(">I", 0xFFFFFFF0),
    "application/cbor-seq": b"\xff",  # not CBOR: framing breaks, the rest is one frame
}


@pytest.mark.parametrize("content_type", list(RUNAWAY))
def test_a_watch_frame_that_never_ends_is_bounded_and_said(content_type: str) -> None:
    """40 MiB of one frame that never ends: the recorder holds at most FRAME_LIMIT of it
    (16 MiB, traced), says why it stops recording the stream, still ends it with its count
    of events, and other exchanges go on being recorded."""
    out = Collect()
    recorder = Recorder([out], max_body=MIB)
    recorder.handle(request("w", "/api/v1/configmaps?watch=true"))
    recorder.handle(response("w", content_type))
    first = RUNAWAY[content_type]
    filler = (b"y" if "json" in content_type else b"\x00") * MIB
    tracemalloc.start()
    try:
        recorder.handle(Chunk("w", 1.0, first))
        for n in range(40):
            recorder.handle(Chunk("w", 2.0 + n, filler))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * MIB  # without the bound: all 40 MiB
    recorder.handle(request("g", "/api/v1/namespaces"))
    recorder.handle(response("g"))
    recorder.handle(Chunk("g", 50.0, b'{"kind":"NamespaceList","items":[]}'))
    recorder.handle(End("g", 50.1))
    recorder.handle(End("w", 51.0))
    notes = [n for n in out.of("note") if n.get("id") == "w"]
    assert len(notes) == 1 and "watch frame over 16 MiB without an end" in notes[0]["message"]
    ends = {e["id"]: e for e in out.of("end")}
    assert ends["w"]["events"] == 0 and "body" not in ends["w"]
    assert body_bytes(ends["g"]["body"]) == b'{"kind":"NamespaceList","items":[]}'
