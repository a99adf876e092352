"""An import's memory follows its bounds (`importers.limits`), never its input: each bound
tried at ten times itself, in a process of its own whose peak resident memory (its VmHWM)
stays where it is at the bound. The bounds are set small (`--max-open 1000`, ...) so that
each run takes a second or two; what past a bound is skipped or written is said."""

from __future__ import annotations

import base64
import gzip
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mitmproxy import http
from mitmproxy.io import FlowWriter
from mitmproxy.net import encoding as encoding_module
from mitmproxy.test import tflow

from k8s_wiretap.commands.importing import CLEAR, Progress
from k8s_wiretap.importers import audit, gke
from k8s_wiretap.importers.audit import AuditImport, import_audit, read_events
from k8s_wiretap.importers.limits import Limits, values
from k8s_wiretap.importers.mitmflows import inflated
from k8s_wiretap.importers.sink import SKIP_NOTES, Sink
from k8s_wiretap.importers.webhook import LiveSink, WebhookImport
from tests.conftest import cli, wait_until
from tests.importers.test_audit_input import EVENT

# `k8s-wiretap ARGS`, then its own peak resident set (VmHWM, KiB) as the last line on stderr
# (an audit import with --jobs 1: the import in this one process, whatever its input's size)
PEAK = (
    "import runpy, sys\n"
    "sys.argv = ['k8s-wiretap', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('k8s_wiretap', run_name='__main__')\n"
    "finally:\n"
    "    with open('/proc/self/status') as status:\n"
    "        peak = next(s.split()[1] for s in status if s.startswith('VmHWM:'))\n"
    "    print(peak, file=sys.stderr)\n"
)
MiB = 1024  # KiB


def _peak(*args: str, status: int = 0) -> tuple[int, list[str]]:
    """`k8s-wiretap ARGS` in a process of its own: its peak memory (KiB) and what it said
    (its exit status `status`)."""
    done = subprocess.run(
        [sys.executable, "-c", PEAK, *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
        check=False,
    )
    said = done.stderr.strip().splitlines()
    assert done.returncode == status, done.stderr[-2000:]
    return int(said[-1]), said[:-1]


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def _received(n: int, pad: str) -> bytes:
    """`n` RequestReceived events that never finish, each carrying `pad`."""
    event = {**EVENT, "stage": "RequestReceived", "annotations": {"pad": pad}}
    event.pop("responseStatus")
    return b"".join(json.dumps({**event, "auditID": f"r{i}"}).encode() + b"\n" for i in range(n))


def test_open_exchanges_are_held_to_the_bound_at_ten_times_it(tmp_path: Path) -> None:
    bound, pad = 1000, "x" * 4000
    peaks = {}
    for times in (1, 10):
        log = tmp_path / f"audit{times}.log"
        log.write_bytes(_received(bound * times, pad))
        out = tmp_path / f"rec{times}.jsonl"
        peaks[times], said = _peak(
            "import", "audit", str(log), "-o", str(out), "--jobs", "1", "--max-open", "1000"
        )
        written = _records(out)
        assert len([r for r in written if r["record"] == "request"]) == bound * times
    # held whole, the 9,000 more events (4 KB each, more parsed) would be 36 MB and more
    assert peaks[10] - peaks[1] < 12 * MiB, peaks
    assert said[-1] == (
        f"{out}: 10,000 exchanges from 10,000 audit events; 0 unreadable lines skipped; "
        "9,000 exchanges written unanswered past --max-open 1,000"
    )


def _line(audit_id: str, stage: str) -> bytes:
    return json.dumps({**EVENT, "auditID": audit_id, "stage": stage}).encode() + b"\n"


def test_past_the_bound_the_oldest_is_written_unanswered_and_its_end_ignored(
    tmp_path: Path,
) -> None:
    log = tmp_path / "audit.log"
    log.write_bytes(
        _line("a", "RequestReceived")
        + _line("b", "RequestReceived")
        + _line("c", "RequestReceived")  # a is the oldest of three: written as far as it went
        + _line("a", "ResponseComplete")
        + _line("b", "ResponseComplete")
        + _line("c", "ResponseComplete")
    )
    out = tmp_path / "rec.jsonl"
    with Sink(out, source="audit log") as sink:
        importer = AuditImport(sink, max_open=2)
        for event in read_events([log], sink):
            importer.feed(event)
        importer.finish()
    assert (importer.evicted, importer.ignored, importer.unfinished) == (1, 1, 0)
    written = [(r["record"], r.get("id"), r.get("message")) for r in _records(out)[1:]]
    note = (
        "more than 2 exchanges open at once (--max-open): the oldest, written as far as the "
        "log had it and left unanswered; its later events are ignored"
    )
    assert written == [
        ("request", "a", None),
        ("note", "a", note),
        ("note", None, "a ResponseComplete event of a after its end: ignored"),
        ("request", "b", None),
        ("response", "b", None),
        ("end", "b", None),
        ("request", "c", None),
        ("response", "c", None),
        ("end", "c", None),
    ]


def _empty_lists(n: int) -> bytes:
    """An EventList of `n` empty lists: 3 bytes an item, some 64 parsed."""
    return b'{"items": [' + b"[]," * (n - 1) + b"[]]}\n"


def test_a_line_of_more_values_than_the_bound_is_not_parsed(tmp_path: Path) -> None:
    bound = 200_000
    peaks, said = {}, {}
    for times in (1, 10):
        log = tmp_path / f"audit{times}.log"
        log.write_bytes(_line("a", "ResponseComplete") + _empty_lists(times * (bound // 2 - 1)))
        out = tmp_path / f"rec{times}.jsonl"
        peaks[times], said[times] = _peak(
            "import", "audit", str(log), "-o", str(out), "--jobs", "1", "--max-values", str(bound)
        )
    # parsed, 1,000,000 empty lists would be 64 MB and more
    assert peaks[10] - peaks[1] < 12 * MiB, peaks
    size = len(_empty_lists(10 * (bound // 2 - 1)))
    assert said[10][1] == (
        f"  1 skipped, first at line 2: the line ({size:,} bytes) holds more than "
        "200,000 JSON values (by its commas and brackets): not read"
    )
    items = bound // 2 - 1  # each said once, counted: a line a reason, not a line an item
    assert said[1][1:] == [
        f"  {items:,} skipped, first at line 2 item 0: an item that is a JSON list, not an Event",
        f"{tmp_path / 'rec1.jsonl'}: 1 exchange from 1 audit event; {items:,} unreadable lines "
        "skipped",
    ]


def test_a_line_longer_than_the_bound_is_skipped_with_its_size(tmp_path: Path) -> None:
    peaks, said = {}, {}
    for times in (1, 10):
        log = tmp_path / f"audit{times}.log"
        pad = b'{"pad": "' + b"x" * (times * 4 * 1024 * 1024 - 100) + b'"}\n'
        log.write_bytes(gzip.compress(pad + _line("a", "ResponseComplete"), compresslevel=1))
        out = tmp_path / f"rec{times}.jsonl"
        peaks[times], said[times] = _peak(
            "import", "audit", str(log), "-o", str(out), "--jobs", "1", "--max-line", "4m"
        )
        assert [r["id"] for r in _records(out) if r["record"] == "request"] == ["a"]
    assert peaks[10] - peaks[1] < 12 * MiB, peaks  # the 40 MB line is never held
    assert said[10][1] == (
        f"  1 skipped, first at line 1: the line is {len(pad) - 1:,} bytes, longer "
        "than 4,194,304: not read"
    )


def test_skipped_items_are_counted_by_reason_and_noted_a_thousand_times(tmp_path: Path) -> None:
    items = 5_000
    log = tmp_path / "audit.log"
    log.write_bytes(b'{"items": [' + b",".join([b"1"] * items) + b"]}\n")
    out = tmp_path / "rec.jsonl"
    _, said = _peak(
        "import", "audit", str(log), "-o", str(out), "--jobs", "1", status=1
    )  # nothing imported
    assert said == [
        f"{log}: nothing importable: the closest shape is audit.k8s.io EventLists (webhook "
        "batches) (JSON lines), but an item that is a JSON int, not an Event",
        "  5,000 skipped, first at line 1 item 0: an item that is a JSON int, not an Event",
        f"{out}: 0 exchanges from 0 audit events; 5,000 unreadable lines skipped",
    ]
    notes = [r for r in _records(out) if r["record"] == "note"]
    assert len(notes) == SKIP_NOTES + 1


class _Counted(io.BufferedReader):
    """A stream that counts the lines read of it one at a time."""

    readlines_called = 0

    def readline(self, size: int | None = -1) -> bytes:
        self.readlines_called += 1
        return super().readline(size)


def test_blank_lines_are_passed_a_buffer_at_a_time() -> None:
    blank = 2_000_000
    text = (
        _line("a", "ResponseComplete") + b"\n" * blank + b"  \r\n" + _line("b", "ResponseComplete")
    )
    stream = _Counted(io.BytesIO(gzip.compress(text)))
    with gzip.GzipFile(fileobj=stream) as unzipped:
        counted = _Counted(unzipped)
        read = list(gke.numbered(counted))
    assert [n for n, _ in read] == [1, blank + 3]
    assert counted.readlines_called < 100


def test_the_values_counted_are_at_least_those_parsed() -> None:
    for text in (b"[]", b"[1,2,3]", b'{"a":1,"b":[2,{}]}', b'"x"', b"[[],[],[]]"):
        parsed = json.loads(text)
        stack, made = [parsed], 0
        while stack:
            item = stack.pop()
            made += 1
            stack.extend(
                item.values() if isinstance(item, dict) else item if isinstance(item, list) else []
            )
        assert values(text) >= made, text
    assert Limits().max_values == 4_000_000


def _flows(path: Path, *flows: http.HTTPFlow) -> Path:
    with path.open("wb") as file:
        writer = FlowWriter(file)
        for flow in flows:
            writer.add(flow)
    return path


def _gzipped(size: int) -> http.HTTPFlow:
    """A flow whose response body is `size` bytes, gzipped (a few KB in the file)."""
    flow = tflow.tflow(resp=True)
    assert flow.response is not None
    flow.response.headers["content-encoding"] = "gzip"
    flow.response.raw_content = gzip.compress(b"0" * size, mtime=0)
    return flow


def test_a_body_is_inflated_up_to_the_bound_at_ten_times_it(tmp_path: Path) -> None:
    bound = 4 * 1024 * 1024
    peaks = {}
    for times in (1, 10):
        mitm = _flows(tmp_path / f"flows{times}.mitm", _gzipped(bound * times))
        out = tmp_path / f"rec{times}.jsonl"
        peaks[times], _ = _peak(
            "import", "mitmproxy", str(mitm), "-o", str(out), "--max-body", "4m"
        )
        written = _records(out)
        end = next(r for r in written if r["record"] == "end")
        raw = gzip.compress(b"0" * bound * times, mtime=0)
        if times == 1:  # within the bound: inflated, whole
            assert end["body"] == {"text": "0" * bound, "size": bound}
            assert not [r for r in written if r["record"] == "note"]
        else:  # kept as it came, and said
            assert base64.b64decode(end["body"]["base64"]) == raw
            notes = [r for r in written if r["record"] == "note"]
            assert [(n["id"], n["message"]) for n in notes] == [
                (
                    end["id"],
                    f"the response body ({len(raw):,} bytes): it inflates (gzip) past "
                    "4,194,304 bytes (--max-body): kept as it came, encoded, not inflated further",
                )
            ]
    # inflated whole, 40 MiB (and a copy) more
    assert peaks[10] - peaks[1] < 12 * MiB, peaks


def test_a_flow_longer_than_the_bound_is_skipped_unread(tmp_path: Path) -> None:
    peaks, said = {}, {}
    for times in (1, 10):
        big = tflow.tflow(resp=True)
        assert big.response is not None
        big.response.content = b"x" * (times * 1024 * 1024 - 8192)  # the rest: the flow's
        mitm = _flows(
            tmp_path / f"f{times}.mitm", tflow.tflow(resp=True), big, tflow.tflow(resp=True)
        )
        out = tmp_path / f"rec{times}.jsonl"
        peaks[times], said[times] = _peak(
            "import",
            "mitmproxy",
            str(mitm),
            "-o",
            str(out),
            "--max-flow",
            "1m",
        )
        requests = [r for r in _records(out) if r["record"] == "request"]
        assert len(requests) == (3 if times == 1 else 2)
    assert peaks[10] - peaks[1] < 12 * MiB, peaks
    assert said[10][0].startswith(f"{tmp_path / 'f10.mitm'}:flow 2: skipped: a flow of ")
    assert said[10][0].endswith(" bytes, more than 1,048,576 (--max-flow): not read")


def test_a_length_no_file_holds_is_refused_or_ends_the_file(tmp_path: Path) -> None:
    absurd = tmp_path / "absurd.mitm"
    absurd.write_bytes(b"999999999999:" + b"x" * 100)
    out = tmp_path / "rec.jsonl"
    refused = cli("import", "mitmproxy", str(absurd), "-o", str(out))
    assert refused.returncode == 2 and not out.exists()
    assert refused.stderr.strip().splitlines() == [
        f"k8s-wiretap: import mitmproxy: {absurd}: not a whole mitmproxy flow file: its first "
        "flow says it is 999,999,999,999 bytes long, and the file is 113 bytes"
    ]
    after = _flows(tmp_path / "after.mitm", tflow.tflow(resp=True))
    after.write_bytes(after.read_bytes() + b"999999999999:" + b"x" * 100)
    done = cli("import", "mitmproxy", str(after), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"{after}:flow 2: skipped: unreadable, the rest of the file too: a flow of "
        "999,999,999,999 bytes, and 99 are left (cut short?)",
        f"{out}: 1 exchange from {after}; 1 unreadable flow skipped",
    ]


def test_a_har_file_beyond_the_bounds_is_refused_before_it_is_read(tmp_path: Path) -> None:
    har = tmp_path / "big.har"
    har.write_bytes(b'{"log": {"entries": [' + b"[]," * 100_000 + b"[]]}}")
    out = tmp_path / "rec.jsonl"
    size = har.stat().st_size
    for flag, said in (
        ("--max-file", f"a HAR file of {size:,} bytes, more than 102,400 (--max-file)"),
        (
            "--max-values",
            f"a HAR file ({size:,} bytes) of more than 102,400 JSON values (by its commas "
            "and brackets, --max-values)",
        ),
    ):
        refused = cli(
            "import",
            "har",
            str(har),
            "-o",
            str(out),
            flag,
            "100k" if flag == "--max-file" else "102400",
        )
        assert refused.returncode == 2 and not out.exists()
        assert refused.stderr.strip() == f"k8s-wiretap: import har: {har}: {said}: not read"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_long_import_says_how_far_it_has_come_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(Progress, "EVERY", 0.01)
    with Progress(lambda: "import audit: 3 exchanges written so far"):
        wait_until(lambda: "so far" in terminal.getvalue(), 10, "a line of progress")
    said = terminal.getvalue()
    assert said.startswith(f"{CLEAR}import audit: 3 exchanges written so far (0m 0")
    assert said.endswith(CLEAR)  # the line cleared at the end


def test_no_progress_is_said_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    piped = io.StringIO()
    monkeypatch.setattr(sys, "stderr", piped)
    monkeypatch.setattr(Progress, "EVERY", 0.01)
    with Progress(lambda: "so far"):
        pass
    assert piped.getvalue() == ""


def test_events_held_as_their_json_import_as_those_held_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `audit.COMPACT` open exchanges a RequestReceived event is held as its JSON
    (a fifth of the memory): what is written of it is the same."""
    log = tmp_path / "audit.log"
    received = {**EVENT, "stage": "RequestReceived", "annotations": {"é": "ü"}}
    log.write_bytes(
        b"".join(json.dumps({**received, "auditID": f"r{i}"}).encode() + b"\n" for i in range(5))
        + _line("r1", "ResponseComplete")
    )
    written = {}
    for compact in (audit.COMPACT, 0):
        monkeypatch.setattr(audit, "COMPACT", compact)
        out = tmp_path / f"rec{compact}.jsonl"
        with Sink(out, source="audit log") as sink:
            import_audit([log], sink, Limits(max_open=3))
        written[compact] = [
            {k: v for k, v in r.items() if k != "time" or r["record"] != "note"}
            for r in _records(out)[1:]
        ]
    assert written[0] == written[audit.COMPACT]
    assert [r["id"] for r in written[0] if r["record"] == "request"] == [
        "r0",
        "r1",
        "r2",
        "r3",
        "r4",
    ]


def test_an_array_item_of_more_values_than_the_bound_is_not_parsed(tmp_path: Path) -> None:
    """In gcloud's JSON array, the items before a huge one are read though the text held
    with them holds it too; the huge one is never parsed, and ends the array, said."""
    bound = 100_000
    peaks, said = {}, {}
    for times in (1, 10):
        huge = b"[" + b"[]," * (times * bound // 2 - 2) + b"[]]"
        first, last = _line("a", "ResponseComplete"), _line("b", "ResponseComplete")
        log = tmp_path / f"gke{times}.json"
        log.write_bytes(b"[\n" + first[:-1] + b",\n" + huge + b",\n" + last + b"]\n")
        out = tmp_path / f"rec{times}.jsonl"
        peaks[times], said[times] = _peak(
            "import", "audit", str(log), "-o", str(out), "--jobs", "1", "--max-values", str(bound)
        )
        requests = [r["id"] for r in _records(out) if r["record"] == "request"]
        assert requests == (["a", "b"] if times == 1 else ["a"])
    assert said[1][1] == (
        "  1 skipped, first at line 3: a JSON array whose item 0 is a JSON list, not an object"
    )
    assert said[10][1] == (
        "  1 skipped, first at line 3: an item of the JSON array holds more than "
        "100,000 JSON values (by its commas and brackets); the rest unread"
    )
    assert peaks[10] - peaks[1] < 12 * MiB, peaks


@settings(
    max_examples=60,
    deadline=None,
    # a loaded machine's slowness, or hypothesis's own 3000-byte draws, are no failure
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    data=st.binary(max_size=3000) | st.text(max_size=500).map(str.encode),
    encoding=st.sampled_from(["gzip", "deflate", "br", "identity", "", "GZIP", "zstd"]),
    cut=st.booleans(),
)
def test_within_the_bound_a_body_is_what_mitmproxy_makes_of_it(
    data: bytes, encoding: str, cut: bool
) -> None:
    """Inflated a piece at a time, a body within `--max-body` is what mitmproxy's own
    decoding gives (`get_content(strict=False)`: as it came when it cannot be decoded)."""
    message = http.Response.make(200, b"")
    name = encoding.lower()
    # mitmproxy's encoders themselves: its `encode` answers from a cache it shares with
    # `decode`, so after an earlier example decoded a cut gzip to b"", `encode(b"", "gzip")`
    # gave that cut piece back (hypothesis saw it as a flaky failure)
    encoders = {
        "gzip": encoding_module.encode_gzip,
        "deflate": encoding_module.encode_deflate,
        "br": encoding_module.encode_brotli,
    }
    raw = encoders[name](data) if name in encoders else data
    assert isinstance(raw, bytes)
    if cut and raw:
        raw = raw[: len(raw) // 2]
    message.raw_content = raw
    if encoding:
        message.headers["content-encoding"] = encoding
    body, why = inflated(raw, encoding, 10_000)
    theirs = message.get_content(strict=False)
    if cut:  # mitmproxy may make an empty body of a gzip header alone: ours is as it came
        assert body in (theirs, raw)
    else:
        assert body == theirs
    assert bool(why) == (body == raw and name not in ("", "identity") and bool(raw))


def test_the_notes_of_flows_are_capped_and_counted(tmp_path: Path) -> None:
    flows = [_gzipped(2048) for _ in range(SKIP_NOTES + 5)]
    mitm = _flows(tmp_path / "flows.mitm", *flows)
    out = tmp_path / "rec.jsonl"
    done = cli("import", "mitmproxy", str(mitm), "-o", str(out), "--max-body", "1k")
    assert done.returncode == 0, done.stderr
    notes = [r["message"] for r in _records(out) if r["record"] == "note"]
    assert len(notes) == SKIP_NOTES + 1
    assert notes[0].endswith(
        "past 1,024 bytes (--max-body): kept as it came, encoded, not inflated further"
    )
    assert notes[-1] == f"{SKIP_NOTES + 5:,} notes of exchanges, 5 not noted"


def test_the_webhook_receiver_holds_open_exchanges_to_its_bound(tmp_path: Path) -> None:
    """`audit-webhook --max-open N`: the receiver's importer is bounded as `import audit`'s
    is, the oldest open exchange written unanswered past it."""
    events = [json.loads(_line(audit_id, "RequestReceived")) for audit_id in ("a", "b", "c")]
    body = json.dumps({"kind": "EventList", "items": events}).encode()
    sink = LiveSink(tmp_path / "rec.jsonl", source="audit webhook")
    with sink:
        receiver = WebhookImport(sink, max_open=2)
        receiver.post(body, "kube-apiserver 127.0.0.1")
        assert (receiver.importer.evicted, len(receiver.importer._open)) == (1, 2)
        receiver.close()
    notes = [r for r in _records(tmp_path / "rec.jsonl") if r["record"] == "note"]
    assert any("(--max-open)" in note["message"] and note.get("id") == "a" for note in notes)
