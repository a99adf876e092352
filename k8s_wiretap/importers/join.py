"""An audit log joined with a proxy's recording of the same cluster (docs/importing.md).

The API server answers every request it serves with an `Audit-ID` header whose value is
the auditID of the request's audit Events (apiserver pkg/endpoints/filters/with_auditid.go
sets the request's audit ID from the request's own Audit-ID header, or a new UUID, and
echoes it in the response; pkg/audit/request.go gives the Event that ID). The proxy records
response headers, so a proxied exchange names its Events.

The join, in three passes, written to a new recording:

1. the recording is read once for its exchanges' ids and their `Audit-ID` answers (a dict
   by Audit-ID: the only memory that grows with the recording);
2. the logs are imported as `import audit` imports them (`audit.import_audit`, through a
   `Sink`): an exchange whose auditID a proxied exchange answered with is not written: its
   request's and end's `audit` fields are kept for that exchange (memory grows with the
   proxied exchanges, never with the log); every other one is written, as the plain import
   writes it, to a temporary recording beside the output, marked `only` (seen only in the
   audit log) and given an id none of the recording's exchanges has;
3. the recording's records, each as it was but for the joined `audit` fields, and the
   temporary recording's are merged by time into the output.
The output is written under a temporary name of its own and renamed once whole
(`capture.outputs.publish`): a join that fails or is stopped leaves no output.

A joined exchange keeps everything the proxy recorded (its bodies are the bytes on the
wire); its request record gains the log's request `audit` field without `absent` (the
proxy recorded what the log lacks) and with `joined: true`, its end record the log's end
`audit` field, also without `absent`. An exchange the proxy answered itself (no Audit-ID)
stays as it is, as does one whose Audit-ID the log does not hold (counted).
"""

from __future__ import annotations

import heapq
import json
import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from k8s_wiretap.capture import records
from k8s_wiretap.capture.format import header_record
from k8s_wiretap.capture.outputs import FileOutput, discard, publish, temporary_beside
from k8s_wiretap.capture.parts import single
from k8s_wiretap.capture.reader import RecordingError, file_records, iter_records
from k8s_wiretap.capture.recorder import DEFAULT_MAX_BODY
from k8s_wiretap.importers import limits
from k8s_wiretap.importers.audit import AuditImport, import_audit
from k8s_wiretap.importers.limits import Limits
from k8s_wiretap.importers.sink import Headers, Sink
from k8s_wiretap.kube.requestinfo import RequestInfo
from k8s_wiretap.wire.words import counted

__all__ = ["AUDIT_ID", "Joined", "Proxied", "join_audit", "proxied"]

AUDIT_ID = "audit-id"  # the response header naming the request's audit Events
SOURCE = "audit log"
_HEADER_KEYS = set(header_record(redacted=False, max_body=0))  # the ones FileOutput writes


@dataclass
class Proxied:
    """What the join needs of the recording: its header, its exchanges' ids, and which
    answered with which Audit-ID."""

    path: Path
    header: dict[str, Any]
    by_audit_id: dict[str, str] = field(default_factory=dict)  # Audit-ID → exchange id
    ids: set[str] = field(default_factory=set)
    without: int = 0  # responses without an Audit-ID (answered by the proxy, a kubelet's)
    repeated: int = 0  # responses with an Audit-ID another exchange answered with first
    warnings: list[str] = field(default_factory=list)


def proxied(path: Path) -> Proxied:
    """The recording at `path`, read once (a recording in parts as one); RecordingError if
    it is none, or is an audit log's import (it holds no Audit-ID to join by)."""
    warnings: list[str] = []
    records = iter_records(path, warnings)
    header = next(records)
    if header.get("imported") == SOURCE or header.get("joined"):
        what = "joined with" if header.get("joined") else "imported from"
        raise RecordingError(f"{path}: a recording {what} an audit log, not a proxy's")
    seen = Proxied(path, header, warnings=warnings)
    for record in records:
        id = record.get("id")
        if not isinstance(id, str):
            continue
        seen.ids.add(id)
        if record.get("record") == "response":
            _answered(seen, id, record.get("headers"))
    return seen


def _answered(seen: Proxied, id: str, headers: Any) -> None:
    value = next(
        (v for k, v in _pairs(headers) if k.lower() == AUDIT_ID and v),
        None,
    )
    if value is None:
        seen.without += 1
    elif value in seen.by_audit_id:
        seen.repeated += 1
    else:
        seen.by_audit_id[value] = id


def _pairs(headers: Any) -> Iterator[tuple[str, str]]:
    for pair in headers if isinstance(headers, list) else ():
        if isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair):
            yield pair[0], pair[1]


@dataclass
class _Facts:
    """A joined exchange's audit fields, as JSON text until written (smaller than dicts)."""

    request: str
    end: str | None = None


def _joined(audit: dict[str, Any], **more: Any) -> str:
    kept = {k: v for k, v in audit.items() if k != "absent"}
    return json.dumps({**kept, **more}, separators=(",", ":"), ensure_ascii=False)


class _Splitting(Sink):
    """A Sink that keeps the joined exchanges' audit fields and writes the rest (the
    exchanges seen only in the audit log) as it would, marked `only` and renamed where the
    recording has their id."""

    def __init__(self, path: Path, seen: Proxied, **options: Any) -> None:
        super().__init__(path, source=SOURCE, **options)
        self.seen = seen
        self.facts: dict[str, _Facts] = {}  # proxied exchange id → its audit fields
        self.joined = 0
        self._joining: dict[str, str] = {}  # the import's id → the proxied exchange's, open
        self._renamed: dict[str, str] = {}  # the import's id → its id in the output, open
        self._issued: set[str] = set()  # ids given by renaming
        # a joined exchange's request values (its body is the recording's, not written
        # here), which its audit responseStatus is masked of, as the plain import masks it
        self._values: dict[str, set[bytes]] = {}

    def request(
        self,
        id: str,
        when: float,
        method: str,
        path: str,
        headers: Headers,
        body: bytes | None = None,
        **fields: Any,
    ) -> None:
        audit = fields.get("audit") or {}
        exchange = self.seen.by_audit_id.get(str(audit.get("auditID", "")))
        if exchange is not None and exchange not in self.facts:
            self._joining[id] = exchange
            self._values[id] = self.values(method, path, headers, body)
            self.facts[exchange] = _Facts(_joined(audit, joined=True))
            self.joined += 1
            return
        fields["audit"] = {**audit, "only": True}
        super().request(self._fresh(id), when, method, path, headers, body, **fields)

    def response(self, id: str, when: float, status: int, headers: Headers, **fields: Any) -> None:
        if id not in self._joining:
            super().response(self._renamed.get(id, id), when, status, headers, **fields)

    def event(self, id: str, when: float, data: bytes, **fields: Any) -> None:
        if id not in self._joining:
            super().event(self._renamed.get(id, id), when, data, **fields)

    def end(
        self,
        id: str,
        when: float,
        body: bytes | None = None,
        *,
        events: int | None = None,
        error: str | None = None,
        **fields: Any,
    ) -> None:
        exchange = self._joining.pop(id, None)
        if exchange is not None:
            self.facts[exchange].end = _joined(fields.get("audit") or {})
            self._values.pop(id, None)
            return
        output = self._renamed.pop(id, id)
        super().end(output, when, body, events=events, error=error, **fields)

    def status(self, id: str, info: RequestInfo, status: dict[str, Any]) -> dict[str, Any]:
        if id in self._values:
            return self.masked(info, status, self._values[id])
        return super().status(self._renamed.get(id, id), info, status)

    def forget(self, id: str) -> None:
        self._values.pop(id, None)
        if self._joining.pop(id, None) is None:
            super().forget(self._renamed.pop(id, id))

    def note(self, message: str, *, level: str = "warning", id: str | None = None) -> None:
        """A note about an exchange is about it where it is in the output: a joined one's
        under the proxied exchange's id, said to come from the audit log."""
        if id is not None and id in self._joining:
            id, message = self._joining[id], f"audit log: {message}"
        elif id is not None:
            id = self._renamed.get(id, id)
        super().note(message, level=level, id=id)

    def _fresh(self, id: str) -> str:
        """`id`, unless an exchange of the recording has it: then `ID~jN`, the first N
        that neither the recording nor an earlier rename has."""
        if id not in self.seen.ids:
            return id
        n = 1
        while (new := f"{id}~j{n}") in self.seen.ids or new in self._issued:
            n += 1
        self._issued.add(new)
        self._renamed[id] = new
        super().note(f"auditID {id} is an exchange id of the recording: imported as {new}", id=new)
        return new


@dataclass
class Joined:
    """What a join did: the import (events, ignored), the sink's counts, and the join's."""

    importer: AuditImport
    sink: Sink  # closed; its counts: exchanges seen only in the audit log, parts skipped
    joined: int  # proxied exchanges given their audit fields
    unmatched: int  # proxied exchanges whose Audit-ID the logs do not hold
    without: int  # proxied responses without an Audit-ID
    warnings: list[str]


def join_audit(
    logs: Iterable[Path],
    seen: Proxied,
    output: Path,
    *,
    overwrite: bool = False,
    on_skip: Callable[[str], None] | None = None,
    bounds: Limits = limits.DEFAULT,
) -> Joined:
    """Join the audit `logs` with the recording `seen` (read by `proxied`) into `output`,
    the logs read within `bounds`."""
    header = seen.header
    max_body = header.get("max_body")
    if not isinstance(max_body, int) or isinstance(max_body, bool) or max_body < 0:
        max_body = DEFAULT_MAX_BODY
    options = {"max_body": max_body, "on_skip": on_skip}
    temporary = output.parent / f".{output.name}.{secrets.token_hex(6)}.audit-only"
    try:
        split = _Splitting(temporary, seen, **options)
        with split:
            importer = import_audit(logs, split, bounds)
        staged = temporary_beside(output)  # renamed to `output` once whole
        out = FileOutput(
            staged,
            redacted=bool(header.get("redacted")),
            max_body=max_body,
            header={**_kept(header), "joined": SOURCE},
        )
        try:
            try:
                _merge(seen, split.facts, temporary, out)
                out.write(_summary(split, seen))
            finally:
                out.close()
        except BaseException:
            discard(staged)
            raise
        publish(staged, output, overwrite=overwrite)
    finally:
        with suppress(FileNotFoundError):
            temporary.unlink()
    unmatched = len(seen.by_audit_id) - split.joined
    return Joined(importer, split, split.joined, unmatched, seen.without, seen.warnings)


def _kept(header: dict[str, Any]) -> dict[str, Any]:
    """The recording's header fields the output's header keeps (not a part's, nor those
    every header is made with)."""
    return {k: v for k, v in single(header).items() if k not in _HEADER_KEYS}


def _summary(split: _Splitting, seen: Proxied) -> records.Note:
    unmatched = len(seen.by_audit_id) - split.joined
    message = (
        f"joined with an audit log: {counted(split.joined, 'proxied exchange')} given their audit "
        f"Events, {unmatched:,} whose Audit-ID the log does not hold, {seen.without:,} "
        f"answered without an Audit-ID; {counted(split.exchanges, 'exchange')} seen only in the "
        "audit log"
    )
    if seen.repeated:
        message += f"; {seen.repeated:,} answered with an Audit-ID an earlier one had: not joined"
    return records.note(time=time.time(), level="info", message=message)


def _merge(seen: Proxied, facts: dict[str, _Facts], temporary: Path, out: FileOutput) -> None:
    """The recording's records (joined where `facts` has them) and the temporary
    recording's, merged by time, into `out`."""
    ignored: list[str] = []  # the recording's were said by `proxied`; the temporary has none
    recording = _joined_records(_body_of(iter_records(seen.path, ignored)), facts)
    only = _body_of(file_records(temporary, ignored))
    for record in _by_time([recording, only]):
        out.write(record)


def _body_of(records: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    next(records)  # the header
    return records


def _joined_records(
    records: Iterable[dict[str, Any]], facts: dict[str, _Facts]
) -> Iterator[dict[str, Any]]:
    for record in records:
        kind, id = record.get("record"), record.get("id")
        joined = facts.get(id) if isinstance(id, str) else None
        if joined is not None and kind == "request":
            record["audit"] = json.loads(joined.request)
        elif joined is not None and kind == "end":
            del facts[str(id)]
            if joined.end is not None:
                record["audit"] = json.loads(joined.end)
        yield record


def _timed(records: Iterable[dict[str, Any]], stream: int) -> Iterator[tuple[float, int, int, Any]]:
    """(time, stream, n, record): a record's time, never earlier than its predecessor's
    (each stream is one ordered sequence for the merge); a note takes its predecessor's
    (the import writes its notes at the time it makes them, not the log's)."""
    last = 0.0
    for n, record in enumerate(records):
        stamp = record.get("time")
        if isinstance(stamp, int | float) and record.get("record") != "note":
            last = max(last, float(stamp))
        yield last, stream, n, record


def _by_time(streams: Sequence[Iterable[dict[str, Any]]]) -> Iterator[dict[str, Any]]:
    timed = [_timed(records, number) for number, records in enumerate(streams)]
    for *_, record in heapq.merge(*timed, key=lambda item: item[:3]):
        yield record
