"""One writer per output format (`formats.FORMATS`): `write(job, out) -> what`, which writes
the recording `job.recording` in its format to the binary stream `out` (a new file's, or
stdout's) and returns what it wrote in a few words, said once the file is whole
(`outfile.said`: `k8s-wiretap: 12 HAR entries to OUT`). Each reads the recording once of
its own, and warns (`warn.warn_all`) of what it skipped.

The pictures and the OTLP encoder are imported by the writers that use them: `explain`
starts without them (65 ms of its start-up otherwise).
"""

from __future__ import annotations

import contextlib
import gc
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from k8s_wiretap.capture.reader import iter_records, load
from k8s_wiretap.commands.jobs import Pool
from k8s_wiretap.commands.outfile import new_file, said
from k8s_wiretap.commands.warn import warn_all
from k8s_wiretap.errors import WiretapError
from k8s_wiretap.explain import partition
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.explainer import Explainer
from k8s_wiretap.views import json as json_view
from k8s_wiretap.views.har import write_har
from k8s_wiretap.views.json import write_json
from k8s_wiretap.views.lines import exchange_line, spans_days
from k8s_wiretap.views.story import write_story
from k8s_wiretap.wire.words import counted

if TYPE_CHECKING:
    from k8s_wiretap.views.otlp import Span
    from k8s_wiretap.views.pictures import Range, Svg

__all__ = [
    "Job",
    "TraceSink",
    "beside",
    "handout_files",
    "har",
    "json_lines",
    "json_lines_in_parts",
    "lines",
    "markdown",
    "otlp",
    "picture_png",
    "picture_svg",
    "png_ready",
    "story",
]


@dataclass(frozen=True)
class Job:
    """One output to make: of `recording`, to the file `out` (None: stdout); `label` names
    it in what is said (`export: --har`); the options some formats take."""

    recording: Path
    out: Path | None = None
    overwrite: bool = False
    label: str = ""
    noise: bool = False  # story, markdown: noise too (leases, ...)
    picture: str = "chain"  # svg, png: which picture
    exchange: str | None = None  # --picture chain: the chain of this exchange
    span: Range | None = None  # --picture sequence: these exchanges


@contextlib.contextmanager
def _text(out: BinaryIO) -> Iterator[TextIO]:
    """`out` as UTF-8 text (LF line ends), handed back unclosed when the block ends."""
    stream = io.TextIOWrapper(out, "utf-8", newline="\n")
    try:
        yield stream
    finally:
        stream.flush()
        stream.detach()


def _explainer(job: Job) -> Explainer:
    """The whole recording in memory, explained (as `explain` reads it for the story)."""
    loaded = load(job.recording)
    warn_all(loaded.warnings)
    return Explainer(Analysis.of(loaded))


def story(job: Job, out: BinaryIO) -> str:
    """Each kubectl command and the tree of what it set off, in words (`views.story`)."""
    explainer = _explainer(job)
    with _text(out) as text:
        write_story(explainer, text, noise=job.noise)
    return "the story"


def beside(markdown: Path, kind: str) -> Path:
    """Where a Markdown handout written to OUT puts its `kind` picture: OUT-kind.svg."""
    return markdown.with_name(f"{markdown.stem}-{kind}.svg")


def handout_files(markdown: Path) -> tuple[Path, ...]:
    """The pictures a Markdown handout written to `markdown` writes beside it."""
    from k8s_wiretap.views.pictures import HANDOUT

    return tuple(beside(markdown, kind) for kind in HANDOUT)


def markdown(job: Job, out: BinaryIO) -> str:
    """The story in Markdown, opening with the handout's pictures: written beside OUT as
    OUT-map.svg and OUT-chain.svg and linked by name (a folder of files a Markdown viewer
    or a repository shows), or on stdout embedded as `data:` URIs."""
    from k8s_wiretap.views.pictures import data_uri, handout

    explainer = _explainer(job)
    drawn = handout(lambda: iter_records(job.recording, []))
    if job.out is None:
        pictures = [(svg.title, data_uri(svg)) for _, svg in drawn]
    else:
        pictures = [(svg.title, _beside(job, job.out, kind, svg)) for kind, svg in drawn]
    with _text(out) as text:
        write_story(explainer, text, noise=job.noise, markdown=True, pictures=pictures)
    return "the story in Markdown"


def _beside(job: Job, path: Path, kind: str, svg: Svg) -> str:
    """Write the handout's `kind` picture beside `path`, by the same rule; its name."""
    side = beside(path, kind)
    with new_file(job.label, side, overwrite=job.overwrite) as file:
        file.write(svg.render().encode())
    said("SVG picture", side)
    return side.name


def lines(job: Job, out: BinaryIO) -> str:
    """One line per exchange (`views.lines`)."""
    loaded = load(job.recording)
    warn_all(loaded.warnings)
    exchanges = Analysis.of(loaded).exchanges
    dated = spans_days(e.time for e in exchanges)
    with _text(out) as text:
        for exchange in exchanges:
            text.write(exchange_line(exchange, dated=dated) + "\n")
    return counted(len(exchanges), "exchange line")


@contextlib.contextmanager
def _batch_collector() -> Iterator[None]:
    """The cyclic garbage collector for a batch: a stream of records makes millions of
    small dicts and lists, nearly all freed by reference counting; with the default
    thresholds (a pass every 700 allocations) the collector's passes were a tenth of
    `explain`'s time and found next to nothing. Passes every 100,000, as before after."""
    before = gc.get_threshold()
    gc.freeze()  # what start-up made (modules, tables) is never looked at again
    gc.set_threshold(100_000, 50, 100)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def json_lines(job: Job, out: BinaryIO) -> str:
    """One explained JSON object per exchange (`views.json`), as a stream: any size of
    recording in bounded memory."""
    warnings: list[str] = []
    with _batch_collector():
        assembler = write_json(iter_records(job.recording, warnings), out)
    warn_all(warnings + assembler.warnings)
    return "the exchanges as JSON lines"


def json_lines_in_parts(job: Job, pool: Pool, out: BinaryIO) -> str:
    """`json_lines` in partitions (`explain/partition.py`) run on `pool` (`--jobs`,
    `--dask`), their lines written to `out` in order: the same bytes; in one job, by
    `json_lines`, when the recording is one partition (too small to be worth more). A
    partition that fails is one line, `job.label` first (a WiretapError as it is)."""
    if not partition.worth(job.recording):
        return json_lines(job, out)
    parts = partition.plan(job.recording, pool.workers)
    if len(parts) < 2:
        return json_lines(job, out)
    submit = pool.executor.submit
    futures = [submit(partition.explain_part, p, json_view.line, json_view.skim) for p in parts]
    done, stitch = None, partition.Stitch()
    try:
        for part, future in zip(parts, futures, strict=True):
            done = _explained(job.label, part, future.result)
            out.write(stitch.add(done))  # up to a line a later partition makes
    finally:
        for future in futures:
            future.cancel()
    assert done is not None
    warn_all(done.warnings)  # the last partition read every record: one job's warnings
    return "the exchanges as JSON lines"


def _explained(label: str, part: partition.Part, result: Any) -> partition.Done:
    """A partition's result; a failure as one line (a WiretapError as it is)."""
    try:
        done: partition.Done = result()
    except WiretapError:
        raise
    except Exception as error:  # a worker that died, an error in it: one line
        why = str(error) or type(error).__name__
        raise WiretapError(
            f"{label}: partition {part.index + 1} of {part.count} failed: {why}"
        ) from error
    return done


def har(job: Job, out: BinaryIO) -> str:
    """A HAR 1.2 file (views/har.py), read as a stream."""
    warnings: list[str] = []
    assembler, entries = write_har(iter_records(job.recording, warnings), out)
    warn_all(warnings + assembler.warnings)
    return f"{entries} HAR entries"


class TraceSink:
    """Where each batch of spans goes: a line of `out`, a collector at `url`, or both."""

    def __init__(self, out: BinaryIO | None, url: str | None) -> None:
        self.out, self.url = out, url
        self.spans = self.requests = 0

    def __call__(self, spans: list[Span]) -> None:
        from k8s_wiretap.views.otlp import export_request, post
        from k8s_wiretap.views.otlp.send import encoded

        body = encoded(export_request(spans))
        if self.out is not None:
            self.out.write(body + b"\n")
        if self.url is not None:
            post(self.url, body)
        self.spans += len(spans)
        self.requests += 1

    def send(self, records: Iterator[dict[str, Any]], warnings: list[str]) -> str:
        """Export `records` through this sink; what was sent, in a few words."""
        from k8s_wiretap.views.otlp import export_batches

        assembler = export_batches(records, self)
        warn_all(warnings + assembler.warnings)
        return f"{counted(self.spans, 'span')} in {counted(self.requests, 'request')}"


def otlp(job: Job, out: BinaryIO) -> str:
    """OTLP/HTTP JSON, one ExportTraceServiceRequest of up to 512 spans a line (the layout
    of the OpenTelemetry Collector's file exporter), read as a stream."""
    warnings: list[str] = []
    return TraceSink(out, None).send(iter_records(job.recording, warnings), warnings)


def _drawn(job: Job) -> Svg:
    """The picture `job` asks for (views/pictures)."""
    from k8s_wiretap.views.pictures import draw

    warnings: list[str] = []
    svg = draw(
        job.picture,
        lambda: iter_records(job.recording, warnings),
        exchange=job.exchange,
        span=job.span,
    )
    warn_all(warnings)
    return svg


def picture_svg(job: Job, out: BinaryIO) -> str:
    """The picture as SVG."""
    out.write(_drawn(job).render().encode())
    return "SVG picture"


def png_ready() -> None:
    """A PNG can be made here: a Chromium to render it is on PATH (ChromiumMissing if not)."""
    from k8s_wiretap.views.pictures.png import chromium

    chromium()


def picture_png(job: Job, out: BinaryIO) -> str:
    """The picture as PNG, rendered by headless Chromium."""
    from k8s_wiretap.views.pictures import png

    out.write(png(_drawn(job)))
    return "PNG picture"
