"""`k8s-wiretap import audit LOG... -o RECORDING [--overwrite]`: the API server's audit log
as a recording (`importers.audit`, docs/importing.md).

The logs are read in the order given (a rotated log's older files first), one recording is
written. Every line that cannot be read is said on stderr (`FILE:LINE: skipped: REASON`)
and the import goes on; the last line says how many exchanges were written and how many
lines were skipped. A missing LOG, or a RECORDING that exists (without `--overwrite`) or
cannot be written, is a one-line error, exit 2, before anything is written.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from k8s_wiretap.capture.outputs import reason, recording_problem
from k8s_wiretap.errors import UsageError
from k8s_wiretap.importers.audit import import_audit
from k8s_wiretap.importers.sink import Sink

__all__ = ["register"]


def register(sources: Any) -> None:
    parser = sources.add_parser(
        "audit",
        help="the API server's audit log (audit.k8s.io/v1 Events; EventList, wrapped, gzip)",
        description="Read audit.k8s.io/v1 Events (one a line, EventList batches, or under "
        "log, message or properties.log; gzip as is) and write them as a recording: one "
        "exchange per auditID, the user as who sent it, bodies when the level logs them, "
        "Secrets redacted (docs/importing.md).",
    )
    parser.add_argument("logs", nargs="+", type=Path, metavar="LOG")
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="RECORDING")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing RECORDING")
    parser.set_defaults(handler=_import)


def _checked(args: argparse.Namespace) -> None:
    for log in args.logs:
        if not log.is_file():
            what = "is not a file" if log.exists() else "does not exist"
            raise UsageError(f"import audit: {log} {what}")
        if not os.access(log, os.R_OK):
            raise UsageError(f"import audit: cannot read {log}")
    output = args.output
    if any(output.resolve() == log.resolve() for log in args.logs):
        raise UsageError(f"import audit: -o {output} is one of the logs")
    problem = recording_problem(output, overwrite=args.overwrite, hint="--overwrite")
    if problem:
        raise UsageError(f"import audit: -o {problem}")


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _skipped(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _import(args: argparse.Namespace) -> int:
    _checked(args)
    try:
        sink = Sink(args.output, source="audit log", overwrite=args.overwrite, on_skip=_skipped)
    except OSError as error:
        raise UsageError(f"import audit: -o {args.output}: {reason(error)}") from error
    with sink:
        importer = import_audit(args.logs, sink)
    exchanges, events = _count(sink.exchanges, "exchange"), _count(importer.events, "audit event")
    skipped = _count(sink.skipped, "unreadable line")
    print(f"{args.output}: {exchanges} from {events}; {skipped} skipped", file=sys.stderr)
    return 0
