"""The recorder: turns proxy events into recording records, off the proxy's event loop.

One thread consumes the proxy's events, keeps a little state per exchange (its resolved
request, the watch framer, the body so far), redacts, and hands finished records to its
outputs (the recording file, the console printer). It works in bursts (see `_run`) and
flushes after each, so a record reaches the file within about BATCH_DELAY (20 ms) plus the
burst's work, well inside the 100 ms a `kill -9` may lose.

Recording never stops or slows traffic, and never grows memory without bound:
- an output that fails (the disk is full, the file went away: any exception from its
  `write` or `flush`) is taken out at once, a note saying so goes to the others (the
  console goes on), and `on_failure` is told (the proxy prints it, and may exit). Given
  `retry` seconds, an output that can `resume` (the recording file) is suspended rather
  than closed: the records meant for it are counted and let go (none is kept), and every
  `retry` seconds it is tried again with a note of the gap ("recording gap: N records not
  written between T1 and T2 (REASON)"); once that is written the output is back, and
  `on_resumed` is told. Exchanges open across the gap go on being recorded; those whose
  request fell in it are read back from their later records (the assembler makes an
  exchange of them, with a warning). Without `retry` (and for any other output) it is
  closed for good. Retrying is the proxy's default because a full disk is most often
  freed by someone who expects the recording to go on; a supervisor that would rather
  restart the proxy asks it to exit instead;
- the queue holds at most QUEUE_BUDGET bytes of payload (bodies, chunks, frames, etcd
  values; each event also counts EVENT_COST for itself). Past it `put` drops the event and
  counts it; after the burst that catches up, a note says how many were dropped. An
  exchange whose request was dropped is dropped whole; one that lost a later part records
  no body or events from then on, and a note of its own says so before its end. An `End`
  may use END_ROOM beyond the budget, so exchanges still end;
- a recording a signal stops (`stopped_by`, before `close`) ends, after the end of each
  exchange still open, with a note that says so (`format.stop_note`);
- a recorder thread that dies (a bug) is reported the same way; from then on `put` keeps
  nothing;
- a watch stream holds at most one incomplete frame, of at most FRAME_LIMIT bytes (or
  `max_body`, if larger): a frame that grows past it without ending (a stream that is not
  what its Content-Type says, a length prefix of gigabytes) stops the recording of that
  stream, with a note saying why; the client still gets every byte (the proxy streams,
  it holds none of it), so the stream is not closed.
`put`, on the proxy's event loop, only adds to a counter and to the queue: it never blocks
and never does I/O.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from k8s_wiretap.capture import records
from k8s_wiretap.capture.events import (
    Chunk,
    End,
    Message,
    Note,
    ProxyEvent,
    RequestBody,
    RequestSeen,
    ResponseSeen,
    Stored,
)
from k8s_wiretap.capture.format import body_record, stop_note
from k8s_wiretap.capture.identity import client_identity
from k8s_wiretap.capture.outputs import reason
from k8s_wiretap.capture.redact import Redactor
from k8s_wiretap.kube.media import PROTOBUF
from k8s_wiretap.kube.requestinfo import RequestInfo, parse_request
from k8s_wiretap.wire.framing import Framer, framer_for
from k8s_wiretap.wire.inflate import Inflater
from k8s_wiretap.wire.words import counted

__all__ = [
    "DEFAULT_MAX_BODY",
    "QUEUE_BUDGET",
    "RETRY",
    "FailureHandler",
    "Output",
    "Recorder",
    "ResumeHandler",
]

DEFAULT_MAX_BODY = 16 * 1024 * 1024
FRAME_LIMIT = 16 * 1024 * 1024  # etcd keeps objects of 1.5 MiB by default: no event is this big
BATCH_DELAY = 0.02
QUEUE_BUDGET = 64 * 1024 * 1024  # bytes of payload waiting for the recorder, at most
EVENT_COST = 512  # what an event counts for beyond its payload (the object, its headers)
END_ROOM = 4 * 1024 * 1024  # beyond the budget, for `End`s only (~8,000 of them)
MAX_TRACKED = 100_000  # exchanges remembered as lost or incomplete, at most
RETRY = 10.0  # seconds between attempts to write again to a suspended output
_STOP = object()
_MIB = 1024 * 1024

log = logging.getLogger(__name__)


class Output(Protocol):
    """Where records go. `write` and `flush` may raise: the output is then taken out. An
    output may have `describe(error) -> str`, the one line that says it stopped and why."""

    def write(self, record: dict[str, Any]) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


FailureHandler = Callable[[str, "Output | None"], None]
"""Told, in the recorder's thread, that an output stopped (the output) or that the recorder
itself did (None); the message is one line ("recording stopped: PATH: No space left...")."""

ResumeHandler = Callable[[str, Output], None]
"""Told, in the recorder's thread, that a suspended output is written again; the message is
one line ("recording resumed: PATH (N records lost)")."""


@dataclass
class _Suspended:
    """An output that failed and is tried again every `retry` seconds. It may have
    `resume(note)` (end a line cut short, write `note`, flush; or raise), `lost` (records
    its failure cut) and `resumed(lost) -> str` (the line that says it is back)."""

    output: Output
    since: float  # when it failed
    reason: str
    records: int  # records not written to it since (and cut by the failure)
    next_try: float  # time.monotonic() of the next attempt


def _cost(event: object) -> int:
    """What an event counts for in the queue's budget."""
    if isinstance(event, Chunk | Message | RequestBody):
        return EVENT_COST + len(event.data)
    if isinstance(event, RequestSeen | End):
        return EVENT_COST + len(event.body or b"")
    if isinstance(event, Stored):
        return EVENT_COST + len(event.value)
    return EVENT_COST


def _stopped(output: object, error: BaseException) -> str:
    """The line that says `output` stopped because of `error`."""
    describe = getattr(output, "describe", None)
    if callable(describe):
        return str(describe(error))
    return f"{type(output).__name__} stopped: {reason(error)}"


def _log_failure(message: str, output: Output | None) -> None:
    log.error(message)


def _log_resumed(message: str, output: Output) -> None:
    log.warning(message)


def _utc(when: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))


@dataclass
class _InFlight:
    """What the recorder keeps of an exchange while it is open (not `capture.Exchange`)."""

    info: RequestInfo
    watch: bool = False
    framer: Framer | None = None
    decoder: Inflater | None = None  # for a content-encoded watch
    encoding: str = ""
    content_type: str = ""
    chunks: list[bytes] = field(default_factory=list)
    kept: int = 0
    size: int = 0
    seq: int = 0
    gap: bool = False  # some of its events were dropped (the queue was full)
    unframed: bool = False  # a watch frame outgrew FRAME_LIMIT: the rest is not recorded
    request: records.Request | None = None  # a request record waiting for its streamed body
    request_chunks: list[bytes] = field(default_factory=list)
    request_size: int = 0
    request_kept: int = 0  # bytes in request_chunks
    request_type: str = ""  # its Content-Type
    seen: set[bytes] = field(default_factory=set)  # its secret values, masked in its Status


def _headers(raw: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in raw]


def _header(headers: list[tuple[str, str]], name: str) -> str:
    return next((v for k, v in headers if k.lower() == name), "")


def _secret_info(key: str) -> RequestInfo:
    """How the redactor should see an etcd value: a Secret's key as a GET of that Secret,
    anything else as a GET of a harmless resource (redaction still finds Secrets by kind)."""
    parts = key.split("/")  # ["", "registry", "secrets", NAMESPACE, NAME]
    if len(parts) == 5 and parts[2] == "secrets":
        return parse_request("GET", f"/api/v1/namespaces/{parts[3]}/secrets/{parts[4]}")
    return parse_request("GET", "/api/v1/namespaces/etcd/configmaps/value")


def _decoder(encoding: str) -> Any:
    if encoding == "gzip":
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    return None


class Recorder:
    """Consumes `ProxyEvent`s from any thread (`put`), writes records to `outputs`.

    `on_failure` is told when an output or the recorder stops (default: logged as an
    error); `budget` bounds the bytes queued (QUEUE_BUDGET); `retry`: seconds between
    attempts to write again to an output that failed and can `resume` (None: it is closed
    for good); `on_resumed` is told when one is back (default: logged as a warning)."""

    def __init__(
        self,
        outputs: Sequence[Output],
        *,
        redactor: Redactor | None = None,
        max_body: int = DEFAULT_MAX_BODY,
        on_failure: FailureHandler | None = None,
        budget: int = QUEUE_BUDGET,
        retry: float | None = None,
        on_resumed: ResumeHandler | None = None,
    ) -> None:
        self.outputs = list(outputs)
        self.redactor = redactor
        self.max_body = max_body
        self.on_failure = on_failure or _log_failure
        self.budget = budget
        self.retry = retry
        self.on_resumed = on_resumed or _log_resumed
        self._suspended: list[_Suspended] = []  # only the recorder's thread touches it
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._exchanges: dict[str, _InFlight] = {}
        self._thread = threading.Thread(target=self._run, name="wiretap-recorder", daemon=True)
        self._lock = threading.Lock()  # guards what follows, shared by `put` and the thread
        self._queued = 0  # the cost of what is in the queue
        self._dropped = 0  # events dropped since the last gap note
        self._dropped_bytes = 0
        self._lost_count = 0  # exchanges dropped whole since the last gap note
        self._lost: set[str] = set()  # open exchanges whose request was dropped
        self._gapped: set[str] = set()  # open exchanges that lost an event
        self._dead = False  # the recorder thread died: keep nothing
        self._stopped_by: str | None = None  # the signal that stopped the recording

    # -- any thread -----------------------------------------------------------------------
    def put(self, event: ProxyEvent) -> None:
        """Queue `event`, or drop and count it when the queue is over its budget. An
        exchange whose request was dropped is dropped whole (nothing of it is recorded)."""
        cost = _cost(event)
        limit = self.budget + (END_ROOM if isinstance(event, End) else 0)
        exchange = getattr(event, "id", None)
        with self._lock:
            if exchange is not None and exchange in self._lost:
                self._dropped += 1
                if isinstance(event, End):
                    self._lost.discard(exchange)
                return
            if self._dead or self._queued + cost > limit:
                self._drop(event, cost, exchange)
                return
            self._queued += cost
        self._queue.put((event, cost))

    def _drop(self, event: ProxyEvent, cost: int, exchange: str | None) -> None:
        """(Holding the lock.) Count a dropped event, remember what it leaves incomplete."""
        self._dropped += 1
        self._dropped_bytes += cost
        if exchange is None or self._dead or isinstance(event, End):
            return
        if isinstance(event, RequestSeen):
            self._lost_count += 1
            if len(self._lost) < MAX_TRACKED:
                self._lost.add(exchange)
        elif len(self._gapped) < MAX_TRACKED:
            self._gapped.add(exchange)

    @property
    def dropped(self) -> int:
        """Events dropped and not yet noted in the recording."""
        return self._dropped

    @property
    def queued_bytes(self) -> int:
        return self._queued

    @property
    def started(self) -> bool:
        return self._thread.ident is not None

    def start(self) -> Recorder:
        self._thread.start()
        return self

    def stopped_by(self, signal: str) -> None:
        """`signal` ("SIGTERM") stops the recording: its last record says so (the first
        signal told, when more come)."""
        self._stopped_by = self._stopped_by or signal

    def close(self) -> None:
        """Write what is queued, end exchanges still open, close the outputs."""
        if self._thread.is_alive():
            self._queue.put(_STOP)
            self._thread.join()
        for suspended in self._suspended:  # still failing at the stop: nothing to say
            with contextlib.suppress(Exception):
                suspended.output.close()
        self._suspended.clear()
        for output in list(self.outputs):
            try:
                output.close()
            except Exception as error:  # the last buffered bytes did not fit either
                self.outputs.remove(output)
                self.on_failure(_stopped(output, error), output)

    # -- recorder thread ------------------------------------------------------------------
    def _run(self) -> None:
        """The recorder's loop; if it dies, say so and keep nothing from then on."""
        try:
            self._loop()
        except BaseException as error:  # a bug: traffic goes on, unrecorded
            self._die(error)

    def _loop(self) -> None:
        """Work in batches: wake on the first event, let the burst it starts gather for
        BATCH_DELAY, then record all of it and flush once. One wake-up and one write per
        burst instead of per event keeps this thread from taking the GIL from the proxy's
        event loop at every event; records still reach the file within ~BATCH_DELAY."""
        while self._burst():
            pass

    def _burst(self) -> bool:
        """Record one burst (its events are let go on return); False at the stop. With an
        output suspended, wake at least when it is due to be tried again."""
        try:
            batch = [self._queue.get(timeout=self._until_retry())]
        except queue.Empty:
            self._retry()
            return True
        time.sleep(BATCH_DELAY)
        with contextlib.suppress(queue.Empty):
            while True:
                batch.append(self._queue.get_nowait())
        self._retry(final=any(item is _STOP for item in batch))
        done = 0
        for item in batch:
            if item is _STOP:
                self._note_gap()
                self._end_open_exchanges()
                if self._stopped_by is not None:
                    self._emit(stop_note(self._stopped_by, time.time()))
                self._flush()
                return False
            event, cost = cast(tuple[ProxyEvent, int], item)
            if self.outputs or self._suspended:  # none left: nothing to make records for
                self.handle(event)
            done += cost
        with self._lock:
            self._queued -= done
        self._note_gap()
        self._flush()
        return True

    def _die(self, error: BaseException) -> None:
        """The recorder thread failed: drop what is queued, keep nothing more, tell."""
        with self._lock:
            self._dead = True
            self._gapped.clear()
            self._lost.clear()
        with contextlib.suppress(queue.Empty):
            while True:
                self._queue.get_nowait()
        with self._lock:
            self._queued = 0
        message = f"recording stopped: the recorder failed: {error!r}"
        with contextlib.suppress(Exception):
            self._emit(_note("error", message))
            self._flush()
        self.on_failure(message, None)

    def _note_gap(self) -> None:
        """Say in the recording what `put` dropped since the last time (after a burst: the
        recorder has caught up with what was queued)."""
        with self._lock:
            dropped, size, lost = self._dropped, self._dropped_bytes, self._lost_count
            if not dropped or self._dead:
                return
            self._dropped = self._dropped_bytes = self._lost_count = 0
        self._emit(
            _note(
                "warning",
                f"recording gap: {counted(dropped, 'event')} ({size / _MIB:.1f} MiB) dropped: the "
                f"recorder fell behind by more than {self.budget / _MIB:.0f} MiB; "
                f"{counted(lost, 'exchange')} not recorded, others incomplete (each says so)",
            )
        )

    def _gap(self, event: ProxyEvent) -> None:
        """`put` dropped an event of this exchange before `event`: from now on it records
        no body and no events (what remains would be wrong), and its end says so."""
        exchange = getattr(event, "id", "")
        state = self._exchanges.get(exchange)
        if state is not None and not state.gap:
            state.gap = True
            state.chunks, state.kept, state.framer, state.decoder = [], 0, None, None
            state.request_chunks, state.request_kept = [], 0
        if isinstance(event, End):
            self._gapped.discard(exchange)

    def _flush(self) -> None:
        for output in list(self.outputs):
            try:
                output.flush()
            except Exception as error:
                self._fail(output, error)

    def _emit(self, record: records.Record) -> None:
        for suspended in self._suspended:
            suspended.records += 1
        line: dict[str, Any] = record  # type: ignore[assignment]  # a dict (a cast is a call)
        for output in list(self.outputs):
            try:
                output.write(line)
            except Exception as error:
                self._fail(output, error)

    def _fail(self, output: Output, error: BaseException) -> None:
        """`output` failed: take it out, tell the others and `on_failure`; suspend it when
        it can be tried again (`retry`, `resume`), else close it."""
        if output not in self.outputs:
            return
        self.outputs.remove(output)
        message = _stopped(output, error)
        self._emit(_note("error", message))
        if self.retry is not None and callable(getattr(output, "resume", None)):
            lost = int(getattr(output, "lost", 0))
            again = time.monotonic() + self.retry
            self._suspended.append(_Suspended(output, time.time(), reason(error), lost, again))
        else:
            with contextlib.suppress(Exception):
                output.close()
            if not self.outputs and not self._suspended:
                self._exchanges.clear()
        self.on_failure(message, output)

    def _until_retry(self) -> float | None:
        """Seconds until a suspended output is due to be tried again (None: none is)."""
        if not self._suspended:
            return None
        return max(0.0, min(s.next_try for s in self._suspended) - time.monotonic())

    def _retry(self, *, final: bool = False) -> None:
        """Try again each suspended output that is due (each of them, at the stop)."""
        now = time.monotonic()
        for suspended in list(self._suspended):
            if final or suspended.next_try <= now:
                self._resume(suspended)

    def _resume(self, suspended: _Suspended) -> None:
        """Write the gap's note to `suspended`: if that works, it is back (and said)."""
        output, lost = suspended.output, suspended.records
        records = f"{lost:,} record{'' if lost == 1 else 's'}"
        gap = (
            f"recording gap: {records} not written between {_utc(suspended.since)} and "
            f"{_utc(time.time())} ({suspended.reason})"
        )
        try:
            cast(Any, output).resume(_note("warning", gap))
        except Exception:  # still no room: try again later
            suspended.next_try = time.monotonic() + (self.retry or RETRY)
            return
        self._suspended.remove(suspended)
        describe = getattr(output, "resumed", None)
        message = str(describe(lost)) if callable(describe) else f"{type(output).__name__} resumed"
        self._emit(_note("warning", message))  # to the others
        self.outputs.insert(0, output)
        self.on_resumed(message, output)

    def handle(self, event: ProxyEvent) -> None:
        """Turn one event into records (public for tests that feed events synchronously)."""
        try:
            self._dispatch(event)
        except Exception as error:  # a recorder bug must never lose the rest of the traffic
            message = f"recorder failed on {type(event).__name__}: {error!r}"
            self._emit(_note("error", message, getattr(event, "id", None)))

    def _dispatch(self, event: ProxyEvent) -> None:
        if getattr(event, "id", None) in self._gapped:  # a set: safe to read from here
            self._gap(event)
        if isinstance(event, RequestSeen):
            self._request(event)
        elif isinstance(event, RequestBody):
            self._request_body(event)
        elif isinstance(event, ResponseSeen):
            self._response(event)
        elif isinstance(event, Chunk):
            self._chunk(event)
        elif isinstance(event, Message):
            self._message(event)
        elif isinstance(event, End):
            self._end(event)
        elif isinstance(event, Stored):
            self._stored(event)
        elif isinstance(event, Note):
            note = records.note(
                time=event.time, level=event.level, message=event.message, id=event.id or None
            )
            self._emit(note)

    def _stored(self, event: Stored) -> None:
        """An etcd change, its value redacted as the API server's own bodies are: a
        Secret's values are secret in etcd too."""
        record = records.etcd(
            time=event.time, key=event.key, revision=event.revision, deleted=event.deleted
        )
        if not event.deleted:
            info = _secret_info(event.key)
            content_type = "application/json" if event.value[:1] == b"{" else PROTOBUF
            record["value"] = self._body(info, content_type, event.value, len(event.value))
        self._emit(record)

    def _body(
        self,
        info: RequestInfo,
        content_type: str,
        data: bytes,
        size: int,
        decoded: str | None = None,
        seen: set[bytes] | None = None,
    ) -> records.Body:
        """A BODY of `data` (the first bytes of `size`), redacted when needed (`seen`: its
        exchange's values, see capture/redact.py)."""
        truncated = size > len(data)
        redacted = False
        if self.redactor is not None:
            data, redacted = self.redactor.body(info, content_type, data, seen)
        return body_record(data, size=size, truncated=truncated, redacted=redacted, decoded=decoded)

    def _request(self, event: RequestSeen) -> None:
        headers = _headers(event.headers)
        info = parse_request(event.method, event.target)
        state = self._exchanges[event.id] = _InFlight(info)
        record = records.request(
            id=event.id,
            time=event.time,
            listener=event.listener,
            client=event.client,
            server=event.server,
            identity=client_identity(_header(headers, "authorization") or None, event.injected),
            method=event.method,
            path=self.redactor.path(info, event.target) if self.redactor else event.target,
            http_version=event.http_version,
            headers=[list(h) for h in self._redact_headers(headers)],
        )
        if event.body:
            data = event.body[: self.max_body]
            record["body"] = self._body(
                info, _header(headers, "content-type"), data, len(event.body), seen=state.seen
            )
        if event.body_follows:  # written once the body is in (see _request_body)
            state.request, state.request_type = record, _header(headers, "content-type")
        else:
            self._emit(record)

    def _request_body(self, event: RequestBody) -> None:
        """A streamed request body: keep its first `max_body` bytes; once it is in (or the
        response starts, or the exchange ends: `_flush_request`), write the request."""
        state = self._exchanges.get(event.id)
        if state is None or state.request is None:
            return
        room = self.max_body - state.request_kept
        if room > 0 and event.data and not state.gap:  # after a gap: its size only
            state.request_chunks.append(event.data[:room])
            state.request_kept += len(state.request_chunks[-1])
        state.request_size += event.size
        if event.end:
            self._flush_request(state)

    def _flush_request(self, state: _InFlight | None) -> None:
        if state is None or state.request is None:
            return
        record, state.request = state.request, None
        if state.request_size:
            data = b"".join(state.request_chunks)
            record["body"] = self._body(
                state.info, state.request_type, data, state.request_size, seen=state.seen
            )
        state.request_chunks, state.request_kept = [], 0
        self._emit(record)

    def _redact_headers(self, headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
        return self.redactor.headers(headers) if self.redactor else headers

    def _response(self, event: ResponseSeen) -> None:
        headers = _headers(event.headers)
        state = self._exchanges.get(event.id)
        self._flush_request(state)
        if state is not None:
            state.encoding = _header(headers, "content-encoding").lower()
            state.content_type = _header(headers, "content-type")
            state.watch = state.info.verb == "watch" and event.status == 200
            if state.watch:
                state.framer = framer_for(_header(headers, "content-type"))
                if state.encoding in ("gzip", "deflate"):
                    state.decoder = Inflater(state.encoding)
        self._emit(
            records.response(
                id=event.id,
                time=event.time,
                status=event.status,
                reason=event.reason,
                http_version=event.http_version,
                headers=[list(h) for h in self._redact_headers(headers)],
            )
        )

    def _chunk(self, event: Chunk) -> None:
        state = self._exchanges.get(event.id)
        if state is None or state.gap or state.unframed:
            return
        if state.watch and state.framer is not None:
            data = state.decoder.feed(event.data) if state.decoder else event.data
            for frame in state.framer.feed(data):
                self._event(event.id, state, event.time, "watch", frame, state.content_type)
            if state.framer.pending > max(self.max_body, FRAME_LIMIT):
                self._unframe(event.id, state)
            return
        state.size += len(event.data)
        room = self.max_body - state.kept
        if room > 0:
            state.chunks.append(event.data[:room])
            state.kept += min(room, len(event.data))

    def _unframe(self, exchange: str, state: _InFlight) -> None:
        """Stop recording a watch whose current frame outgrew the limit, and say so."""
        assert state.framer is not None
        held, limit = state.framer.pending, max(self.max_body, FRAME_LIMIT) >> 20
        state.framer, state.decoder, state.unframed = None, None, True
        message = (
            f"watch frame over {limit} MiB without an end ({held} bytes so far): the rest of "
            "this stream is not recorded (the client still gets it)"
        )
        self._emit(_note("warning", message, exchange))

    def _event(
        self,
        exchange: str,
        state: _InFlight,
        when: float,
        kind: str,
        frame: bytes,
        content_type: str,
        *,
        transport: str | None = None,
        from_client: bool | None = None,
        incomplete: bool | None = None,
    ) -> None:
        """An event record of `frame`; a message's `transport` and `from_client`, a
        partial frame at the stream's end `incomplete`."""
        data = frame[: self.max_body]
        redacted = False
        if self.redactor is not None:
            data, redacted = self.redactor.watch_frame(state.info, data, content_type, state.seen)
        body = body_record(
            data, size=len(frame), truncated=len(frame) > self.max_body, redacted=redacted
        )
        if transport is None and incomplete is None:  # a watch event: the most of them
            record = records.event(id=exchange, seq=state.seq, time=when, kind=kind, data=body)
        else:
            record = records.event(
                id=exchange,
                seq=state.seq,
                time=when,
                kind=kind,
                transport=transport,
                from_client=from_client,
                incomplete=incomplete,
                data=body,
            )
        state.seq += 1
        self._emit(record)

    def _message(self, event: Message) -> None:
        state = self._exchanges.get(event.id)
        if state is not None and state.gap:
            return
        if state is None:
            state = self._exchanges[event.id] = _InFlight(parse_request("GET", "/"))
        kind = "watch" if state.info.verb == "watch" and not event.from_client else event.kind
        self._event(
            event.id,
            state,
            event.time,
            kind,
            event.data,
            "application/json" if event.text else "",
            transport=event.kind,
            from_client=event.from_client,
        )

    def _end(self, event: End) -> None:
        state = self._exchanges.pop(event.id, None)
        self._flush_request(state)
        record = records.end(id=event.id, time=event.time)
        if state is not None and state.gap:
            gap = "recording gap: part of this exchange was not recorded"
            self._emit(_note("warning", gap, event.id))
            if state.watch:
                record["events"] = state.seq
        elif state is not None and state.unframed:
            record["events"] = state.seq
        elif state is not None:
            if state.framer is not None:
                tail = state.framer.flush()
                for frame in tail:
                    self._event(
                        event.id,
                        state,
                        event.time,
                        "watch",
                        frame,
                        state.content_type,
                        incomplete=True,
                    )
                record["events"] = state.seq
            elif state.chunks or event.body:
                record["body"] = self._response_body(state, event.body)
        if event.error:
            record["error"] = event.error
        self._emit(record)

    def _response_body(self, state: _InFlight, body: bytes | None) -> records.Body:
        data = b"".join(state.chunks) if state.chunks else (body or b"")
        size = state.size or len(data)
        decoder = _decoder(state.encoding)
        if decoder is None or size > len(data):  # a truncated stream cannot be inflated
            return self._body(state.info, state.content_type, data, size, seen=state.seen)
        try:
            inflated = decoder.decompress(data, self.max_body)
        except zlib.error:
            return self._body(state.info, state.content_type, data, size, seen=state.seen)
        whole = len(inflated)
        while decoder.unconsumed_tail:  # count what does not fit, without keeping it
            whole += len(decoder.decompress(decoder.unconsumed_tail, 1 << 20))
        return self._body(
            state.info, state.content_type, inflated, whole, state.encoding, state.seen
        )

    def _end_open_exchanges(self) -> None:
        for exchange in list(self._exchanges):
            self._end(End(exchange, time.time(), error="recording stopped"))


def _note(level: str, message: str, exchange: str | None = None) -> records.Note:
    """A note of now; about `exchange`, when given."""
    return records.note(time=time.time(), level=level, message=message, id=exchange)
