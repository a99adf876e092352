"""`import audit -` reads standard input as a stream, piped or redirected, gzip too, and
gives the recording the file gives; `--since`/`--until` keep exactly the exchanges whose
requests were received in the range, skipping what is outside it without parsing it."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.importers.timerange import TimeRange, received
from k8s_wiretap.paths import RECORDINGS

DATA = Path(__file__).parent / "data"
LAB_LOG = RECORDINGS / "wide-session.audit.log.gz"
# a redacted value: an HMAC under a key made for each recording (capture/redact.py)
PLACEHOLDER = re.compile(r"redacted:[0-9a-f]{16}")
# one sample of each framing: JSON lines (gzip too), after a timestamp, base64 gzip in a
# gzip, a JSON array, a pretty-printed Event, an EventList, a JSON document holding an
# array, a wrapper holding the Event as a string, an OTLP document
SAMPLES = [
    "api-server/falco-v1beta1.jsonl",
    "api-server/falco-v1beta1.jsonl.gz",
    "api-server/falco-v1beta1.array.json",
    "api-server/audit2rbac-v1beta1.pretty.json",
    "api-server/k8s-docs-v1alpha1-eventlist.json",
    "eks/s3-export-000000.gz",
    "eks/firehose-s3-object.gz",
    "eks/filter-log-events.json",
    "shippers/loki-logcli.jsonl",
    "openshift/otlp-audit.json",
]


def _run(
    *args: str, stdin: Any = None, data: bytes | None = None
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "k8s_wiretap", "import", "audit", *args],
        stdin=stdin,
        input=data,
        capture_output=True,
        env=dict(os.environ),
        timeout=300,
        check=False,
    )
    return subprocess.CompletedProcess(
        result.args, result.returncode, result.stdout.decode(), result.stderr.decode()
    )


def _records(out: Path, path: Path | None = None) -> list[Any]:
    """The recording's records, without what depends on where and when the log was read:
    the times of writing (the header's, a note's), the log's path in notes (`-` for
    standard input), the placeholders' key (each numbered by its first place instead)."""
    text = out.read_text()
    if path is not None:
        text = text.replace(str(path), "-")
    numbers: dict[str, str] = {}
    text = PLACEHOLDER.sub(
        lambda found: numbers.setdefault(found[0], f"redacted:{len(numbers)}"), text
    )
    records = [json.loads(line) for line in text.splitlines()]
    for record in records:
        record.pop("created", None)
        if record.get("record") == "note":
            record.pop("time", None)
    return records


@pytest.mark.parametrize("sample", SAMPLES)
def test_stdin_gives_the_recording_the_file_gives(sample: str, tmp_path: Path) -> None:
    path = DATA / sample
    by_file = _run(str(path), "-o", str(tmp_path / "file.jsonl"))
    assert by_file.returncode == 0, by_file.stderr
    expected = _records(tmp_path / "file.jsonl", path)
    assert len(expected) > 2  # a header and at least one exchange
    piped = _run("-", "-o", str(tmp_path / "piped.jsonl"), data=path.read_bytes())
    assert piped.returncode == 0, piped.stderr
    assert "- (standard input): " in piped.stderr
    assert _records(tmp_path / "piped.jsonl") == expected
    with path.open("rb") as stream:
        redirected = _run("-", "-o", str(tmp_path / "redirected.jsonl"), stdin=stream)
    assert redirected.returncode == 0, redirected.stderr
    assert _records(tmp_path / "redirected.jsonl") == expected
    # the report's shape and framing lines are the file's, its name said as standard input
    assert piped.stderr.splitlines()[0] == by_file.stderr.splitlines()[0].replace(
        str(path), "- (standard input)"
    )


def test_stdin_between_files_is_read_in_its_place(tmp_path: Path) -> None:
    first, second = DATA / "api-server/falco-v1beta1.jsonl", DATA / "shippers/loki-logcli.jsonl"
    files = _run(str(first), str(second), "-o", str(tmp_path / "files.jsonl"))
    assert files.returncode == 0, files.stderr
    mixed = _run(str(first), "-", "-o", str(tmp_path / "mixed.jsonl"), data=second.read_bytes())
    assert mixed.returncode == 0, mixed.stderr
    assert _records(tmp_path / "mixed.jsonl") == _records(tmp_path / "files.jsonl", second)


def _events(lines: list[bytes]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines if line.strip()]


def _when(text: str) -> float:
    return dt.datetime.fromisoformat(text).timestamp()


def _lab_lines() -> list[bytes]:
    return gzip.decompress(LAB_LOG.read_bytes()).splitlines(keepends=True)


def _split_times(events: list[dict[str, Any]]) -> tuple[str, str]:
    """Two of the log's request times, a third and two thirds of the way through them."""
    times = sorted({event["requestReceivedTimestamp"] for event in events}, key=_when)
    return times[len(times) // 3], times[2 * len(times) // 3]


def _imported_ids(out: Path) -> list[str]:
    return [
        record["audit"]["auditID"]
        for record in map(json.loads, out.read_text().splitlines())
        if record.get("record") == "request"
    ]


def test_time_range_keeps_exactly_the_requests_received_in_it(tmp_path: Path) -> None:
    events = _events(_lab_lines())
    since, until = _split_times(events)
    inside = TimeRange(_when(since), _when(until))
    wanted = {e["auditID"] for e in events if inside.holds(_when(e["requestReceivedTimestamp"]))}
    outside = [e for e in events if not inside.holds(_when(e["requestReceivedTimestamp"]))]
    assert wanted and outside
    out = tmp_path / "range.jsonl"
    result = _run(
        "-", "--since", since, "--until", until, "-o", str(out), data=LAB_LOG.read_bytes()
    )
    assert result.returncode == 0, result.stderr
    ids = _imported_ids(out)
    assert sorted(ids) == sorted(wanted)  # each once: none lost, none split
    n = len(outside)
    assert f"outside it ({n:,} of them skipped unparsed" in result.stderr
    # an exchange received inside the range and ended after it is kept whole, its end too
    late = {
        e["auditID"]
        for e in events
        if e["auditID"] in wanted
        and e["stage"] == "ResponseComplete"
        and _when(e["stageTimestamp"]) >= _when(until)
    }
    assert late
    ended = {
        record["id"]
        for record in map(json.loads, out.read_text().splitlines())
        if record.get("record") == "end"
    }
    assert late <= ended


def test_outside_lines_are_never_parsed(tmp_path: Path) -> None:
    """Lines outside the range made unparseable after their time are not skipped as
    unreadable: they are told outside by their time alone, never parsed."""
    lines = _lab_lines()
    since, until = _split_times(_events(lines))
    inside = TimeRange(_when(since), _when(until))
    # the first line left whole: the framing (JSON lines) is told from it
    broken = lines[:1] + [
        line
        if inside.holds(_when(json.loads(line)["requestReceivedTimestamp"]))
        else line.rstrip(b"\n") + b" this is no JSON\n"
        for line in lines[1:]
    ]
    out = tmp_path / "broken.jsonl"
    data = gzip.compress(b"".join(broken))
    result = _run("-", "--since", since, "--until", until, "-o", str(out), data=data)
    assert result.returncode == 0, result.stderr
    assert "0 unreadable lines skipped" in result.stderr
    whole = tmp_path / "whole.jsonl"
    again = _run(
        "-", "--since", since, "--until", until, "-o", str(whole), data=LAB_LOG.read_bytes()
    )
    assert _records(out) == _records(whole)
    # without the range, the same lines are parsed, and skipped as no JSON
    assert again.returncode == 0, again.stderr
    unranged = _run("-", "-o", str(tmp_path / "all.jsonl"), data=data)
    made = sum(1 for line in broken if line.endswith(b" this is no JSON\n"))
    assert made > 1000
    assert f"; {made:,} unreadable lines skipped" in unranged.stderr


def test_durations_before_now(tmp_path: Path) -> None:
    events = _events(_lab_lines())
    last = max(_when(e["requestReceivedTimestamp"]) for e in events)
    assert last < time.time() - 3600  # the log is older than an hour
    none = _run(str(LAB_LOG), "--since", "1h", "-o", str(tmp_path / "none.jsonl"))
    assert none.returncode == 0, none.stderr
    assert _imported_ids(tmp_path / "none.jsonl") == []
    assert f"0 events in the time range, {len(events):,} outside it" in none.stderr
    every = _run(
        str(LAB_LOG), "--since", "36500d", "--until", "1m", "-o", str(tmp_path / "all.jsonl")
    )
    assert every.returncode == 0, every.stderr
    assert len(_imported_ids(tmp_path / "all.jsonl")) == len({e["auditID"] for e in events})


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--since", "yesterday"], "--since 'yesterday' is neither an RFC 3339 time"),
        (["--until", "2026-13-01T00:00:00Z"], "--until '2026-13-01T00:00:00Z' is neither"),
        (["--since", "1h", "--until", "2h"], "--since 1h is not before --until 2h"),
    ],
)
def test_a_bad_time_is_one_line_exit_2(flags: list[str], said: str, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = _run(str(LAB_LOG), *flags, "-o", str(out))
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1
    assert said in result.stderr
    assert not out.exists()


def test_stdin_given_twice_is_one_line_exit_2(tmp_path: Path) -> None:
    result = _run("-", "-", "-o", str(tmp_path / "out.jsonl"), data=b"")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "k8s-wiretap: import audit: - (standard input) is given more than once"
    ]


def test_received_is_found_in_a_line_or_a_string_but_only_once() -> None:
    line = b'{"kind":"Event","requestReceivedTimestamp":"2026-12-03T19:46:04.5Z","x":1}'
    assert received(line) == _when("2026-12-03T19:46:04.5+00:00")
    escaped = json.dumps({"message": line.decode()}).encode()  # a CloudWatch message
    assert received(escaped) == received(line)
    assert received(b'{"requestReceivedTimestamp": "2026-12-03 19:46:04"}') == _when(
        "2026-12-03T19:46:04+00:00"
    )
    assert received(line + line) is None  # two events' times: parsed instead
    assert received(b'{"requestReceivedTimestamp":"soon"}') is None
    assert received(b'{"timestamp":"2026-12-03T19:46:04Z"}') is None
