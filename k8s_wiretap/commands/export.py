"""`k8s-wiretap export RECORDING --FORMAT OUT ... | --otlp-endpoint URL`: a recording in any
of the output formats (`formats.FORMATS`: the story, a Markdown handout, lines, JSON, a HAR
file, OTLP traces, a picture as SVG or PNG), each to its file, and/or sent as traces to a
collector.

Every `--FORMAT OUT` follows one rule (`outfile`): `-` is stdout (not for a picture); OUT
is never the recording and never replaces an existing file without `--overwrite`; it is
written 0600 under a temporary name beside it and renamed to OUT once complete, so a full
disk, an I/O error or a signal (SIGTERM, SIGINT) leaves no OUT (an existing one as it was)
and says so in one line, exit 1 (a signal: 128 + its number). All of it is checked before
anything is read. Each output reads the recording once of its own (the HAR, OTLP and JSON
writers as a stream: any size in bounded memory).

`--jobs N` / `--dask ADDRESS` (`commands.jobs`; default: one job) write `--json` in
partitions run at once (`writers.json_lines_in_parts`, as `explain --format json` does),
its bytes the same; the other formats are made of the whole recording, in one job.

`--otlp-endpoint URL` POSTs the OTLP requests to a collector's `/v1/traces` (Jaeger's OTLP
HTTP port, 4318); it may be given with `--otlp OUT`. A picture (`--svg`, `--png`) is the
`--picture` chain (`--exchange ID`: its chain), map or sequence (`--range FROM:TO`);
views/pictures, docs/pictures.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from k8s_wiretap.capture.reader import iter_records
from k8s_wiretap.commands import formats, jobs, outfile, writers
from k8s_wiretap.commands.bundled import recording_path
from k8s_wiretap.commands.formats import FORMATS, Format, Job
from k8s_wiretap.commands.outfile import OVERWRITE, STDOUT, said
from k8s_wiretap.commands.writers import TraceSink
from k8s_wiretap.errors import Stopped, UsageError, raising_on_signals
from k8s_wiretap.views.otlp import traces_url
from k8s_wiretap.views.pictures import KINDS, Range

__all__ = ["register"]


def register(subparsers: Any) -> None:
    export = subparsers.add_parser(
        "export",
        help="a recording as a file: "
        + ", ".join(fmt.name for fmt in FORMATS)
        + "; or as traces sent to a collector (Jaeger)",
        description="Each --FORMAT OUT writes the recording in that format to OUT, a new "
        f"file (an existing one only with {OVERWRITE}; `-`: stdout, except for pictures). "
        "OTLP: the component as the service, watch deliveries as links, the explanation "
        "as attributes (docs/tracing.md). HAR: docs/importing.md.",
    )
    export.add_argument("recording", type=recording_path, metavar="RECORDING")
    for fmt in FORMATS:
        where = " (`-`: stdout)" if fmt.stdout else ""
        export.add_argument(f"--{fmt.name}", type=Path, metavar="OUT", help=fmt.help + where)
    export.add_argument(
        "--otlp-endpoint",
        metavar="URL",
        help="send the OTLP traces by OTLP/HTTP to URL/v1/traces (a collector's OTLP HTTP "
        "port, e.g. http://127.0.0.1:4318)",
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
        "--all", action="store_true", help="--story, --markdown: show noise too (leases, ...)"
    )
    export.add_argument(OVERWRITE, action="store_true", help="replace an existing OUT")
    # One job unless asked, as `explain`'s (docs/benchmarks.md, "explain in partitions").
    jobs.add_options(export, default=1)
    export.set_defaults(handler=_export)


PARALLEL = ("json",)  # the formats `--jobs`/`--dask` split (the others need the whole)


def _export(args: argparse.Namespace) -> int:
    asked = [(fmt, getattr(args, fmt.name)) for fmt in FORMATS]
    asked = [(fmt, path) for fmt, path in asked if path is not None]
    span = _picture_options(args, drawing=any(fmt.draws for fmt, _ in asked))
    if not asked and args.otlp_endpoint is None:
        every = ", ".join(f"--{fmt.name} OUT" for fmt in FORMATS)
        raise UsageError(f"export: say where to: {every}, --otlp-endpoint URL")
    url = traces_url(args.otlp_endpoint) if args.otlp_endpoint else None
    many = jobs.many(args)
    if many and not any(fmt.name in PARALLEL for fmt, _ in asked):
        split = " and ".join(f"--{name}" for name in PARALLEL)
        raise UsageError(
            f"export: --jobs and --dask split {split} only; the other formats are made "
            "of the whole recording, in one job"
        )
    made = [_job(args, fmt, path, span) for fmt, path in asked]
    for fmt, job in made:
        formats.check(fmt, job)
    try:
        with raising_on_signals():
            for fmt, job in made:
                if many and fmt.name in PARALLEL:
                    _in_parts(args, job)
                else:
                    formats.emit(fmt, job)
            if url is not None:
                _send(args.recording, url)
    except Stopped as stopped:
        why = f"stopped by {stopped.signal.name}: the OUT it was writing was not made"
        raise Stopped(stopped.signal, f"export: {why}") from None
    return 0


def _in_parts(args: argparse.Namespace, job: Job) -> None:
    """`--json` in partitions on the pool of `--jobs`/`--dask`, by the rule of `outfile`
    as `formats.emit` writes it (the pool opened first: a `--dask` nobody answers is an
    error, with no OUT)."""
    with jobs.pool(args) as pool:
        if job.out is None:
            sys.stdout.flush()  # what was printed before goes first
            writers.json_lines_in_parts(job, pool, sys.stdout.buffer)
            sys.stdout.buffer.flush()
            return
        with outfile.new_file(job.label, job.out, overwrite=job.overwrite) as out:
            what = writers.json_lines_in_parts(job, pool, out)
    outfile.said(what, job.out)


def _job(
    args: argparse.Namespace, fmt: Format, path: Path, span: Range | None
) -> tuple[Format, Job]:
    label = f"export: --{fmt.name}"
    if path == STDOUT and not fmt.stdout:
        raise UsageError(f"{label} writes to a file, not stdout")
    job = Job(
        args.recording,
        None if path == STDOUT else path,
        overwrite=args.overwrite,
        label=label,
        noise=args.all,
        picture=args.picture or "chain",
        exchange=args.exchange,
        span=span,
    )
    return fmt, job


def _picture_options(args: argparse.Namespace, *, drawing: bool) -> Range | None:
    """Check --picture, --exchange and --range before anything is read; the range."""
    pictures = " or ".join(f"--{fmt.name} OUT" for fmt in FORMATS if fmt.draws)
    for option, given in (
        ("--picture", args.picture),
        ("--exchange", args.exchange),
        ("--range", args.range),
    ):
        if given is not None and not drawing:
            raise UsageError(f"export: {option} draws a picture: give {pictures}")
    kind = args.picture or "chain"
    if args.exchange is not None and kind != "chain":
        raise UsageError(f"export: --exchange is for --picture chain, not {kind}")
    if args.range is not None and kind != "sequence":
        raise UsageError(f"export: --range is for --picture sequence, not {kind}")
    return Range.parse(args.range) if args.range is not None else None


def _send(recording: Path, url: str) -> None:
    """The traces POSTed to the collector at `url`, as they are read."""
    warnings: list[str] = []
    sent = TraceSink(None, url).send(iter_records(recording, warnings), warnings)
    said(sent, url)
