"""Exchanges as OpenTelemetry spans, sent to a tracing backend (Jaeger, say) over OTLP.

- `spans.py`: the mapping — one span per exchange, one trace per causal chain, the
  component as the service, watch deliveries as links, the explanation as attributes;
- `encode.py`: spans as the OTLP/HTTP JSON encoding of an ExportTraceServiceRequest;
- `send.py`: POST to a collector's `/v1/traces`;
- `export.py`: a recording's spans, as a stream (`k8s-wiretap export`);
- `output.py`: a recorder output that sends spans live from the proxy, never slowing it.

What it means, and how a team points it at its Jaeger: docs/tracing.md.
"""

from __future__ import annotations

from k8s_wiretap.views.otlp.encode import export_request
from k8s_wiretap.views.otlp.export import export_batches
from k8s_wiretap.views.otlp.output import OtlpOutput
from k8s_wiretap.views.otlp.send import OtlpError, post, traces_url
from k8s_wiretap.views.otlp.spans import Span, span_id, span_of, trace_id

__all__ = [
    "OtlpError",
    "OtlpOutput",
    "Span",
    "export_batches",
    "export_request",
    "post",
    "span_id",
    "span_of",
    "trace_id",
    "traces_url",
]
