"""Values no importer may pass on, from any source (HAR, mitmproxy flows, audit logs): a time
no date holds (NaN, an infinity, the year 1 or 10,000, 1e30), a number too big for a float,
a `cloudLogging.absent` or a user's `groups` that is no list, a URL with a password in an
entry that is skipped. Each is a counted skip with its place and reason, or taken as not
given; the rest of the source is imported, and `explain` and `export --har` read the result
in any timezone."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mitmproxy.io import FlowWriter, tnetstring
from mitmproxy.test import tflow

from k8s_wiretap.importers.sink import Sink
from tests.conftest import cli
from tests.importers.test_audit_input import EVENT
from tests.importers.test_har import API, _entry, _har, _records

NEW_YORK = {**os.environ, "TZ": "America/New_York"}


def _imported(kind: str, source: Path, out: Path) -> list[str]:
    """`import KIND SOURCE -o OUT`, which must succeed; the lines it said."""
    result = cli("import", kind, str(source), "-o", str(out))
    assert result.returncode == 0, result.stderr
    return result.stderr.strip().splitlines()


def _read_anywhere(recording: Path, tmp_path: Path) -> list[dict[str, Any]]:
    """`explain --format json` and `export --har` of `recording` in New York's timezone
    (both make dates of its times): both succeed; the explained lines."""
    explained = cli("explain", str(recording), "--format", "json", env=NEW_YORK)
    assert explained.returncode == 0, explained.stderr
    har = tmp_path / "again.har"
    exported = cli("export", str(recording), "--har", str(har), env=NEW_YORK)
    assert exported.returncode == 0, exported.stderr
    return [json.loads(line) for line in explained.stdout.splitlines()]


def test_an_integer_too_big_for_a_float_is_no_duration(tmp_path: Path) -> None:
    """float(10**400) raises OverflowError: the entry's time is taken as not given."""
    entries = [_entry(f"{API}/pods"), _entry(f"{API}/nodes"), _entry(f"{API}/namespaces")]
    entries[1]["time"] = 10**400
    entries[1]["timings"]["wait"] = -(10**400)
    entries[1]["_k8sWiretap"] = {"events": [{"time": 10**400}]}
    har, out = _har(tmp_path, entries), tmp_path / "rec.jsonl"
    said = _imported("har", har, out)
    assert said == [f"{out}: 3 exchanges from {har}; 0 unreadable entries skipped"]
    requests, ends = _records(out, "request"), _records(out, "end")
    assert [r["path"] for r in requests] == ["/api/v1/pods", "/api/v1/nodes", "/api/v1/namespaces"]
    assert ends[1]["time"] == requests[1]["time"]  # no duration: ends as it starts


def _bad_times(entries: list[Any]) -> None:
    entries[0]["startedDateTime"] = "0001-01-01T00:00:00Z"
    entries[1]["startedDateTime"] = "9999-12-31T23:59:59Z"
    entries[2]["time"] = 1e300  # finite, but its end no date


def test_har_times_no_date_holds_skip_their_entry(tmp_path: Path) -> None:
    entries = [_entry(f"{API}/n{n}") for n in range(4)]
    _bad_times(entries)
    har, out = _har(tmp_path, entries), tmp_path / "rec.jsonl"
    said = _imported("har", har, out)
    outside = "a time outside 1970-01-02 to 9999-12-31 (UTC), which no date can hold"
    assert said == [
        f"{har}:entry 1: skipped: the start is {outside}",
        f"{har}:entry 2: skipped: the start is {outside}",
        f"{har}:entry 3: skipped: the end is {outside}",
        f"{out}: 1 exchange from {har}; 3 unreadable entries skipped",
    ]
    assert [line["path"] for line in _read_anywhere(out, tmp_path)] == ["/api/v1/n3"]


def test_mitmproxy_times_no_date_holds_skip_their_flow(tmp_path: Path) -> None:
    flows = [tflow.tflow(resp=True) for _ in range(5)]
    flows[0].request.timestamp_start = math.nan
    flows[1].request.timestamp_start = math.inf
    flows[2].request.timestamp_start = 1e30
    assert flows[3].response is not None
    flows[3].response.timestamp_end = -math.inf
    flows[4].request.path = "/api/v1/pods"
    mitm, out = tmp_path / "flows.mitm", tmp_path / "rec.jsonl"
    with mitm.open("wb") as file:
        writer = FlowWriter(file)
        for flow in flows:
            writer.add(flow)
    said = _imported("mitmproxy", mitm, out)
    outside = "a time outside 1970-01-02 to 9999-12-31 (UTC), which no date can hold"
    assert said == [
        f"{mitm}:flow 1: skipped: the start is a time that is no number (nan)",
        f"{mitm}:flow 2: skipped: the start is a time that is no number (inf)",
        f"{mitm}:flow 3: skipped: the start is {outside}",
        f"{mitm}:flow 4: skipped: the end is a time that is no number (-inf)",
        f"{out}: 1 exchange from {mitm}; 4 unreadable flows skipped",
    ]
    assert [line["path"] for line in _read_anywhere(out, tmp_path)] == ["/api/v1/pods"]


def _line(audit_id: str, **changed: Any) -> str:
    return json.dumps({**EVENT, "auditID": audit_id, **changed})


def test_audit_times_no_date_holds_skip_their_event(tmp_path: Path) -> None:
    log, out = tmp_path / "audit.log", tmp_path / "rec.jsonl"
    lines = [
        _line("a", requestReceivedTimestamp="0001-01-01T00:00:00Z"),
        _line("b", stageTimestamp="9999-12-31T23:59:59Z"),
        _line("c", stageTimestamp="0001-01-01T00:00:00+14:00"),
        _line("d"),
    ]
    log.write_text("".join(line + "\n" for line in lines))
    said = _imported("audit", log, out)
    outside = "is a time outside 1970-01-02 to 9999-12-31 (UTC), which no date can hold"
    assert said[:3] == [  # a count per reason, with the first place and its words
        f"{log}: audit.k8s.io Events (JSON lines), 1 event",
        f"  1 skipped, first at line 1: requestReceivedTimestamp '0001-01-01T00:00:00Z' {outside}",
        f"  2 skipped, first at line 2: stageTimestamp '9999-12-31T23:59:59Z' {outside}",
    ]  # the same reason, of another value
    assert [line["id"] for line in _read_anywhere(out, tmp_path)] == ["d"]


@pytest.mark.parametrize("absent", [5, "abc", {"a": 1}, ["lacks this", 5, None]])
def test_a_cloud_logging_absent_that_is_no_list_of_strings_is_not_taken(
    absent: Any, tmp_path: Path
) -> None:
    """A plain Event may carry a `cloudLogging` of its own: only a list's strings count."""
    log, out = tmp_path / "audit.log", tmp_path / "rec.jsonl"
    log.write_text(_line("a", cloudLogging={"absent": absent}) + "\n" + _line("b") + "\n")
    said = _imported("audit", log, out)
    assert said[-1].endswith("; 0 unreadable lines skipped"), said
    requests = _records(out, "request")
    assert [r["id"] for r in requests] == ["a", "b"]
    taken = ["lacks this"] if isinstance(absent, list) else []
    assert requests[0]["audit"]["absent"] == ["request headers but User-Agent", *taken]


def test_groups_that_are_no_list_are_no_groups(tmp_path: Path) -> None:
    log, out = tmp_path / "audit.log", tmp_path / "rec.jsonl"
    users = [
        {"username": "five", "groups": 5},
        {"username": "letters", "groups": "abc"},
        {"username": "mixed", "groups": ["system:masters", 5, None, "dev"]},
        {"username": "none", "groups": None},
    ]
    impersonated = {"username": "as", "groups": {"g": 1}}
    log.write_text(
        "".join(
            _line(f"u{n}", user=user, impersonatedUser=impersonated) + "\n"
            for n, user in enumerate(users)
        )
    )
    _imported("audit", log, out)
    explained = _read_anywhere(out, tmp_path)
    audits = [line["audit"] for line in explained]
    assert [a["groups"] for a in audits] == [[], [], ["system:masters", "dev"], []]
    assert {str(a["impersonated_groups"]) for a in audits} == {"[]"}
    assert audits[1]["said"].startswith("letters as as")


SECRET = "hunter2-in-the-url"
NO_HOST = "has no host, or a port that is none"


def test_a_skipped_entrys_url_is_never_quoted(tmp_path: Path) -> None:
    """Its user and password, path and query may be credentials: the message names its
    scheme at most; a URL urllib cannot split is skipped too, not a crash."""
    urls = [
        f"wss://admin:{SECRET}@h:6443/api/v1/pods?token={SECRET}",
        f"https://admin:{SECRET}@h:port{SECRET}/api",
        f"https://admin:{SECRET}@/api?token={SECRET}",
        f"http://admin:{SECRET}@[::1/api",
        f"{API}/pods",
    ]
    har, out = _har(tmp_path, [_entry(url) for url in urls]), tmp_path / "rec.jsonl"
    said = _imported("har", har, out)
    assert said == [
        f"{har}:entry 1: skipped: request.url (scheme 'wss') is no absolute http(s) URL",
        f"{har}:entry 2: skipped: request.url (scheme 'https') {NO_HOST}",
        f"{har}:entry 3: skipped: request.url (scheme 'https') {NO_HOST}",
        f"{har}:entry 4: skipped: request.url (no scheme) is no absolute http(s) URL",
        f"{out}: 1 exchange from {har}; 4 unreadable entries skipped",
    ]
    assert SECRET not in out.read_text()


def test_what_mitmproxy_says_of_a_flow_it_cannot_read_is_not_quoted(tmp_path: Path) -> None:
    """mitmproxy's error texts quote the state it refused (an Error's message here; a
    WebSocket's messages alike) and the bytes of a broken tnetstring: neither is said."""
    good, bad = tflow.tflow(resp=True), tflow.tflow(resp=True).get_state()
    bad["error"] = {"msg": f"token={SECRET}", "timestamp": 1e9, "surprise": 1}
    broken = f"{len(SECRET)}:{SECRET}}}".encode()  # a dict whose item has no length
    mitm, out = tmp_path / "flows.mitm", tmp_path / "rec.jsonl"
    with mitm.open("wb") as file:
        FlowWriter(file).add(good)
        file.write(tnetstring.dumps(bad) + broken)
    said = _imported("mitmproxy", mitm, out)
    assert said == [
        f"{mitm}:flow 2: skipped: not a flow mitmproxy can read: ValueError (mitmproxy's "
        "text, which may quote the flow, not said)",
        f"{mitm}:flow 3: skipped: unreadable, the rest of the file too: not a tnetstring: "
        "missing or invalid length prefix",
        f"{out}: 1 exchange from {mitm}; 2 unreadable flows skipped",
    ]
    assert SECRET not in out.read_text()


@pytest.mark.parametrize("when", [math.nan, -math.inf, 1e30, -62135596800.0, 0.0, 10**400])
def test_a_time_no_importer_checked_is_raised_never_written(when: Any, tmp_path: Path) -> None:
    """Every importer checks its times (`sink.time_error`); one that did not is a bug the
    sink raises, and nothing of it is written."""
    out = tmp_path / "rec.jsonl"
    with Sink(out, source="test") as sink:
        with pytest.raises(ValueError, match="import: a time"):
            sink.request("r", when, "GET", "/api/v1/pods", [])
        sink.request("s", 1e9, "GET", "/api/v1/pods", [])
        calls: tuple[Callable[[], None], ...] = (
            lambda: sink.response("s", when, 200, []),
            lambda: sink.event("s", when, b"{}"),
            lambda: sink.end("s", when),
        )
        for call in calls:
            with pytest.raises(ValueError, match="import: a time"):
                call()
        sink.end("s", 1e9 + 1)
    written = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    assert [(r["record"], r["id"], r["time"]) for r in written] == [
        ("request", "s", 1e9),
        ("end", "s", 1e9 + 1),
    ]
