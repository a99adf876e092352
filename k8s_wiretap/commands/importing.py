"""`k8s-wiretap import SOURCE ...`: another tool's records made a recording that `explain`,
`replay` and the rest read as the proxy's own.

Each source has a module of its own, `commands/import_<source>.py`, whose `register(sources)`
adds its subcommand; `SOURCES` lists those that exist, in the order `--help` shows them.
What they share is here: the `-o RECORDING [--overwrite]` options (`add_output`), the checks
made before anything is written (`checked`: each input a readable file, the output none of
them and free unless `--overwrite`; one-line errors, exit 2), the sink (`sink`: each
skipped part said on stderr as it is found) and the last line (`said`: the counts in words,
"1 exchange", "2 exchanges").

`writing` is where an import runs: its recording is written under a temporary name and
renamed to OUT once complete (`importers.sink`). A write that fails (a full disk, a file
too large) is one line, exit 1, and leaves no OUT (and an existing one as it was); SIGTERM
or SIGINT ends OUT with a note that the signal cut it (every reader says so), then one
line, exit 128 + the signal's number.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from k8s_wiretap.capture.outputs import reason, recording_problem
from k8s_wiretap.errors import Stopped, UsageError, WiretapError, raising_on_signals
from k8s_wiretap.importers.har import Malformed
from k8s_wiretap.importers.sink import Sink
from k8s_wiretap.wire.controls import escape_controls

__all__ = [
    "SOURCES",
    "add_output",
    "checked",
    "count",
    "imported",
    "register",
    "said",
    "sink",
    "unwritten",
    "writing",
]

# each one's module: k8s_wiretap.commands.import_<source>
SOURCES: tuple[str, ...] = ("audit", "har", "mitmproxy")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "import",
        help="make a recording of another tool's records (audit logs, HAR, mitmproxy flows)",
        description="Read another tool's records and write them as a recording, redacted "
        "as the proxy redacts (docs/importing.md).",
    )
    sources = parser.add_subparsers(dest="source", metavar="SOURCE", required=True)
    for source in SOURCES:
        importlib.import_module(f"k8s_wiretap.commands.import_{source}").register(sources)


def add_output(parser: argparse.ArgumentParser) -> None:
    """`-o RECORDING` (required) and `--overwrite`."""
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="RECORDING")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing RECORDING")


def count(number: int, singular: str, plural: str = "") -> str:
    """`number` and its noun: "1 exchange", "2 exchanges", "3 entries" (with `plural`)."""
    return f"{number:,} {singular if number == 1 else plural or singular + 's'}"


def checked(name: str, inputs: Sequence[Path], args: argparse.Namespace) -> None:
    """The inputs are readable files and `args.output` is none of them and may be written."""
    for path in inputs:
        if not path.is_file():
            what = "is not a file" if path.exists() else "does not exist"
            raise UsageError(f"import {name}: {path} {what}")
        if not os.access(path, os.R_OK):
            raise UsageError(f"import {name}: cannot read {path}")
    output = args.output
    if any(output.resolve() == path.resolve() for path in inputs):
        raise UsageError(f"import {name}: -o {output} is a file it reads")
    problem = recording_problem(output, overwrite=args.overwrite, hint="--overwrite")
    if problem:
        raise UsageError(f"import {name}: -o {problem}")


def _skipped(line: str) -> None:
    print(escape_controls(line), file=sys.stderr, flush=True)


def sink(name: str, args: argparse.Namespace, source: str) -> Sink:
    """The sink writing `args.output`; each skipped part said on stderr as it is found."""
    try:
        return Sink(args.output, source=source, overwrite=args.overwrite, on_skip=_skipped)
    except OSError as error:
        raise UsageError(f"import {name}: -o {args.output}: {reason(error)}") from error


@contextmanager
def writing(name: str, args: argparse.Namespace, source: str) -> Iterator[Sink]:
    """The sink writing `args.output`, for the import in the block: OUT appears only once
    it is whole, or cut by a signal and ended with a note that says so."""
    with raising_on_signals():
        written = sink(name, args, source)
        try:
            with written:
                yield written
        except Stopped as stopped:
            raise Stopped(stopped.signal, _stopped(name, stopped, written)) from None
        except OSError as error:
            raise unwritten(name, args.output, error) from error


def _stopped(name: str, stopped: Stopped, written: Sink) -> str:
    """What a signal left of the import's OUT, in words."""
    out, by = written.path, f"import {name}: stopped by {stopped.signal.name}"
    if written.outcome == "cut":
        held = count(written.exchanges, "exchange")
        return f"{by}: {out} holds the {held} written before, and ends with a note that it was cut"
    if written.outcome == "whole":
        return f"{by} once {out} was written whole"
    return f"{by}: {out} not written"


def unwritten(name: str, output: Path, error: OSError) -> WiretapError:
    """The one-line error of an import whose OUT could not be written whole (exit 1)."""
    where = error.filename if error.filename else f"-o {output}"
    return WiretapError(f"import {name}: {where}: {reason(error)} ({output} not written)")


def said(args: argparse.Namespace, written: Sink, origin: str, parts: str, *more: str) -> int:
    """The last line: `OUT: N exchanges from ORIGIN; K unreadable PARTS skipped[; MORE]`
    (`parts`: the noun counted, "line" or "entr|y|ies", singular|plural)."""
    singular, _, plural = parts.partition("|")
    skipped = count(written.skipped, f"unreadable {singular}", plural and f"unreadable {plural}")
    exchanges = f"{count(written.exchanges, 'exchange')} from {origin}"
    print(f"{args.output}: " + "; ".join((exchanges, f"{skipped} skipped", *more)), file=sys.stderr)
    return 0


def imported(
    args: argparse.Namespace,
    name: str,
    source: str,
    reader: Callable[[Path], Callable[[Sink], int]],
    parts: str,
) -> int:
    """`import NAME FILE`: FILE checked by `reader(FILE)` before anything is written (a
    `Malformed` FILE is a one-line error), then written to `args.output` by what it
    returns; said in one last line (`parts` as `said` takes it)."""
    checked(name, [args.file], args)
    try:
        write = reader(args.file)
    except Malformed as error:
        raise UsageError(f"import {name}: {error}") from error
    with writing(name, args, source) as written:
        write(written)
    return said(args, written, str(args.file), parts)
