"""The recording file's header, its last notes, and BODYs: bytes in and out of a record.

The records themselves — every kind, its fields and their meaning — are declared in
`records.py`; this module makes the records that take more than their fields: the header
(its format, version, time and tool), the note that a signal cut an import (`cut_note`:
readers say they read a cut recording, `reader.file_records`) or stopped a live recording
(`stop_note`), and a BODY of some bytes (`body_record`: text when they are UTF-8 and not
protobuf, else base64), read back by `body_bytes`.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
from typing import Any

import pybase64

from k8s_wiretap import __version__
from k8s_wiretap.capture import records
from k8s_wiretap.capture.records import FORMAT, VERSION
from k8s_wiretap.wire.envelope import is_protobuf

__all__ = [
    "AUDIT_LOG",
    "QUERY_ABSENT",
    "body_bytes",
    "body_record",
    "cut_note",
    "header_record",
    "stop_note",
]

AUDIT_LOG = "audit log"  # the identity's credential of an exchange an audit log gave
QUERY_ABSENT = "the query string"  # in `audit.absent`: the path's parameters are not known


def header_record(*, redacted: bool, max_body: int, **more: Any) -> records.Header:
    """The header record; `more`: fields such as a part's (`parts.part_header`)."""
    return records.header(
        format=FORMAT,
        version=VERSION,
        created=dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds"),
        tool=f"k8s-wiretap {__version__}",
        redacted=redacted,
        max_body=max_body,
        **more,
    )


def cut_note(by: str, what: str, when: float) -> records.Note:
    """The last record of a recording the signal `by` ("SIGTERM") cut at `when`; `what`
    says what it holds ("the import stopped after 1,200 exchanges ...")."""
    message = f"recording cut by {by}: {what}"
    return records.note(time=when, level="error", message=message, cut=by)


def stop_note(by: str, when: float) -> records.Note:
    """The last record of a live recording the signal `by` ("SIGTERM") stopped at `when`."""
    message = f"recording stopped by {by}"
    return records.note(time=when, level="info", message=message, stopped=by)


def body_record(
    data: bytes,
    *,
    size: int | None = None,
    truncated: bool = False,
    redacted: bool = False,
    decoded: str | None = None,
) -> records.Body:
    """A BODY: `data` as text when it is UTF-8 (and not protobuf), else base64.

    `size` is the size of the whole original (after removing a content-encoding, if
    `decoded`); `data` may be shorter (`truncated`) or rewritten (`redacted`).
    """
    record: records.Body
    text = None
    if not is_protobuf(data):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
    size = len(data) if size is None else size
    if text is not None:
        record = {"text": text, "size": size}
    else:
        record = {"base64": base64.b64encode(data).decode(), "size": size}
    if truncated:
        record["truncated"] = True
    if redacted:
        record["redacted"] = True
    if decoded:
        record["decoded"] = decoded
    return record


def body_bytes(record: records.Body | dict[str, Any] | None) -> bytes:
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
