"""The API server's audit webhook, received live: each batch it POSTs is recorded as
`import audit` records a file (`importers.audit`), through the same `AuditImport` and
`Sink`, so stages, levels, attribution and redaction are the same (docs/importing.md).

What the API server sends, from its source (kubernetes/kubernetes, staging/src/k8s.io/
apiserver; the flags are the same in 1.20 and the default release, `kube-apiserver --help`):

- `plugin/pkg/audit/webhook/webhook.go`: each batch is one POST of an `EventList` of
  `--audit-webhook-version` (default audit.k8s.io/v1) to the server of the kubeconfig
  `--audit-webhook-config-file` names, with that kubeconfig's credentials (here a client
  certificate). The body is JSON (`pkg/util/webhook/webhook.go`: the audit scheme's
  LegacyCodec, client-go's default content type), one document, on one line; each request
  may take 30 s.
- `retryOnError` there: every error is retried, an HTTP status that is no success included,
  with the backoff `pkg/server/options/audit.go` gives it
  (`pkg/util/webhook.DefaultRetryBackoffWithInitialDelay`): `--audit-webhook-initial-backoff`
  (default 10 s), times 1.5 with 20 % jitter, five tries (about 80 s in all); then the
  batch is dropped and the API server logs it (`audit.HandlePluginError`). A receiver that
  is down or restarting loses only the batches whose tries all fall in that time; the API
  server runs on regardless.
- `plugin/pkg/audit/buffered/buffered.go` (`--audit-webhook-mode=batch`, the default):
  events wait in a buffer of 10,000 (a full buffer drops events), and go as a batch of at
  most 400 (`--audit-webhook-batch-max-size`) or after `--audit-webhook-batch-max-wait`
  (default 30 s; `lab up --audit-webhook` sets 1 s so the recording is live), at most 10
  batches a second (burst 15). Each batch is sent from a goroutine of its own: batches may
  arrive at once, and out of order (a retried one late).
- The log backend is independent: with both, each event goes to both.

So `WebhookImport.post` takes the bytes of one POST, and reads its items one at a time
(`webhook_batch`): a body that is no EventList (not JSON, not an object, another kind) is
skipped whole, with a note in the recording that says why (`Sink.skip`), and raises
`BadEvent` (the server answers 400); an item that is no usable Event is skipped with its
index, the rest recorded. Posts are taken one at a time (a lock), and each is flushed to
the file before it is answered: a follower (the TUI) sees a batch as soon as the API
server's POST is answered. A batch is recorded whole or not at all: where the sink and
the import stand is marked before it (`webhook_undo.Undo`); when it cannot be written
(OSError: the disk is full), both are taken back there, the file truncated to where it
stood, so the server answers 500 for a batch of which nothing is kept, and the API
server's next try of it is recorded whole (the first batch written after says how many
could not be). A receiver killed at any moment leaves whole lines (at most the batch it
was writing is cut short, which the reader says). `refused` notes a batch refused unread
for its size. `close` writes what the API server left open (`AuditImport.finish`:
watches still running, each with a note) and closes the file.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from k8s_wiretap.capture.outputs import reason
from k8s_wiretap.importers import webhook_batch
from k8s_wiretap.importers.audit import AuditImport, BadEvent, Event
from k8s_wiretap.importers.limits import MAX_OPEN
from k8s_wiretap.importers.sink import Sink
from k8s_wiretap.importers.webhook_undo import Undo
from k8s_wiretap.wire.words import counted

__all__ = ["Batch", "LiveSink", "Stopped", "WebhookImport"]


class Stopped(RuntimeError):
    """A POST that came after the receiver stopped recording."""


class LiveSink(Sink):
    """A `Sink` whose records can be written to the file now (`flush`), not only when a
    megabyte waits or the sink closes: a live recording is followed as it grows (written
    in place, not renamed)."""

    STAGED = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A batch whose records take up to PENDING bytes (the API server sends at most 400
        # events a batch) waits whole and is written all or none by `flush`: nothing of it
        # reaches the file, nor a reader following it (the TUI), before it is known to fit.
        # A larger one is written a PENDING at a time, each all or none.
        self._output.PENDING_LIMIT = self.PENDING

    PENDING = 2 * 1024 * 1024

    def flush(self) -> None:
        """Write what waits, all of it or, when the disk has no room for all of it, none
        (OSError: the disk is full; `importers.webhook_undo` takes back what a larger batch
        wrote before)."""
        self._output.flush(all_or_none=True)


@dataclass(frozen=True)
class Batch:
    """What one POST gave: its number, events, new exchanges and skipped items."""

    number: int
    events: int
    exchanges: int
    skipped: int


class WebhookImport:
    """Records the EventLists POSTed to the receiver into `sink`; safe across threads."""

    def __init__(self, sink: LiveSink, max_open: int = MAX_OPEN) -> None:
        self.sink = sink
        self.importer = AuditImport(sink, max_open=max_open)  # past it, the oldest is ended
        self.batches = 0  # batches recorded (or skipped whole, and noted)
        self._lock = threading.Lock()
        self._closed = False
        self._failed: tuple[int, str] | None = None  # batches not written since, and why

    def post(self, body: bytes | bytearray, peer: str) -> Batch:
        """Record one POST's body from `peer` (who sent it: name and address; a bytearray
        is emptied as it is read), whole or not at all; BadEvent when the body is no
        EventList (noted in the recording), Stopped after `close`, OSError when the
        recording cannot be written (then the recording and the import are as they were
        before: the batch, sent again, is recorded whole)."""
        with self._lock:
            if self._closed:
                raise Stopped("the receiver has stopped recording")
            where = f"batch {self.batches + 1} from {peer}"
            undo = Undo.mark(self.sink, self.importer)
            exchanges, skipped = self.sink.exchanges, self.sink.skipped
            try:
                self._said_failed()
                events = self._feed(body, where)
                self.sink.flush()
            except BadEvent as error:
                undo.restore()
                self.batches += 1
                self.sink.skip(where, str(error))
                self.sink.flush()
                raise
            except OSError as error:
                undo.restore()
                count = self._failed[0] if self._failed else 0
                self._failed = (count + 1, reason(error))
                raise
            except BaseException:  # a bug, or an interrupt: nothing of the batch is kept
                undo.restore()
                raise
            self.batches, self._failed = self.batches + 1, None
            exchanges, skipped = self.sink.exchanges - exchanges, self.sink.skipped - skipped
            return Batch(self.batches, events, exchanges, skipped)

    def refused(self, peer: str, size: int, limit: int) -> None:
        """Note a batch refused unread for its size (answered 413): the API server drops it
        after its tries, and the recording says what it lost (OSError if it cannot)."""
        with self._lock:
            if self._closed:
                return
            self.sink.note(
                f"a batch of {size:,} bytes from {peer} refused unread: above the limit of "
                f"{limit:,} (--max-batch); its events are not recorded"
            )
            self.sink.flush()

    def _feed(self, body: bytes | bytearray, where: str) -> int:
        """Feed the batch's items to the import, one parsed at a time; how many were Events."""
        events = 0
        for index, raw in enumerate(webhook_batch.items(body)):
            try:
                if isinstance(raw, webhook_batch.ItemError):
                    raise raw
                event = Event.of(raw)
            except BadEvent as error:
                self.sink.skip(f"{where} item {index}", str(error))
                continue
            self.importer.feed(event)
            events += 1
        return events

    def _said_failed(self) -> None:
        """The note of the batches that could not be written since the last one that was."""
        if self._failed is None:
            return
        count, why = self._failed
        self.sink.note(
            f"{counted(count, 'batch', 'batches')} could not be written ({why}): "
            "answered 500, for the API server to send again (it tries each five times)"
        )

    def close(self) -> None:
        """Write what is still open, and close the recording; later posts raise Stopped."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self.importer.finish()
            finally:
                self.sink.close()
