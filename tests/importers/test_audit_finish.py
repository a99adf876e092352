"""The end of an audit import: exchanges the log does not finish are all written, and their
notes are capped as the others are (SKIP_NOTES), with a last note counting them: a log cut
in the middle of a busy cluster leaves thousands of watches open."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from k8s_wiretap.importers.audit import import_audit
from k8s_wiretap.importers.sink import SKIP_NOTES, Sink

WATCH: dict[str, Any] = {
    "kind": "Event",
    "apiVersion": "audit.k8s.io/v1",
    "level": "Metadata",
    "stage": "ResponseStarted",
    "requestURI": "/api/v1/namespaces/default/pods?watch=true",
    "verb": "watch",
    "user": {"username": "system:kube-scheduler"},
    "sourceIPs": ["127.0.0.1"],
    "userAgent": "kube-scheduler/v1.33.2",
    "responseStatus": {"metadata": {}, "code": 200},
    "requestReceivedTimestamp": "2026-12-03T13:46:05.321570Z",
    "stageTimestamp": "2026-12-03T13:46:05.363843Z",
}
OPEN = SKIP_NOTES + 500  # watches the log leaves open: more than the notes written
HELD = 3  # requests of which the log has only RequestReceived


def _imported(tmp_path: Path, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    log = tmp_path / "audit.log"
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    out = tmp_path / "rec.jsonl"
    with Sink(out, source="audit log") as sink:
        import_audit([log], sink)
    return [json.loads(line) for line in out.read_bytes().split(b"\n") if line]


def test_unfinished_exchanges_are_all_written_and_their_notes_capped(tmp_path: Path) -> None:
    watches = [{**WATCH, "auditID": f"w{n}"} for n in range(OPEN)]
    held = [
        {**WATCH, "auditID": f"h{n}", "stage": "RequestReceived", "verb": "get"}
        for n in range(HELD)
    ]
    written = _imported(tmp_path, watches + held)
    requests = [r["id"] for r in written if r["record"] == "request"]
    assert sorted(requests) == sorted(e["auditID"] for e in watches + held)
    notes = [r for r in written if r["record"] == "note"]
    assert len(notes) == SKIP_NOTES + 1
    assert {n["message"] for n in notes[:-1]} == {"the log ends before its ResponseComplete"}
    assert all(n["id"] in requests for n in notes[:-1])
    unfinished, not_noted = OPEN + HELD, OPEN + HELD - SKIP_NOTES
    assert notes[-1]["message"] == (
        f"{unfinished:,} exchanges the log does not finish, {not_noted:,} not noted"
    )


def test_a_few_unfinished_exchanges_are_each_noted_and_not_counted(tmp_path: Path) -> None:
    events = [{**WATCH, "auditID": "w"}, {**WATCH, "auditID": "h", "stage": "RequestReceived"}]
    notes = [(r["id"], r["message"]) for r in _imported(tmp_path, events) if "message" in r]
    assert notes == [
        ("w", "the log ends before its ResponseComplete"),
        ("h", "the log ends before its response"),
    ]
