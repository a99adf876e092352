"""Where an import goes: a new recording, redacted exactly as the proxy redacts, and the
count of what the import skipped.

An importer reads its source and calls, for each exchange, `request`, then `response`,
`event` (a watch event) and `end` as it has them, all tied by the exchange's `id`; records
of several exchanges may interleave, as the proxy's do. Bodies are given as the bytes the
source holds; the sink redacts them (`capture.redact.Redactor`, by the request's resource
and the body's Content-Type, as the recorder does), truncates them at `max_body`, and
writes them as the recorder writes BODYs. Fields beyond the format's (`audit`, say) are
passed through as given.

Every record's time is seconds since the epoch that a date can be made of in any timezone
(`time_error`: finite, after 1970-01-02 and before 9999-12-31 UTC), as `explain` and
`export` make dates of them: an importer checks its times with `time_error` and skips what
has another (a NaN, an infinity, the year 1 or 10,000); a record given one anyway is an
importer's bug, raised (ValueError), never written.

`skip(where, reason)` counts a part of the source the importer could not read: it is told
to `on_skip` (the command prints it) and the first SKIP_NOTES of them are also notes in the
recording; `close()` ends with a note of the total. An output file is never replaced
unless `overwrite` (it is opened with O_EXCL, `capture.outputs.FileOutput`).

    with Sink(path, source="audit log") as sink:
        sink.request("a1", 1.5, "GET", "/api/v1/pods", [("User-Agent", "kubectl")])
        sink.response("a1", 1.6, 200, [("Content-Type", "application/json")])
        sink.end("a1", 1.6, body=b'{"kind":"PodList"}')
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from k8s_wiretap.capture.format import body_record
from k8s_wiretap.capture.outputs import FileOutput
from k8s_wiretap.capture.recorder import DEFAULT_MAX_BODY
from k8s_wiretap.capture.redact import Redactor
from k8s_wiretap.kube.requestinfo import RequestInfo, parse_request

__all__ = ["EARLIEST", "LATEST", "SKIP_NOTES", "Sink", "time_error"]

SKIP_NOTES = 1000  # skipped parts noted one by one in the recording, at most
# The times a record may hold (seconds since the epoch): a day inside what `datetime` can
# make a date of (the years 1 to 9999), so that it is a date in any timezone.
EARLIEST = 86_400.0  # 1970-01-02T00:00:00Z
LATEST = 253_402_214_400.0  # 9999-12-31T00:00:00Z
Headers = Sequence[tuple[str, str]]


def time_error(when: Any) -> str | None:
    """Why `when` cannot be a record's time (a number, finite, between EARLIEST and
    LATEST); None when it can."""
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
    return next((v for k, v in headers if k.lower() == "content-type"), "")


@dataclass
class _Open:
    """What the sink keeps of an exchange until its end: how to redact its bodies."""

    info: RequestInfo
    response_type: str = ""
    seq: int = 0


class Sink:
    """Writes an import's exchanges to a new recording at `path` (0600), redacted.

    `source` names what was imported (the header's `imported` field); `on_skip` is told
    each skipped part, one line ("FILE:LINE: skipped: REASON")."""

    def __init__(
        self,
        path: Path,
        *,
        source: str,
        overwrite: bool = False,
        max_body: int = DEFAULT_MAX_BODY,
        on_skip: Callable[[str], None] | None = None,
    ) -> None:
        self.max_body = max_body
        self.on_skip = on_skip
        self.exchanges = 0  # requests written
        self.skipped = 0
        self._redactor = Redactor()
        self._open: dict[str, _Open] = {}
        self._closed = False
        self._output = FileOutput(
            path, redacted=True, max_body=max_body, overwrite=overwrite, header={"imported": source}
        )

    def __enter__(self) -> Sink:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
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
        audit, ...), written as given."""
        record: dict[str, Any] = {"record": "request", "id": id, "time": _checked(when), **fields}
        state = self._open[id] = _Open(parse_request(method, path))
        record.update(method=method, path=path, headers=self._headers(headers))
        if body is not None:
            record["body"] = self._body(state.info, _content_type(headers), body)
        self.exchanges += 1
        self._output.write(record)

    def response(self, id: str, when: float, status: int, headers: Headers, **fields: Any) -> None:
        """The response's head; its body comes with `end`."""
        record = {
            "record": "response",
            "id": id,
            "time": _checked(when),
            "status": status,
            **fields,
        }
        record["headers"] = self._headers(headers)
        self._state(id).response_type = _content_type(headers)
        self._output.write(record)

    def event(self, id: str, when: float, data: bytes, **fields: Any) -> None:
        """A watch event of the exchange (one frame of its stream)."""
        _checked(when)
        state = self._state(id)
        kept = data[: self.max_body]
        kept, redacted = self._redactor.watch_frame(state.info, kept, state.response_type)
        truncated = len(data) > self.max_body
        record = {"record": "event", "id": id, "seq": state.seq, "time": when, "kind": "watch"}
        record.update(fields)
        record["data"] = body_record(kept, size=len(data), truncated=truncated, redacted=redacted)
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
        record: dict[str, Any] = {"record": "end", "id": id, "time": _checked(when), **fields}
        state = self._state(id)
        del self._open[id]
        if body is not None:
            record["body"] = self._body(state.info, state.response_type, body)
        if events is not None:
            record["events"] = events
        if error:
            record["error"] = error
        self._output.write(record)

    # -- redaction of what an importer passes as given ------------------------------------
    def placeholder(self, value: str) -> str:
        """The placeholder the recording's bodies and headers give `value`."""
        return self._redactor.text(value)

    def redacted(self, info: RequestInfo, content_type: str, data: bytes) -> bytes:
        """`data` redacted as a body of `info`'s request would be (whole, not truncated)."""
        return self._redactor.body(info, content_type, data)[0]

    # -- the rest -------------------------------------------------------------------------
    def note(self, message: str, *, level: str = "warning", id: str | None = None) -> None:
        record: dict[str, Any] = {
            "record": "note",
            "time": time.time(),
            "level": level,
            "message": message,
        }
        if id is not None:
            record["id"] = id
        self._output.write(record)

    def skip(self, where: str, reason: str) -> None:
        """A part of the source that could not be read, at `where` (FILE:LINE)."""
        self.skipped += 1
        line = f"{where}: skipped: {reason}"
        if self.on_skip is not None:
            self.on_skip(line)
        if self.skipped <= SKIP_NOTES:
            self.note(line)

    def close(self) -> None:
        """Note how many parts were skipped (when any), write what waits, close."""
        if self._closed:
            return
        self._closed = True
        if self.skipped:
            self.note(f"import skipped {self.skipped:,} unreadable part(s) of its source")
        self._output.close()
        self._open.clear()

    def _state(self, id: str) -> _Open:
        """The open exchange `id`; one without a request record (or already ended) is an
        importer's bug, raised: its bodies could not be redacted by their request."""
        state = self._open.get(id)
        if state is None:
            raise KeyError(f"import: exchange {id!r} has no open request record")
        return state

    def _headers(self, headers: Headers) -> list[list[str]]:
        return [list(h) for h in self._redactor.headers(list(headers))]

    def _body(self, info: RequestInfo, content_type: str, data: bytes) -> dict[str, Any]:
        kept = data[: self.max_body]
        kept, redacted = self._redactor.body(info, content_type, kept)
        return body_record(
            kept, size=len(data), truncated=len(data) > self.max_body, redacted=redacted
        )
