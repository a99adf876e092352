"""`k8s-wiretap export RECORDING --otlp OUT | --otlp-endpoint URL | --har OUT | --markdown OUT
| --svg OUT | --png OUT`: a recording as traces, as a HAR file, as a Markdown handout, as a
picture.

One span per exchange, one trace per causal chain (views/otlp, docs/tracing.md). `--otlp`
writes the OTLP/HTTP JSON encoding, one ExportTraceServiceRequest of up to 512 spans per
line (the layout of the OpenTelemetry Collector's file exporter; a small recording is one
line, one request); `-` is stdout. `--otlp-endpoint` POSTs the same requests to a
collector's `/v1/traces` (Jaeger's OTLP HTTP port, 4318). Both may be given. The recording
is read as a stream: any size in bounded memory.

`--har OUT` writes a HAR 1.2 file (views/har.py), also read as a stream; `--markdown OUT`
the story as `explain --format markdown` prints it (the whole recording in memory, as
`explain` reads it for the story); `-`, for either, is stdout. Neither replaces an existing
OUT without `--overwrite`; both are written 0600 (they hold what the recording holds).
An OUT replaced with `--overwrite` (and `--otlp`'s, which always replaces) is removed and
made anew, 0600 (`capture.outputs.create`): a symlink there is removed, never followed. An
OUT that is the recording itself is refused. Each output reads the recording once of its own.
Every OUT is written under a temporary name beside it and renamed to OUT once complete
(`capture.outputs.whole_file`): a full disk, an I/O error or a signal (SIGTERM, SIGINT)
leaves no OUT (an existing one as it was) and says so in one line, exit 1 (a signal: 128
+ its number).

`--svg OUT`, `--png OUT`: a picture (views/pictures, docs/pictures.md), `--picture` chain
(`--exchange ID`: its chain), map or sequence (`--range FROM:TO`); the PNG rendered by
headless Chromium. Neither replaces an existing OUT without `--overwrite`.
"""

from __future__ import annotations

import argparse
import io
import itertools
import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from k8s_wiretap.capture.outputs import reason, recording_problem, whole_file
from k8s_wiretap.capture.reader import iter_records, load
from k8s_wiretap.errors import Stopped, UsageError, WiretapError, raising_on_signals
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.explainer import Explainer
from k8s_wiretap.views.har import write_har
from k8s_wiretap.views.otlp import Span, export_batches, export_request, post, traces_url
from k8s_wiretap.views.otlp.send import encoded
from k8s_wiretap.views.pictures import HANDOUT, KINDS, Range, data_uri, draw, handout, png
from k8s_wiretap.views.story import write_story
from k8s_wiretap.wire.controls import escape_controls

__all__ = ["register"]

STDOUT = Path("-")


def register(subparsers: Any) -> None:
    export = subparsers.add_parser(
        "export",
        help="a recording as OpenTelemetry traces (OTLP JSON, or sent to Jaeger), "
        "a HAR file, a Markdown handout",
        description="OTLP: one span per exchange, one trace per causal chain, the component "
        "as the service, watch deliveries as links, the explanation as attributes "
        "(docs/tracing.md). HAR: one entry per exchange, bodies as JSON, watch events in "
        "_k8sWiretap (docs/importing.md). Markdown: the story, as explain --format markdown.",
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
    export.add_argument(
        "--har", type=Path, metavar="OUT", help="write a HAR 1.2 file to OUT (`-`: stdout)"
    )
    export.add_argument(
        "--markdown", type=Path, metavar="OUT", help="write the story as Markdown to OUT (`-`)"
    )
    export.add_argument("--svg", type=Path, metavar="OUT", help="write a picture as SVG to OUT")
    export.add_argument(
        "--png", type=Path, metavar="OUT", help="write a picture as PNG to OUT (needs Chromium)"
    )
    export.add_argument(
        "--picture",
        choices=KINDS,
        help="--svg, --png: a causal chain as lanes (the default), who talks to whom, "
        "or a sequence diagram",
    )
    export.add_argument(
        "--exchange",
        metavar="ID",
        help="--picture chain: the chain of exchange ID (default: the deepest a kubectl "
        "command set off)",
    )
    export.add_argument(
        "--range",
        metavar="FROM:TO",
        help="--picture sequence: exchanges FROM to TO, ids or 1-based positions "
        "(default: 40 from the first kubectl command)",
    )
    export.add_argument(
        "--overwrite",
        action="store_true",
        help="--har, --markdown, --svg, --png: replace an existing OUT",
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
    span = _picture_options(args)
    outputs = (args.otlp, args.otlp_endpoint, args.har, args.markdown, args.svg, args.png)
    if all(output is None for output in outputs):
        raise UsageError(
            "export: say where to: --otlp OUT and/or --otlp-endpoint URL, --har OUT, "
            "--markdown OUT, --svg OUT, --png OUT"
        )
    files = (
        ("--otlp", args.otlp),
        ("--har", args.har),
        ("--markdown", args.markdown),
        ("--svg", args.svg),
        ("--png", args.png),
        *(("--markdown", beside(args.markdown, kind)) for kind in _handout_kinds(args.markdown)),
    )
    for option, path in files:
        if path is None or path == STDOUT:
            continue
        if _same(path, args.recording):
            raise UsageError(f"export: {option} {path} is the recording")
        if option == "--otlp":
            continue
        problem = recording_problem(path, overwrite=args.overwrite, hint="--overwrite")
        if problem:
            raise UsageError(f"export: {option} {problem}")
    try:
        with raising_on_signals():
            _outputs(args, span)
    except Stopped as stopped:
        why = f"stopped by {stopped.signal.name}: the OUT it was writing was not made"
        raise Stopped(stopped.signal, f"export: {why}") from None
    return 0


def _outputs(args: argparse.Namespace, span: Range | None) -> None:
    """Each output asked for, in turn."""
    if args.otlp is not None or args.otlp_endpoint is not None:
        _traces(args)
    if args.har is not None:
        _har(args.recording, args.har, args.overwrite)
    if args.markdown is not None:
        _markdown(args.recording, args.markdown, args.overwrite)
    if args.svg is not None or args.png is not None:
        _pictures(args, span)


def _picture_options(args: argparse.Namespace) -> Range | None:
    """Check --picture, --exchange and --range before anything is read; the range."""
    drawing = args.svg is not None or args.png is not None
    for option, given in (
        ("--picture", args.picture),
        ("--exchange", args.exchange),
        ("--range", args.range),
    ):
        if given is not None and not drawing:
            raise UsageError(f"export: {option} draws a picture: give --svg OUT or --png OUT")
    kind = args.picture or "chain"
    if args.exchange is not None and kind != "chain":
        raise UsageError(f"export: --exchange is for --picture chain, not {kind}")
    if args.range is not None and kind != "sequence":
        raise UsageError(f"export: --range is for --picture sequence, not {kind}")
    if STDOUT in (args.svg, args.png):
        raise UsageError("export: --svg and --png write to a file, not stdout")
    return Range.parse(args.range) if args.range is not None else None


def _pictures(args: argparse.Namespace, span: Range | None) -> None:
    """The picture as SVG and/or PNG; the recording is read before OUT is made, so a bad
    exchange id or range leaves no OUT behind."""
    warnings: list[str] = []
    kind = args.picture or "chain"
    svg = draw(
        kind,
        lambda: iter_records(args.recording, warnings),
        exchange=args.exchange,
        span=span,
    )
    for warning in dict.fromkeys(warnings):
        print(f"k8s-wiretap: warning: {escape_controls(warning)}", file=sys.stderr)
    rendered = png(svg) if args.png is not None else None  # no SVG left if this fails
    if args.svg is not None:
        _write("--svg", args.svg, svg.render().encode(), args.overwrite)
    if args.png is not None and rendered is not None:
        _write("--png", args.png, rendered, args.overwrite)


def _write(option: str, path: Path, data: bytes, overwrite: bool, kind: str = "") -> None:
    with _new(option, path, overwrite) as out:
        out.write(data)
    print(f"k8s-wiretap: {kind or option[2:].upper()} picture to {path}", file=sys.stderr)


def _same(out: Path, recording: Path) -> bool:
    """Whether `out` is the recording (the same file, or the same path once resolved)."""
    try:
        return os.path.samefile(out, recording)
    except OSError:
        return out.resolve() == recording.resolve()


@contextmanager
def _new(option: str, path: Path, overwrite: bool) -> Iterator[BinaryIO]:
    """A new output file, 0600, that becomes `path` once the block ends without an error
    (`whole_file`: nothing that appeared since the check is replaced unless `overwrite`,
    a symlink never followed). An OUT that cannot be made is a usage error (exit 2), one
    that cannot be written whole (a full disk) a failure (exit 1); neither leaves OUT."""
    opened = False
    try:
        with whole_file(path, overwrite=overwrite) as out:
            opened = True
            yield out
    except OSError as error:
        kind = WiretapError if opened else UsageError
        raise kind(f"export: {option} {path}: {reason(error)} ({path} not written)") from error


def _har(recording: Path, path: Path, overwrite: bool) -> None:
    """The HAR file; a recording that cannot be read at all is said before OUT is made,
    and one that fails part way leaves no OUT behind."""
    warnings: list[str] = []
    records = iter_records(recording, warnings)
    first = next(records, None)  # the header: what cannot be read raises here
    source = itertools.chain([first] if first is not None else [], records)
    if path == STDOUT:
        sys.stdout.flush()
        assembler, entries = write_har(source, sys.stdout.buffer)
    else:
        with _new("--har", path, overwrite) as out:
            assembler, entries = write_har(source, out)
    for warning in warnings + assembler.warnings:
        print(f"k8s-wiretap: warning: {escape_controls(warning)}", file=sys.stderr)
    print(f"k8s-wiretap: {entries} HAR entries to {path}", file=sys.stderr)


def beside(markdown: Path, kind: str) -> Path:
    """Where `export --markdown OUT` puts its `kind` picture: OUT-kind.svg, beside it."""
    return markdown.with_name(f"{markdown.stem}-{kind}.svg")


def _handout_kinds(markdown: Path | None) -> tuple[str, ...]:
    return HANDOUT if markdown is not None and markdown != STDOUT else ()


def _markdown(recording: Path, path: Path, overwrite: bool) -> None:
    """The story in Markdown, opening with the handout's pictures: written beside OUT as
    OUT-map.svg and OUT-chain.svg and linked by name (a folder of files a Markdown viewer
    or a repository shows), or on stdout embedded as `data:` URIs."""
    loaded = load(recording)
    for warning in loaded.warnings:
        print(f"k8s-wiretap: warning: {escape_controls(warning)}", file=sys.stderr)
    explainer = Explainer(Analysis.of(loaded))
    drawn = handout(lambda: iter_records(recording, []))
    if path == STDOUT:
        embedded = [(svg.title, data_uri(svg)) for _, svg in drawn]
        write_story(explainer, sys.stdout, markdown=True, pictures=embedded)
        return
    linked = []
    for kind, svg in drawn:
        _write("--markdown", beside(path, kind), svg.render().encode(), overwrite, "SVG")
        linked.append((svg.title, beside(path, kind).name))
    with _new("--markdown", path, overwrite) as raw, io.TextIOWrapper(raw, "utf-8") as out:
        write_story(explainer, out, markdown=True, pictures=linked)
    print(f"k8s-wiretap: the story in Markdown to {path}", file=sys.stderr)


def _traces(args: argparse.Namespace) -> None:
    url = traces_url(args.otlp_endpoint) if args.otlp_endpoint else None
    warnings: list[str] = []
    with ExitStack() as stack:
        out: BinaryIO | None = None
        if args.otlp is not None:
            out = (
                sys.stdout.buffer
                if str(args.otlp) == "-"
                else stack.enter_context(_new("--otlp", args.otlp, overwrite=True))
            )
        sink = _Sink(out, url)
        assembler = export_batches(iter_records(args.recording, warnings), sink)
    for warning in warnings + assembler.warnings:
        print(f"k8s-wiretap: warning: {escape_controls(warning)}", file=sys.stderr)
    where = " and ".join(
        w for w in (str(args.otlp) if args.otlp else "", url or "") if w and w != "-"
    )
    print(
        f"k8s-wiretap: {sink.spans} spans in {sink.requests} requests"
        + (f" to {where}" if where else ""),
        file=sys.stderr,
    )
