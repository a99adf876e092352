"""`k8s-wiretap export RECORDING --otlp OUT | --otlp-endpoint URL`: a recording as traces.

One span per exchange, one trace per causal chain (views/otlp, docs/tracing.md). `--otlp`
writes the OTLP/HTTP JSON encoding, one ExportTraceServiceRequest of up to 512 spans per
line (the layout of the OpenTelemetry Collector's file exporter; a small recording is one
line, one request); `-` is stdout. `--otlp-endpoint` POSTs the same requests to a
collector's `/v1/traces` (Jaeger's OTLP HTTP port, 4318). Both may be given. The recording
is read as a stream: any size in bounded memory.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any, BinaryIO

from k8s_wiretap.capture.reader import iter_records
from k8s_wiretap.errors import UsageError
from k8s_wiretap.views.otlp import Span, export_batches, export_request, post, traces_url
from k8s_wiretap.views.otlp.send import encoded

__all__ = ["register"]


def register(subparsers: Any) -> None:
    export = subparsers.add_parser(
        "export",
        help="a recording as OpenTelemetry traces (OTLP JSON, or sent to Jaeger)",
        description="One span per exchange, one trace per causal chain, the component as "
        "the service, watch deliveries as links, the explanation as attributes "
        "(docs/tracing.md).",
    )
    export.add_argument("recording", type=Path, metavar="RECORDING")
    export.add_argument(
        "--otlp",
        type=Path,
        metavar="OUT",
        help="write OTLP JSON to OUT (`-`: stdout), one ExportTraceServiceRequest a line",
    )
    export.add_argument(
        "--otlp-endpoint",
        metavar="URL",
        help="send by OTLP/HTTP to URL/v1/traces (a collector's OTLP HTTP port, "
        "e.g. http://127.0.0.1:4318)",
    )
    export.set_defaults(handler=_export)


class _Sink:
    """Where each batch goes: a file's line, a collector, or both."""

    def __init__(self, out: BinaryIO | None, url: str | None) -> None:
        self.out, self.url = out, url
        self.spans = self.requests = 0

    def __call__(self, spans: list[Span]) -> None:
        body = encoded(export_request(spans))
        if self.out is not None:
            self.out.write(body + b"\n")
        if self.url is not None:
            post(self.url, body)
        self.spans += len(spans)
        self.requests += 1


def _export(args: argparse.Namespace) -> int:
    if args.otlp is None and args.otlp_endpoint is None:
        raise UsageError("export: say where to: --otlp OUT and/or --otlp-endpoint URL")
    url = traces_url(args.otlp_endpoint) if args.otlp_endpoint else None
    warnings: list[str] = []
    with ExitStack() as stack:
        out: BinaryIO | None = None
        if args.otlp is not None:
            out = (
                sys.stdout.buffer
                if str(args.otlp) == "-"
                else stack.enter_context(_open(args.otlp))
            )
        sink = _Sink(out, url)
        assembler = export_batches(iter_records(args.recording, warnings), sink)
    for warning in warnings + assembler.warnings:
        print(f"k8s-wiretap: warning: {warning}", file=sys.stderr)
    where = " and ".join(
        w for w in (str(args.otlp) if args.otlp else "", url or "") if w and w != "-"
    )
    print(
        f"k8s-wiretap: {sink.spans} spans in {sink.requests} requests"
        + (f" to {where}" if where else ""),
        file=sys.stderr,
    )
    return 0


def _open(path: Path) -> BinaryIO:
    try:
        return path.open("wb")
    except OSError as error:
        raise UsageError(f"--otlp {path}: {error.strerror}") from error
