"""`k8s-wiretap import har FILE -o RECORDING [--overwrite]`: a HAR 1.2 file as a recording
(`importers.har`, docs/importing.md).

Every entry that cannot be read is said on stderr (`FILE:entry N: skipped: REASON`) and the
import goes on; the last line says how many exchanges were written and how many entries
were skipped. A missing FILE, a FILE that is no HAR file, or a RECORDING that exists
(without `--overwrite`) or cannot be written, is a one-line error, exit 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from k8s_wiretap.capture.outputs import reason, recording_problem
from k8s_wiretap.errors import UsageError
from k8s_wiretap.importers.har import Malformed, har_reader
from k8s_wiretap.importers.sink import Sink

__all__ = ["imported", "register"]


def register(sources: Any) -> None:
    parser = sources.add_parser(
        "har",
        help="a HAR 1.2 file (browser devtools, HAR tools, export --har)",
        description="Read a HAR 1.2 file and write its entries as a recording: one exchange "
        "per entry, watch responses split into events, Secrets redacted; what export --har "
        "wrote in _k8sWiretap read back (docs/importing.md).",
    )
    parser.add_argument("file", type=Path, metavar="FILE")
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="RECORDING")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing RECORDING")
    parser.set_defaults(handler=_import)


def _import(args: argparse.Namespace) -> int:
    return imported(args, "har", "HAR file", har_reader, "entries")


def _skipped(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def imported(
    args: argparse.Namespace,
    name: str,
    source: str,
    reader: Callable[[Path], Callable[[Sink], int]],
    parts: str,
) -> int:
    """`import NAME`: FILE, checked by `reader(FILE)` before anything is written, then
    written to `args.output` by what it returns; said in one last line (`parts`: what FILE
    is made of, "entries" or "flows")."""
    if not args.file.is_file():
        what = "is not a file" if args.file.exists() else "does not exist"
        raise UsageError(f"import {name}: {args.file} {what}")
    if args.output.resolve() == args.file.resolve():
        raise UsageError(f"import {name}: -o {args.output} is the file read")
    problem = recording_problem(args.output, overwrite=args.overwrite, hint="--overwrite")
    if problem:
        raise UsageError(f"import {name}: -o {problem}")
    try:
        write = reader(args.file)
    except Malformed as error:
        raise UsageError(f"import {name}: {error}") from error
    try:
        sink = Sink(args.output, source=source, overwrite=args.overwrite, on_skip=_skipped)
    except OSError as error:
        raise UsageError(f"import {name}: -o {args.output}: {reason(error)}") from error
    with sink:
        write(sink)
    print(
        f"{args.output}: {sink.exchanges:,} exchanges from {args.file}; "
        f"{sink.skipped:,} unreadable {parts} skipped",
        file=sys.stderr,
    )
    return 0
