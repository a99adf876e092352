"""The output formats of `export` and `explain --format`: one table (FORMATS), one rule.

Each format is an entry: its name, its writer (`writers`), its help, and whether it may go
to stdout. `explain --format NAME` offers every format that may go to stdout and writes it
there; `export --NAME OUT` offers every format and writes it to the file OUT (`-`: stdout,
for those that may go there), by the one rule of `outfile` (never the recording, never an
existing file without `--overwrite`, whole or not at all). The commands' options, choices
and help are made from the table: a new format is one entry here and one writer.

What was written is said on stderr once a file is whole (`k8s-wiretap: WHAT to OUT`);
what goes to stdout is its own evidence and is said nowhere else.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from k8s_wiretap.commands import outfile, writers
from k8s_wiretap.commands.writers import Job

__all__ = ["FORMATS", "Format", "Job", "check", "emit", "named", "to_stdout"]


def _nothing_beside(_out: Path) -> tuple[Path, ...]:
    return ()


def _ready() -> None:
    """Any format but PNG can be made anywhere."""


@dataclass(frozen=True)
class Format:
    """One output format.

    `write` writes it (see `writers`); `stdout`: it may go to stdout; `draws`: it is a
    picture (`--picture`, `--exchange` and `--range` choose which); `beside`: the files it
    writes beside OUT, checked by the same rule as OUT; `ready` raises (a UsageError) when
    the format cannot be made on this machine, before anything is written."""

    name: str
    help: str
    write: Callable[[Job, BinaryIO], str]
    stdout: bool = True
    draws: bool = False
    beside: Callable[[Path], tuple[Path, ...]] = _nothing_beside
    ready: Callable[[], object] = _ready


FORMATS = (
    Format("story", "what each kubectl command set off, in words", writers.story),
    Format(
        "markdown",
        "the story as a Markdown handout, its pictures first (written beside OUT as "
        "OUT-map.svg and OUT-chain.svg, or embedded on stdout)",
        writers.markdown,
        beside=writers.handout_files,
    ),
    Format("lines", "one line per exchange", writers.lines),
    Format(
        "json",
        "one JSON object per exchange: the decoded request, bodies, patches (replayed on "
        "the object as it was before) and watch events",
        writers.json_lines,
    ),
    Format(
        "har",
        "a HAR 1.2 file: one entry per exchange, bodies as JSON, watch events in _k8sWiretap",
        writers.har,
    ),
    Format(
        "otlp",
        "OpenTelemetry traces as OTLP JSON, one ExportTraceServiceRequest a line: one span "
        "per exchange, one trace per causal chain",
        writers.otlp,
    ),
    Format("svg", "a picture (--picture) as SVG", writers.picture_svg, stdout=False, draws=True),
    Format(
        "png",
        "a picture (--picture) as PNG, rendered by headless Chromium",
        writers.picture_png,
        stdout=False,
        draws=True,
        ready=writers.png_ready,
    ),
)


def named(name: str) -> Format:
    """The format called `name` (KeyError if none is)."""
    return {fmt.name: fmt for fmt in FORMATS}[name]


def to_stdout() -> tuple[Format, ...]:
    """The formats that may go to stdout (`explain --format`'s choices), in table order."""
    return tuple(fmt for fmt in FORMATS if fmt.stdout)


def check(fmt: Format, job: Job) -> None:
    """Before anything is read or written: a UsageError when `job` cannot be made (the
    format cannot be made here, or its files break the rule of `outfile`)."""
    fmt.ready()
    if job.out is None:
        return
    for path in (job.out, *fmt.beside(job.out)):
        outfile.check(job.label, path, job.recording, overwrite=job.overwrite)


def emit(fmt: Format, job: Job) -> None:
    """Write `job` in `fmt`: to stdout, or to its file by the rule of `outfile`."""
    if job.out is None:
        sys.stdout.flush()  # what was printed before goes first
        fmt.write(job, sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return
    with outfile.new_file(job.label, job.out, overwrite=job.overwrite) as out:
        what = fmt.write(job, out)
    outfile.said(what, job.out)
