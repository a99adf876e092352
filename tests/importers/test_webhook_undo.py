"""A webhook batch taken back (webhook_undo.py): the open exchanges as they were, in their
order, and a mark that costs what the batch touches, not what is open."""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

from k8s_wiretap.importers.audit import Event
from k8s_wiretap.importers.webhook import LiveSink, WebhookImport
from k8s_wiretap.importers.webhook_undo import Undo
from tests.importers.test_webhook import audit_event, event_list

PEER = "kube-apiserver (127.0.0.1:1)"


def _receiver(tmp_path: Path, max_open: int = 250_000) -> WebhookImport:
    return WebhookImport(LiveSink(tmp_path / "webhook.jsonl", source="audit webhook"), max_open)


def _open(receiver: WebhookImport) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """The import's open exchanges (in order, each its request's key and fields) and the
    sink's open ids."""
    states = [(k, dict(vars(s), stages=list(s.stages))) for k, s in receiver.importer._open.items()]
    return states, list(receiver.sink._open)


def test_a_batch_taken_back_leaves_what_is_open_as_it_was(tmp_path: Path) -> None:
    """A batch that ended an exchange in the middle, began two, pushed the oldest out past
    --max-open and went on with another is taken back: the same exchanges open, in the same
    order, each as it was; the file as it was."""
    receiver = _receiver(tmp_path, max_open=3)
    started = [audit_event(i, "RequestReceived") for i in "abc"]
    receiver.post(event_list(*started, audit_event("c", "ResponseStarted")), PEER)
    before, size = _open(receiver), receiver.sink._output.position
    undo = Undo.mark(receiver.sink, receiver.importer)
    for raw in (
        audit_event("b", "ResponseComplete"),
        audit_event("d", "RequestReceived"),
        audit_event("e", "RequestReceived"),  # a is the oldest, pushed out
        audit_event("c", "ResponseComplete"),
    ):
        receiver.importer.feed(Event.of(raw))
    assert _open(receiver) != before
    undo.restore()
    assert _open(receiver) == before
    assert receiver.sink._output.position == size
    receiver.post(event_list(*(audit_event(i, "ResponseComplete") for i in "abc")), PEER)
    receiver.close()


def test_a_mark_costs_what_the_batch_touches_not_what_is_open(tmp_path: Path) -> None:
    """With 20,000 exchanges open (watches), marking a batch allocates far less than a copy
    of each would take (some 4 MB): a live cluster's batches come several a second."""
    receiver = _receiver(tmp_path)
    for n in range(20):
        ids = [f"w{n}-{i}" for i in range(1000)]
        receiver.post(event_list(*(audit_event(i, "RequestReceived", 8) for i in ids)), PEER)
    assert len(receiver.importer._open) == 20_000
    tracemalloc.start()
    try:
        Undo.mark(receiver.sink, receiver.importer)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 512 * 1024, peak
