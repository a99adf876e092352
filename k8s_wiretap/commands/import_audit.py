"""`k8s-wiretap import audit LOG... [--join RECORDING] -o OUT [--overwrite]`: the API
server's audit log as a recording (`importers.audit`), or joined with a proxy's recording
of the same cluster (`importers.join`, docs/importing.md).

The logs are read in the order given (a rotated log's older files first), one recording is
written. For each file, stderr says the shape it was read as and its events, then a line
for each reason something was skipped (how many, the first line, what it said: the import
goes on past every skipped line), or, for a file with nothing importable, the closest shape
and why it did not fit (the exit status is then 1, the recording written); the last line
says how many exchanges were written and how many lines were skipped. A missing LOG, or an
OUT that exists (without `--overwrite`) or cannot be written, is a one-line error, exit 2,
before anything is written (`commands.importing`); so is a `--join` RECORDING that is
missing or no recording (read whole before OUT is made). Repeated or late events of an
auditID, when the log has any, are counted at the end of the last line; with `--join`, the
proxied exchanges joined, those whose Audit-ID the log does not hold, and those answered
without one. Memory follows the bounds `--max-line`, `--max-values`, `--max-open` and
`--max-body` (`importers.limits`); exchanges written unanswered past `--max-open` are
counted at the end of the last line too.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from k8s_wiretap.capture.reader import RecordingError
from k8s_wiretap.commands.bundled import recording_path
from k8s_wiretap.commands.importing import (
    Progress,
    add_limits,
    add_output,
    checked,
    limits,
    said,
    so_far,
    unwritten,
    writing,
)
from k8s_wiretap.commands.warn import warn_all
from k8s_wiretap.errors import Stopped, UsageError, raising_on_signals
from k8s_wiretap.importers.audit import AuditImport, FileReport, import_audit
from k8s_wiretap.importers.join import Joined, join_audit, proxied
from k8s_wiretap.importers.limits import Limits
from k8s_wiretap.wire.controls import escape_controls
from k8s_wiretap.wire.words import counted

__all__ = ["register"]


def register(sources: Any) -> None:
    parser = sources.add_parser(
        "audit",
        help="the API server's audit log, in any shape it is kept in (docs/importing.md)",
        description="Read audit.k8s.io Events in any shape they are kept in (the API "
        "server's own, EKS CloudWatch, AKS, GKE, OpenShift Logging, shippers and stores; "
        "told by content; gzip as is) and write them as a recording: one exchange per "
        "request, the user as who sent it, bodies when the level logs them, Secrets "
        "redacted (docs/importing.md). Says each file's shape and a count per skip reason; "
        "exits 1 when a file holds nothing importable.",
    )
    parser.add_argument("logs", nargs="+", type=recording_path, metavar="LOG")
    parser.add_argument(
        "--join",
        type=recording_path,
        metavar="RECORDING",
        help="a proxy's recording of the same cluster: OUT is RECORDING with each proxied "
        "exchange given its audit Event (by its Audit-ID answer), and the exchanges the "
        "proxy did not see from the log, marked as seen only there",
    )
    add_output(parser)
    add_limits(parser, "max_line", "max_values", "max_open", "max_body")
    parser.set_defaults(handler=_import)


def _ignored(importer: AuditImport) -> tuple[str, ...]:
    ignored = counted(importer.ignored, "repeated or late audit event")
    said: tuple[str, ...] = (f"{ignored} ignored",) if importer.ignored else ()
    if importer.evicted:
        open_ = counted(importer.evicted, "exchange")
        said += (f"{open_} written unanswered past --max-open {importer.max_open:,}",)
    return said


def _import(args: argparse.Namespace) -> int:
    bounds = limits(args)
    if args.join is not None:
        return _join(args, bounds)
    checked("audit", args.logs, args)
    with (
        writing("audit", args, "audit log", on_skip=None) as written,
        Progress(lambda: so_far("audit", written)),
    ):
        importer = import_audit(args.logs, written, bounds)
    empty = _reported(importer.files)
    said(args, written, counted(importer.events, "audit event"), "line", *_ignored(importer))
    return 1 if empty else 0


def _reported(files: list[FileReport]) -> bool:
    """Say on stderr, for each file, the shape it was read as and its events, then a line
    for each reason something was skipped (how many, the first place, what it said); for
    a file with nothing importable, one line of why. Whether any file had nothing."""
    empty = False
    for report in files:
        if report.events:
            shape = report.shape or "no shape"
            line = f"{report.path}: {shape} ({report.framing}), {counted(report.events, 'event')}"
        else:
            empty = True
            line = f"{report.path}: nothing importable: {report.nothing()}"
        print(escape_controls(line), file=sys.stderr)
        for n, where, reason in report.skips.values():
            place = where.removeprefix(f"{report.path}:")
            first = f"first at line {place}" if place != str(report.path) else "the file"
            line = f"  {counted(n, 'skipped', 'skipped')}, {first}: {reason}"
            print(escape_controls(line), file=sys.stderr)
    return empty


def _join(args: argparse.Namespace, bounds: Limits) -> int:
    checked("audit", [*args.logs, args.join], args)
    try:
        seen = proxied(args.join)
    except RecordingError as error:
        raise UsageError(f"import audit: --join {error}") from error
    warn_all(seen.warnings)
    try:
        with raising_on_signals():
            done = join_audit(
                args.logs,
                seen,
                args.output,
                overwrite=args.overwrite,
                on_skip=None,
                bounds=bounds,
            )
    except Stopped as stopped:
        why = f"stopped by {stopped.signal.name}: {args.output} not written"
        raise Stopped(stopped.signal, f"import audit: {why}") from None
    except OSError as error:
        raise unwritten("audit", args.output, error) from error
    empty = _reported(done.importer.files)
    _said(args, done)
    return 1 if empty else 0


def _said(args: argparse.Namespace, done: Joined) -> int:
    """The last line: the exchanges seen only in the log and the lines skipped, as the
    import says them, then the join's counts."""
    events = counted(done.importer.events, "audit event")
    joined = (
        f"{counted(done.joined, 'proxied exchange')} of {args.join} joined, "
        f"{done.unmatched:,} not in the log, {done.without:,} without an Audit-ID"
    )
    origin = f"the audit log only ({events})"
    return said(args, done.sink, origin, "line", joined, *_ignored(done.importer))
