"""The recording format: JSON Lines, one record per line, versioned by its header.

    {"record": "header", "format": "k8s-wiretap-recording", "version": 1, ...}
    {"record": "request",  "id": ..., "time": ..., "method": ..., "path": ..., ...}
    {"record": "response", "id": ..., "time": ..., "status": ..., "headers": ...}
    {"record": "event",    "id": ..., "seq": 0, "time": ..., "kind": "watch", "data": BODY}
    {"record": "end",      "id": ..., "time": ..., "body": BODY, "error": ...}
    {"record": "note",     "time": ..., "level": ..., "message": ...}

An import that a signal cut (SIGTERM, SIGINT: stopped before the end of its source) ends
with a note that says so and names it, `"cut": "SIGTERM"` (`cut_note`); readers say they
read a cut recording (`reader.file_records`). A live recording (the proxy's, the audit
webhook receiver's) that a signal stopped, as they are meant to stop, holds all it saw
until then: it ends with a note `"stopped": "SIGINT"` (`stop_note`), after the end of
each exchange still open.

Records of concurrent exchanges interleave; `id` ties them together. A BODY is
`{"text": ...}` (UTF-8 that is not protobuf) or `{"base64": ...}`, with `size` (bytes before
any truncation), and `truncated`, `redacted`, `decoded` (a content-encoding removed) when true.
Times are Unix seconds (float). The README documents every field.

A request body is streamed through the proxy: its `request` record is written once the body
is in (or the response starts, or the exchange ends), with the body's first `max_body` bytes
(`size` says how many passed). So a request record may follow records of other exchanges
that started after it; its `time` is when the request began. A request the proxy refused
(400, 408, 431: a malformed or oversized head, a head too slow) has the response the client
got, a Kubernetes Status, and an `end` whose `error` says why; bytes that were not HTTP and
TLS handshakes that failed are `note`s naming the peer.

An imported recording (`k8s-wiretap import`, docs/importing.md) names its source in the
header (`"imported": "audit log"`). An audit log's request records have an `audit` field:
what the API server's audit Event said beyond the request line (`auditID`, `level`,
`stage`, `verb`, `requestURI`, `user`, `impersonatedUser`, `sourceIPs`, `userAgent`,
`objectRef`, the authorization `decision` and `reason`, `annotations`) and `absent`, what
the record lacks because the log does not hold it ("request body", "response headers",
...); their end records have one too (`stages`, the final `responseStatus` and
`annotations`, and the response's `absent`). Their `identity` is `{"credential": "audit
log", "user": USERNAME}`. A proxy's recording joined with an audit log (`import audit
--join`) says `"joined": "audit log"` in its header; an exchange the API server answered
through the proxy keeps the proxy's records, its request and end records given the log's
`audit` fields (without `absent`; the request's with `"joined": true`); an exchange the
proxy did not see is as the import writes it, its request's `audit` with `"only": true`.

A recording in parts (`proxy --workers N`, one file per worker process: `rec.jsonl`,
`rec.jsonl.1`, …) has in every part's header `"recording": ID` (shared by the parts) and
`"part": K`; part 0, the file the user named, also has `"workers": N`. Each part is a
recording of its own (all the records of an exchange are in one part); readers find the
parts of part 0 and merge them by time (`parts.py`, `reader.iter_records`).
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
from typing import Any

import pybase64

from k8s_wiretap import __version__
from k8s_wiretap.wire.envelope import is_protobuf

__all__ = [
    "AUDIT_LOG",
    "FORMAT",
    "QUERY_ABSENT",
    "VERSION",
    "body_bytes",
    "body_record",
    "cut_note",
    "header_record",
    "stop_note",
]

FORMAT = "k8s-wiretap-recording"
VERSION = 1
AUDIT_LOG = "audit log"  # the identity's credential of an exchange an audit log gave
QUERY_ABSENT = "the query string"  # in `audit.absent`: the path's parameters are not known


def header_record(*, redacted: bool, max_body: int, **more: Any) -> dict[str, Any]:
    """The header record; `more`: fields such as a part's (`parts.part_header`)."""
    return {
        "record": "header",
        "format": FORMAT,
        "version": VERSION,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds"),
        "tool": f"k8s-wiretap {__version__}",
        "redacted": redacted,
        "max_body": max_body,
        **more,
    }


def cut_note(by: str, what: str, when: float) -> dict[str, Any]:
    """The last record of a recording the signal `by` ("SIGTERM") cut at `when`; `what`
    says what it holds ("the import stopped after 1,200 exchanges ...")."""
    message = f"recording cut by {by}: {what}"
    return {"record": "note", "time": when, "level": "error", "message": message, "cut": by}


def stop_note(by: str, when: float) -> dict[str, Any]:
    """The last record of a live recording the signal `by` ("SIGTERM") stopped at `when`."""
    message = f"recording stopped by {by}"
    return {"record": "note", "time": when, "level": "info", "message": message, "stopped": by}


def body_record(
    data: bytes,
    *,
    size: int | None = None,
    truncated: bool = False,
    redacted: bool = False,
    decoded: str | None = None,
) -> dict[str, Any]:
    """A BODY: `data` as text when it is UTF-8 (and not protobuf), else base64.

    `size` is the size of the whole original (after removing a content-encoding, if
    `decoded`); `data` may be shorter (`truncated`) or rewritten (`redacted`).
    """
    record: dict[str, Any]
    text = None
    if not is_protobuf(data):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
    record = {"text": text} if text is not None else {"base64": base64.b64encode(data).decode()}
    record["size"] = len(data) if size is None else size
    if truncated:
        record["truncated"] = True
    if redacted:
        record["redacted"] = True
    if decoded:
        record["decoded"] = decoded
    return record


def body_bytes(record: dict[str, Any] | None) -> bytes:
    """The bytes a BODY holds (possibly truncated or redacted)."""
    if not record:
        return b""
    if "text" in record:
        return str(record["text"]).encode("utf-8")
    data = record.get("base64", "")
    # pybase64 (SIMD, 10x binascii's speed: base64 was 6% of explain's time) for a str of
    # strict base64 (what the recorder writes, and faster to read than its lenient mode),
    # binascii for anything else: what it takes and refuses, in its words (pybase64's lenient
    # mode reads on past padding, "000=0"); b64decode for what is not a str, which it refuses
    # in its own words (a skipped record's warning quotes them)
    if type(data) is not str:
        return base64.b64decode(data)
    try:
        return pybase64.b64decode(data, validate=True)
    except ValueError:  # binascii.Error too
        return binascii.a2b_base64(data)
