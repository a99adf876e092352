"""Spans sent live from the proxy: a recorder output (`capture.recorder.Output`).

The proxy only produces records; this output turns them into spans off the recorder's
thread, and never makes the proxy wait:

- `write` puts the record on a bounded queue (`RECORDS`) and returns; when the queue is full
  (the explaining thread is behind), the record is dropped and counted (the assembler shows
  an exchange whose request was dropped with an unknown method and path);
- one thread explains the records as a stream (`export.py`, as `export` does a file): a span
  is ready once its exchange has ended and `explain.stream.LOOKAHEAD` seconds have passed
  it (what follows an exchange still says something about it; a watch, when it ends). While
  no record comes, the thread feeds the stream the clock, so spans go out in quiet spells;
- a second thread sends the spans in batches (`BATCH`, or what is there after `LINGER`
  seconds) from a bounded queue (`SPANS`); a slow collector fills it, a dead one fails each
  POST (within `send.TIMEOUT`): the spans that do not fit, or that a POST could not
  deliver, are dropped and counted, with a line on stderr (the first, then at most one
  every `WARN_EVERY` seconds) saying how many so far and why.

`close` (the proxy stopping) explains what is left, sends it, and waits at most
`CLOSE_WAIT` seconds for that.
"""

from __future__ import annotations

import contextlib
import queue
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any, TextIO, cast

from k8s_wiretap.capture import records
from k8s_wiretap.views.otlp.encode import export_request
from k8s_wiretap.views.otlp.export import BATCH, export_batches
from k8s_wiretap.views.otlp.send import OtlpError, encoded, post, traces_url
from k8s_wiretap.views.otlp.spans import Span
from k8s_wiretap.wire.words import counted

__all__ = ["OtlpOutput"]

RECORDS = 100_000  # records waiting to be explained
SPANS = 20_000  # spans waiting to be sent
LINGER = 1.0  # seconds a batch waits to fill up
IDLE = 1.0  # seconds without a record before the clock moves the stream on
WARN_EVERY = 30.0
CLOSE_WAIT = 15.0
_STOP = object()


class OtlpOutput:
    """Send the spans of the exchanges the proxy records to `endpoint` (OTLP/HTTP JSON)."""

    def __init__(
        self,
        endpoint: str,
        *,
        stderr: TextIO = sys.stderr,
        records: int = RECORDS,
        spans: int = SPANS,
        timeout: float = 10.0,
        close_wait: float = CLOSE_WAIT,
    ) -> None:
        self.url = traces_url(endpoint)
        self.stderr = stderr
        self.timeout = timeout
        self.close_wait = close_wait
        self.sent = 0
        self.dropped_records = 0
        self.dropped_spans = 0
        self._records: queue.Queue[object] = queue.Queue(records)
        self._spans: queue.Queue[object] = queue.Queue(spans)
        self._warned = -float("inf")
        self._lock = threading.Lock()
        self._explainer = threading.Thread(target=self._explain, name="otlp-explain", daemon=True)
        self._sender = threading.Thread(target=self._send, name="otlp-send", daemon=True)
        self._explainer.start()
        self._sender.start()

    # -- the recorder's side: never blocks ---------------------------------------------------
    def write(self, record: dict[str, Any]) -> None:
        try:
            self._records.put_nowait(record)
        except queue.Full:
            with self._lock:
                self.dropped_records += 1
            self._warn("records dropped: explaining is behind the traffic")

    def flush(self) -> None:
        """Nothing to flush: spans go out on their own thread."""

    def close(self) -> None:
        """Explain and send what is left (at most `close_wait` seconds), then say what was
        dropped, if anything."""
        deadline = time.monotonic() + self.close_wait
        self._put(self._records, _STOP, deadline)
        self._explainer.join(max(0.0, deadline - time.monotonic()))
        self._put(self._spans, _STOP, deadline)
        self._sender.join(max(0.0, deadline - time.monotonic()))
        if self.dropped_records or self.dropped_spans:
            print(f"k8s-wiretap: otlp: {self._counts()}", file=self.stderr, flush=True)

    @staticmethod
    def _put(target: queue.Queue[object], item: object, deadline: float) -> None:
        with contextlib.suppress(queue.Full):
            target.put(item, timeout=max(0.01, deadline - time.monotonic()))

    # -- explaining ---------------------------------------------------------------------------
    def _explain(self) -> None:
        try:
            export_batches(self._incoming(), self._ready, batch=1)
        except Exception as error:  # a bug here must not reach the proxy
            self._warn(f"explaining stopped: {error!r}", force=True)
            self._drain_records()

    def _incoming(self) -> Iterator[dict[str, Any]]:
        """The records as they come, and the clock while none does (see the module)."""
        while True:
            try:
                item = self._records.get(timeout=IDLE)
            except queue.Empty:
                yield cast(dict[str, Any], records.clock(time=time.time()))
                continue
            if item is _STOP:
                return
            assert isinstance(item, dict)
            yield item

    def _drain_records(self) -> None:
        while self._records.get() is not _STOP:
            pass

    def _ready(self, spans: list[Span]) -> None:
        for span in spans:
            try:
                self._spans.put_nowait(span)
            except queue.Full:
                with self._lock:
                    self.dropped_spans += 1
                self._warn("spans dropped: the collector is slow or down")

    # -- sending ------------------------------------------------------------------------------
    def _send(self) -> None:
        stopping = False
        while not stopping:
            batch, stopping = self._batch()
            if batch:
                self._post(batch)

    def _batch(self) -> tuple[list[Span], bool]:
        """Up to BATCH spans: what comes within LINGER of the first; True when stopping."""
        first = self._spans.get()
        if first is _STOP:
            return [], True
        batch = [first]
        until = time.monotonic() + LINGER
        while len(batch) < BATCH:
            try:
                item = self._spans.get(timeout=max(0.0, until - time.monotonic()))
            except queue.Empty:
                break
            if item is _STOP:
                return [s for s in batch if isinstance(s, Span)], True
            batch.append(item)
        return [s for s in batch if isinstance(s, Span)], False

    def _post(self, batch: list[Span]) -> None:
        try:
            post(self.url, encoded(export_request(batch)), self.timeout)
        except OtlpError as error:
            with self._lock:
                self.dropped_spans += len(batch)
            self._warn(str(error))
            return
        with self._lock:
            self.sent += len(batch)

    # -- saying so ----------------------------------------------------------------------------
    def _counts(self) -> str:
        with self._lock:
            return (
                f"{counted(self.sent, 'span')} sent, {counted(self.dropped_spans, 'span')} and "
                f"{counted(self.dropped_records, 'record')} dropped"
            )

    def _warn(self, why: str, *, force: bool = False) -> None:
        now = time.monotonic()
        with self._lock:
            if not force and now - self._warned < WARN_EVERY:
                return
            self._warned = now
        print(f"k8s-wiretap: otlp: {why} ({self._counts()})", file=self.stderr, flush=True)
