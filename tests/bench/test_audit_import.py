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

from bench.audit_import import SAMPLE, load, repeated, write
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
