"""Spans as the OTLP/HTTP JSON encoding of an ExportTraceServiceRequest.

`resourceSpans` (one per component: its resource attributes) → `scopeSpans` (one scope,
`k8s-wiretap`) → `spans`. As the OTLP JSON encoding says: trace and span ids are hex
strings, times unix nanoseconds as decimal strings, 64-bit integers as strings, enums as
numbers (kind 3 is CLIENT: every exchange is a client's call to the API server; status
code 2 is ERROR), attribute names in lowerCamelCase.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from k8s_wiretap import __version__
from k8s_wiretap.views.otlp.spans import Attributes, Link, Span

__all__ = ["SCOPE", "export_request"]

SCOPE = "k8s-wiretap"
SPAN_KIND_CLIENT = 3
STATUS_CODE_ERROR = 2


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": str(value)}


def _attributes(pairs: Attributes) -> list[dict[str, Any]]:
    return [{"key": key, "value": _value(value)} for key, value in pairs]


def _link(link: Link) -> dict[str, Any]:
    return {
        "traceId": link.trace_id,
        "spanId": link.span_id,
        "attributes": _attributes(link.attributes),
    }


def _span(span: Span) -> dict[str, Any]:
    encoded: dict[str, Any] = {
        "traceId": span.trace_id,
        "spanId": span.span_id,
        "name": span.name,
        "kind": SPAN_KIND_CLIENT,
        "startTimeUnixNano": str(span.start),
        "endTimeUnixNano": str(span.end),
        "attributes": _attributes(span.attributes),
    }
    if span.parent_span_id:
        encoded["parentSpanId"] = span.parent_span_id
    if span.links:
        encoded["links"] = [_link(link) for link in span.links]
    if span.error:
        encoded["status"] = {"code": STATUS_CODE_ERROR, "message": span.error}
    return encoded


def export_request(spans: Iterable[Span]) -> dict[str, Any]:
    """One ExportTraceServiceRequest holding `spans`, grouped by their resource."""
    by_resource: dict[Attributes, list[dict[str, Any]]] = {}
    for span in spans:
        by_resource.setdefault(span.resource, []).append(_span(span))
    scope = {"name": SCOPE, "version": __version__}
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": _attributes(resource)},
                "scopeSpans": [{"scope": scope, "spans": encoded}],
            }
            for resource, encoded in by_resource.items()
        ]
    }
