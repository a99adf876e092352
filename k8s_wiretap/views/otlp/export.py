"""A recording's spans, in batches, as the recording is read: bounded memory at any size.

The exchanges are explained as a stream (`explain/stream.py`: in time order, each once it
is complete), each becomes a span (`spans.py`), and every `BATCH` spans go out together, as
one ExportTraceServiceRequest (`encode.py`) to a file line or a collector.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from k8s_wiretap.capture.assemble import Assembler
from k8s_wiretap.explain.stream import explained
from k8s_wiretap.views.otlp.spans import Span, span_of

__all__ = ["BATCH", "export_batches"]

BATCH = 512  # spans per request: the OpenTelemetry SDKs' default export batch


def export_batches(
    records: Iterable[dict[str, Any]], emit: Callable[[list[Span]], object], batch: int = BATCH
) -> Assembler:
    """`emit(spans)` for every `batch` spans of `records` (a recording's, header first) and
    once more for the rest; returns the assembler that read them (its warnings)."""
    pending: list[Span] = []

    def take(span: Span) -> None:
        pending.append(span)
        if len(pending) >= batch:
            emit(pending.copy())
            pending.clear()

    assembler = explained(records, span_of, take)
    if pending:
        emit(pending)
    return assembler
