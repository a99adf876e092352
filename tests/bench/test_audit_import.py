"""The audit-import benchmark's input is what it says (bench/audit_import.py): the committed
sample holds no Secret's body, and its copies are a valid log of as many exchanges again,
each copy with fresh auditIDs, later times and resourceVersions, that imports with nothing
skipped, ignored or left open."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

from bench.audit_import import SAMPLE, load, repeated, same_recording, write
from k8s_wiretap.importers.audit import import_audit
from k8s_wiretap.importers.sink import Sink
from k8s_wiretap.kube.sensitive import SENSITIVE_RESOURCES

COPIES = 3


def _events(lines: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines]


def _versions(line: str) -> list[int]:
    """Its resourceVersions but 0 ("any": the benchmark keeps it)."""
    return [int(v) for v in re.findall(r'(?:"resourceVersion":"|resourceVersion=)([1-9]\d*)', line)]


def test_the_sample_holds_no_body_of_a_sensitive_resource() -> None:
    sample = _events(list(repeated(load(SAMPLE), 1)))
    on_secrets = 0
    for event in sample:
        ref = event.get("objectRef") or {}
        key = tuple(str(ref.get(k) or "") for k in ("apiGroup", "resource", "subresource"))
        if key in SENSITIVE_RESOURCES:
            on_secrets += 1
            assert "requestObject" not in event and "responseObject" not in event, event
    assert on_secrets  # the session reads and writes Secrets and tokens: they are there


def test_each_copy_has_fresh_ids_and_moves_on(tmp_path: Path) -> None:
    sample = load(SAMPLE)
    lines = list(repeated(sample, COPIES))
    events = _events(lines)
    per_copy = len(sample.lines)
    assert len(events) == COPIES * per_copy
    ids = [{e["auditID"] for e in events[c * per_copy : (c + 1) * per_copy]} for c in range(3)]
    assert all(len(copy) == sample.exchanges for copy in ids)
    assert not (ids[0] & ids[1]) and not (ids[1] & ids[2]) and not (ids[0] & ids[2])

    def times(copy: int) -> list[dt.datetime]:
        part = events[copy * per_copy : (copy + 1) * per_copy]
        return [dt.datetime.fromisoformat(e["stageTimestamp"]) for e in part]

    assert max(times(0)) < min(times(1)) and max(times(1)) < min(times(2))
    versions = [
        [v for line in lines[c * per_copy : (c + 1) * per_copy] for v in _versions(line)]
        for c in range(COPIES)
    ]
    assert versions[0] and max(versions[0]) < min(versions[1])
    assert [v - sample.versions for v in versions[1]] == versions[0]


def test_n_copies_import_as_n_times_the_exchanges(tmp_path: Path) -> None:
    sample = load(SAMPLE)
    log = tmp_path / "audit.log"
    write(sample, COPIES, log, zipped=False)
    with Sink(tmp_path / "rec.jsonl", source="audit log") as sink:
        done = import_audit([log], sink)
    assert sink.skipped == 0
    assert (done.events, sink.exchanges) == (COPIES * len(sample.lines), COPIES * sample.exchanges)
    assert (done.ignored, done.unfinished) == (0, 0)


def test_two_imports_of_a_log_are_the_same_recording_but_for_key_and_time(tmp_path: Path) -> None:
    """`same_recording` (the benchmark's and the Dask tests' comparison of two imports):
    each import has a key and a time of its own, and only those may differ."""
    log = tmp_path / "audit.log"
    write(load(SAMPLE), 1, log, zipped=False)
    with log.open("ab") as handle:  # a line it skips: a note, with the time it was said
        handle.write(b"not JSON\n")
    made = []
    for name in ("one", "two"):
        with Sink(tmp_path / f"{name}.jsonl", source="audit log") as sink:
            import_audit([log], sink)
        made.append(tmp_path / f"{name}.jsonl")
    one, two = (path.read_bytes() for path in made)
    assert one != two and b"redacted:" in one  # keys of their own: the bytes differ
    notes = [
        [line for line in text.splitlines() if b'"record":"note"' in line] for text in (one, two)
    ]
    assert notes[0] and notes[0] != notes[1]  # said at times of their own
    assert same_recording(*made)

    lines = two.splitlines(keepends=True)
    changed = tmp_path / "changed.jsonl"
    at = next(i for i, line in enumerate(lines) if i and b'"status":200' in line)
    changed.write_bytes(
        b"".join(
            [*lines[:at], lines[at].replace(b'"status":200', b'"status":201'), *lines[at + 1 :]]
        )
    )
    assert not same_recording(made[0], changed)
    changed.write_bytes(b"".join(lines[:-1]))  # one record short
    assert not same_recording(made[0], changed)
    note = next(i for i, line in enumerate(lines) if b'"record":"note"' in line)
    changed.write_bytes(  # a note that says something else
        b"".join([*lines[:note], lines[note].replace(b"skipped", b"kept"), *lines[note + 1 :]])
    )
    assert not same_recording(made[0], changed)

    # two placeholders that were one value, made two (or the other way): not the same
    places = [m for line in lines for m in re.findall(rb"redacted:[0-9a-f]{16}", line)]
    repeated_place = next(p for p in places if places.count(p) > 1)
    first = two.index(repeated_place)
    changed.write_bytes(two[:first] + b"redacted:0123456789abcdef" + two[first + 25 :])
    assert not same_recording(made[0], changed)
