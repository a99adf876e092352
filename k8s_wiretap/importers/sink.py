"""Where an import goes: a new recording, redacted exactly as the proxy redacts, and the
count of what the import skipped.

An importer reads its source and calls, for each exchange, `request`, then `response`,
`event` (a watch event) and `end` as it has them, all tied by the exchange's `id`; records
of several exchanges may interleave, as the proxy's do. Bodies are given as the bytes the
source holds; the sink redacts them (`capture.redact.Redactor`, by the request's resource
and the body's Content-Type, as the recorder does), truncates them at `max_body`, and
writes them as the recorder writes BODYs. A record's other fields (`client`, `identity`,
`audit`, ...: `capture/records.py` says what each holds) are passed through as given.

Every record's time is seconds since the epoch that a date can be made of in any timezone
(`time_error`: finite, after 1970-01-02 and before 9999-12-31 UTC), as `explain` and
`export` make dates of them: an importer checks its times with `time_error` and skips what
has another (a NaN, an infinity, the year 1 or 10,000); a record given one anyway is an
importer's bug, raised (ValueError), never written.

`skip(where, reason)` counts a part of the source the importer could not read: it is told
to `on_skip` (the command prints it) and the first SKIP_NOTES of them are also notes in the
recording; `close()` ends with a note of the total. An output file is never replaced
unless `overwrite` (it is opened with O_EXCL, `capture.outputs.FileOutput`).

The recording is written under a temporary name beside `path` and renamed to it when the
sink closes (`capture.outputs.publish`): a sink left by an error (a full disk, a bad
input) removes its temporary, and `path` is as it was. A sink left by a signal (`Stopped`,
raised by `errors.raising_on_signals`) keeps what it wrote, ends it with a note that the
signal cut it (`format.cut_note`) and renames it: a cut import is said to be cut by every
reader. `cut_by(SIGNAL)` asks `close` for that note; a live sink (`STAGED = False`: its
file is written in place as it grows) that a signal stops is told `stopped_by(SIGNAL)`, and
`close` ends it with a note of that (`format.stop_note`).

    with Sink(path, source="audit log") as sink:
        sink.request("a1", 1.5, "GET", "/api/v1/pods", [("User-Agent", "kubectl")])
        sink.response("a1", 1.6, 200, [("Content-Type", "application/json")])
        sink.end("a1", 1.6, body=b'{"kind":"PodList"}')
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from k8s_wiretap.capture import jsonfast, records
from k8s_wiretap.capture.format import body_record, cut_note, stop_note
from k8s_wiretap.capture.outputs import (
    FileOutput,
    append_record,
    discard,
    publish,
    temporary_beside,
)
from k8s_wiretap.capture.recorder import DEFAULT_MAX_BODY
from k8s_wiretap.capture.redact import Redactor
from k8s_wiretap.errors import Stopped
from k8s_wiretap.kube.requestinfo import RequestInfo, parse_request
from k8s_wiretap.wire.words import counted

__all__ = ["EARLIEST", "LATEST", "SKIP_NOTES", "Sink", "time_error"]

SKIP_NOTES = 1000  # skipped parts noted one by one in the recording, at most
PLACEHOLDERS = 4096  # values whose placeholders the sink remembers, at most
# The times a record may hold (seconds since the epoch): a day inside what `datetime` can
# make a date of (the years 1 to 9999), so that it is a date in any timezone.
EARLIEST = 86_400.0  # 1970-01-02T00:00:00Z
LATEST = 253_402_214_400.0  # 9999-12-31T00:00:00Z
Headers = Sequence[tuple[str, str]]
# A body's first byte that is JSON's object, array or string, never protobuf's magic: a body
# that begins so and is UTF-8 is written as its text (`format.body_record`, told at once)
_TEXT_OPENING = (b"{", b"[", b'"')


def time_error(when: Any) -> str | None:
    """Why `when` cannot be a record's time (a number, finite, between EARLIEST and
    LATEST); None when it can."""
    if type(when) is float and EARLIEST < when < LATEST:
        return None  # the common case, told at once (a NaN fails the comparison)
    if not isinstance(when, int | float) or isinstance(when, bool):
        return f"a time that is no number ({type(when).__name__})"
    if isinstance(when, float) and not math.isfinite(when):
        return f"a time that is no number ({when})"
    if not EARLIEST < when < LATEST:
        return "a time outside 1970-01-02 to 9999-12-31 (UTC), which no date can hold"
    return None


def _checked(when: float) -> float:
    """`when`, raised (ValueError) when it can be no record's time: the importer did not
    check it (`time_error`), a bug."""
    error = time_error(when)
    if error is not None:
        raise ValueError(f"import: {error}: {when!r}")
    return when


def _content_type(headers: Headers) -> str:
    for name, value in headers:
        if name.lower() == "content-type":
            return value
    return ""


@dataclass(slots=True)
class _Open:
    """What the sink keeps of an exchange until its end: how to redact its bodies."""

    info: RequestInfo
    response_type: str = ""
    seq: int = 0
    seen: set[bytes] = field(default_factory=set)  # its secret values (capture/redact.py)


class Sink:
    """Writes an import's exchanges to a new recording at `path` (0600), redacted.

    `source` names what was imported (the header's `imported` field); `on_skip` is told
    each skipped part, one line ("FILE:LINE: skipped: REASON")."""

    STAGED = True  # written under a temporary name, renamed to `path` by `close`

    def __init__(
        self,
        path: Path,
        *,
        source: str,
        overwrite: bool = False,
        max_body: int = DEFAULT_MAX_BODY,
        on_skip: Callable[[str], None] | None = None,
        key: bytes | None = None,
    ) -> None:
        self.max_body = max_body
        self.on_skip = on_skip
        self.exchanges = 0  # requests written
        self.skipped = 0
        # the placeholders' key: the recording's own, made here, unless the parts of one
        # import share it (`importers.partition`)
        self._redactor = Redactor(key)
        self._placeholders: dict[str, str] = {}  # value: its placeholder (`placeholder`)
        self._open: dict[str, _Open] = {}
        self._closed = False
        self._cut: str | None = None
        self._stopped: str | None = None
        self.outcome = "writing"  # then "whole", "cut" (ends with a note of it) or "removed"
        self.path, self._overwrite = path, overwrite
        self._file = temporary_beside(path) if self.STAGED else path
        try:
            self._output = self._opened(source)
        except FileExistsError:
            raise
        except BaseException:
            self._discard()
            raise

    def _opened(self, source: str) -> FileOutput:
        """Where the records go: the recording's file (`importers.partition` keeps a
        partition's in memory instead)."""
        return FileOutput(
            self._file,
            redacted=True,
            max_body=self.max_body,
            overwrite=self._overwrite and not self.STAGED,
            header={"imported": source},
        )

    def __enter__(self) -> Sink:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if isinstance(error, Stopped):
            self.cut_by(error.signal.name)
        elif error is not None:
            self._abandon()
            return
        self.close()

    # -- an exchange ----------------------------------------------------------------------
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
        """The request record of a new exchange; `fields`: more of it (identity, client,
        audit, ...), written as given; `path` with a name that is a token replaced, as the
        proxy's recorder replaces it (`Redactor.path`)."""
        self._open[id] = self.begin(id, when, method, path, headers, body, fields)

    def begin(
        self,
        id: str,
        when: float,
        method: str,
        path: str,
        headers: Headers,
        body: bytes | None,
        fields: dict[str, Any],
    ) -> _Open:
        """`request` (its `fields` as a dict), for an exchange whose response and end come at
        once (`complete`): it is not held open here; what redacts its bodies is returned,
        for `complete`. Only where `at_once`."""
        info = parse_request(method, path)
        record = self._request_record(info, id, when, method, path, headers, fields)
        state = _Open(info)
        if body is not None:
            record["body"] = self._body(state, _content_type(headers), body)
        self.exchanges += 1
        self._output.write(record)
        return state

    def _request_record(
        self,
        info: RequestInfo,
        id: str,
        when: float,
        method: str,
        path: str,
        headers: Headers,
        fields: dict[str, Any],
    ) -> dict[str, Any]:
        """The request record of `begin` and `whole`, its body apart (`when` checked)."""
        redactor = self._redactor
        return {
            "record": "request",
            "id": id,
            "time": when if type(when) is float and EARLIEST < when < LATEST else _checked(when),
            **fields,
            "method": method,
            "path": redactor.path(info, path),
            "headers": redactor.header_lists(headers),
        }

    def complete(
        self,
        state: _Open,
        id: str,
        when: float,
        status: int | None,
        headers: Headers,
        body: bytes | None,
        audit: dict[str, Any],
    ) -> None:
        """The response (none when `status` is None) and the end of an exchange `begin`
        wrote the request of, as `response` and `end` write them (the end's `audit`)."""
        if not (type(when) is float and EARLIEST < when < LATEST):
            _checked(when)
        write = self._output.write
        if status is not None:
            write(
                {
                    "record": "response",
                    "id": id,
                    "time": when,
                    "status": status,
                    "headers": self._redactor.header_lists(headers),
                }
            )
            state.response_type = _content_type(headers)
        end: dict[str, Any] = {"record": "end", "id": id, "time": when, "audit": audit}
        if body is not None:
            end["body"] = self._body(state, state.response_type, body)
        write(end)

    def whole(
        self,
        id: str,
        when: float,
        method: str,
        path: str,
        headers: Headers,
        body: bytes | None,
        fields: dict[str, Any],
        at: float,
        status: int | None,
        answer: tuple[str, bytes] | None,
        audit: dict[str, Any],
        said: Any,
        said_of: RequestInfo | None = None,
    ) -> None:
        """`begin` and `complete` at once, for an exchange with no note between its
        records: the response (none when `status` is None), its body `answer` (its
        Content-Type and bytes) with the end, whose `audit` takes a `responseStatus`:
        `said`, a Status the source gives beside the body, masked as `status_of` masks it
        (of the request's values; by `said_of`'s RequestInfo, when given, else the
        request's), or `said or {}` when it is no dict. Only where `at_once`."""
        info = parse_request(method, path)
        redactor = self._redactor
        record = self._request_record(info, id, when, method, path, headers, fields)
        if not (type(at) is float and EARLIEST < at < LATEST):
            _checked(at)  # raised before anything is written, as `when` is
        seen: set[bytes] = set()  # the exchange's secret values (capture/redact.py)
        if body is not None:
            record["body"] = self._body_of(info, seen, _content_type(headers), body)
        self.exchanges += 1
        if isinstance(said, dict):
            said = redactor.status(info if said_of is None else said_of, said, seen)
        audit["responseStatus"] = said or {}
        if status is None:
            end = {"record": "end", "id": id, "time": at, "audit": audit}
            if answer is not None:  # a body without a response head: of no type
                end["body"] = self._body_of(info, seen, "", answer[1])
            self._output.write_all((record, end))
            return
        response = {
            "record": "response",
            "id": id,
            "time": at,
            "status": status,
            "headers": []
            if answer is None
            else redactor.header_lists([("Content-Type", answer[0])]),
        }
        end = {"record": "end", "id": id, "time": at, "audit": audit}
        if answer is not None:
            end["body"] = self._body_of(info, seen, answer[0], answer[1])
        self._output.write_all((record, response, end))

    def at_once(self) -> bool:
        """Whether `begin` and `complete` write an exchange as `request`, `response`, `end`
        and `status` would: not for a sink that changes those (the join's)."""
        kind = type(self)
        return (
            kind.request is Sink.request
            and kind.response is Sink.response
            and kind.end is Sink.end
            and kind.status is Sink.status
        )

    def response(self, id: str, when: float, status: int, headers: Headers, **fields: Any) -> None:
        """The response's head; its body comes with `end`."""
        record = records.response(
            id=id, time=_checked(when), status=status, **fields, headers=self._headers(headers)
        )
        self._state(id).response_type = _content_type(headers)
        self._output.write(record)

    def event(self, id: str, when: float, data: bytes, **fields: Any) -> None:
        """A watch event of the exchange (one frame of its stream)."""
        _checked(when)
        state = self._state(id)
        kept = data[: self.max_body]
        kept, redacted = self._redactor.watch_frame(
            state.info, kept, state.response_type, state.seen
        )
        truncated = len(data) > self.max_body
        body = body_record(kept, size=len(data), truncated=truncated, redacted=redacted)
        record = records.event(id=id, seq=state.seq, time=when, kind="watch", **fields, data=body)
        state.seq += 1
        self._output.write(record)

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
        """The exchange's end: the response body, or how many events a watch had."""
        record = records.end(id=id, time=_checked(when), **fields)
        state = self._state(id)
        del self._open[id]
        if body is not None:
            record["body"] = self._body(state, state.response_type, body)
        if events is not None:
            record["events"] = events
        if error:
            record["error"] = error
        self._output.write(record)

    def forget(self, id: str) -> None:
        """Let the exchange `id` go unended: what the source had of it is written, the rest
        it will never have (the importer says so in a note)."""
        self._open.pop(id, None)

    @property
    def key(self) -> bytes:
        """The placeholders' key (never written: what the parts of one import share)."""
        return self._redactor._key

    def lines(self, data: bytes) -> None:
        """Records made by another sink of the same key (a partition's,
        `importers.partition`), as its lines: written as they are."""
        self._output.write_lines(data)

    def copied(self, fd: int, offset: int, count: int) -> None:
        """`lines` that another sink wrote to a file: `count` bytes of `fd` from `offset`."""
        self._output.copy_lines(fd, offset, count)

    # -- how values are written -----------------------------------------------------------
    def read_by_jsonfast(self) -> None:
        """The importer reads every value it passes (and its bodies) with `jsonfast.loads`
        (its other numbers checked finite, integers or times): write them with a
        `jsonfast.Writer` of values `loads` read, the same bytes at orjson's speed."""
        writer = jsonfast.Writer(read=True)
        self._output.dumps, self._output.line = writer, writer.line

    def dumps(self, value: Any) -> bytes:
        """`value` as the recording's JSON writes it (compact, not ASCII-escaped), UTF-8."""
        return self._output.dumps(value)

    # -- redaction of what an importer passes as given ------------------------------------
    def placeholder(self, value: str) -> str:
        """The placeholder the recording's bodies and headers give `value` (remembered for
        the last PLACEHOLDERS values: a log repeats its users' credential ids and tokens)."""
        said = self._placeholders.get(value)
        if said is None:
            if len(self._placeholders) >= PLACEHOLDERS:
                self._placeholders.clear()
            said = self._placeholders[value] = self._redactor.text(value)
        return said

    def token_names(self, info: RequestInfo, *names: str) -> dict[str, str]:
        """The names of `info`'s request and `names` that are tokens, with their
        placeholders (`Redactor.token_names`)."""
        return self._redactor.token_names(info, *names)

    def redacted(self, info: RequestInfo, content_type: str, data: bytes) -> bytes:
        """`data` redacted as a body of `info`'s request would be (whole, not truncated)."""
        return self._redactor.body(info, content_type, data)[0]

    def values(self, method: str, path: str, headers: Headers, body: bytes | None) -> set[bytes]:
        """The values redaction finds in a request's body (none written anywhere): what a
        Status answered to it is masked of (`masked`)."""
        seen: set[bytes] = set()
        if body:
            self._redactor.body(parse_request(method, path), _content_type(headers), body, seen)
        return seen

    def masked(
        self, info: RequestInfo, status: dict[str, Any], values: set[bytes]
    ) -> dict[str, Any]:
        """A Status of a request of `info` masked as `status` masks it, of `values`."""
        return self._redactor.status(info, status, values)

    def status(self, id: str, info: RequestInfo, status: dict[str, Any]) -> dict[str, Any]:
        """A Status of exchange `id` (a request of `info`) as the source gives it beside
        the body (an audit event's `responseStatus`), its texts masked as its response
        body's would be: of the values of its request too, while it is open here."""
        state = self._open.get(id)
        return self._redactor.status(info, status, state.seen if state else None)

    def status_of(self, state: _Open, info: RequestInfo, status: dict[str, Any]) -> dict[str, Any]:
        """`status`, for an exchange `begin` wrote the request of (its `state`)."""
        return self._redactor.status(info, status, state.seen)

    # -- the rest -------------------------------------------------------------------------
    def note(self, message: str, *, level: str = "warning", id: str | None = None) -> None:
        self._output.write(records.note(time=time.time(), level=level, message=message, id=id))

    def skip(self, where: str, reason: str) -> None:
        """A part of the source that could not be read, at `where` (FILE:LINE)."""
        self.skipped += 1
        line = f"{where}: skipped: {reason}"
        if self.on_skip is not None:
            self.on_skip(line)
        if self.skipped <= SKIP_NOTES:
            self.note(line)

    def cut_by(self, signal: str) -> None:
        """Have `close` end the recording with a note that `signal` cut it."""
        self._cut = signal

    def stopped_by(self, signal: str) -> None:
        """Have `close` end the (live) recording with a note that `signal` stopped it."""
        self._stopped = signal

    def close(self) -> None:
        """Note how many parts were skipped (when any), write what waits, close (and, when
        a signal cut or stopped it, end it with a note of that); rename it to `path`."""
        if self._closed:
            return
        self._closed = True
        self._open.clear()
        try:
            if self.skipped:
                skipped = counted(self.skipped, "unreadable part")
                self.note(f"import skipped {skipped} of its source")
            if self._stopped is not None and self._cut is None:
                self._output.write(stop_note(self._stopped, time.time()))
            self._output.close()
            if self._cut is not None:
                append_record(self._file, cut_note(self._cut, self._held(), time.time()))
        except BaseException:
            self._discard()
            raise
        if self.STAGED:
            try:
                publish(self._file, self.path, overwrite=self._overwrite)
            except BaseException:
                self.outcome = "removed"
                raise
        self.outcome = "whole" if self._cut is None else "cut"

    def _held(self) -> str:
        """What a cut recording holds, said in its last note."""
        exchanges = counted(self.exchanges, "exchange")
        return f"it holds the {exchanges} written before; the rest of its source is not here"

    def _abandon(self) -> None:
        """An error stopped the sink: close it and remove what it wrote (when staged)."""
        if self._closed:
            return
        self._closed = True
        self._open.clear()
        try:
            self._output.close()
        except OSError:
            pass  # the disk that failed: nothing of it is kept
        finally:
            self._discard()

    def _discard(self) -> None:
        if self.STAGED:
            discard(self._file)
            self.outcome = "removed"

    def _state(self, id: str) -> _Open:
        """The open exchange `id`; one without a request record (or already ended) is an
        importer's bug, raised: its bodies could not be redacted by their request."""
        state = self._open.get(id)
        if state is None:
            raise KeyError(f"import: exchange {id!r} has no open request record")
        return state

    def _headers(self, headers: Headers) -> list[list[str]]:
        return self._redactor.header_lists(headers)

    def _body(self, state: _Open, content_type: str, data: bytes) -> records.Body:
        return self._body_of(state.info, state.seen, content_type, data)

    def _body_of(
        self, info: RequestInfo, seen: set[bytes], content_type: str, data: bytes
    ) -> records.Body:
        """A BODY of `data`, a body of `info`'s exchange, whose values so far are `seen`."""
        size = len(data)
        if size > self.max_body:
            kept, redacted = self._redactor.body(info, content_type, data[: self.max_body], seen)
            return body_record(kept, size=size, truncated=True, redacted=redacted)
        kept, redacted = self._redactor.body(info, content_type, data, seen)
        if not redacted and kept[:1] in _TEXT_OPENING:  # JSON's: no protobuf (body_record)
            try:
                return {"text": kept.decode("utf-8"), "size": size}
            except UnicodeDecodeError:
                pass
        return body_record(kept, size=size, truncated=False, redacted=redacted)
