"""`k8s-wiretap import audit LOG... [--join RECORDING] -o OUT [--overwrite]`: the API
server's audit log as a recording (`importers.audit`), or joined with a proxy's recording
of the same cluster (`importers.join`, docs/importing.md).

The logs are read in the order given (a rotated log's older files first), one recording is
written. Every line that cannot be read is said on stderr (`FILE:LINE: skipped: REASON`)
and the import goes on; the last line says how many exchanges were written and how many
lines were skipped. A missing LOG, or an OUT that exists (without `--overwrite`) or
cannot be written, is a one-line error, exit 2, before anything is written
(`commands.importing`); so is a `--join` RECORDING that is missing or no recording (read
whole before OUT is made). Repeated or late events of an auditID, when the log has any,
are counted at the end of the last line; with `--join`, the proxied exchanges joined, those
whose Audit-ID the log does not hold, and those answered without one. Memory follows the
bounds `--max-line`, `--max-values`, `--max-open` and `--max-body` (`importers.limits`);
exchanges written unanswered past `--max-open` are counted at the end of the last line too.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from k8s_wiretap.capture.reader import RecordingError
from k8s_wiretap.commands.importing import (
    Progress,
    Skips,
    add_limits,
    add_output,
    checked,
    count,
    limits,
    said,
    so_far,
    unwritten,
    writing,
)
from k8s_wiretap.commands.warn import warn_all
from k8s_wiretap.errors import Stopped, UsageError, raising_on_signals
from k8s_wiretap.importers.audit import AuditImport, import_audit
from k8s_wiretap.importers.join import Joined, join_audit, proxied
from k8s_wiretap.importers.limits import Limits

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
    parser.add_argument(
        "--join",
        type=Path,
        metavar="RECORDING",
        help="a proxy's recording of the same cluster: OUT is RECORDING with each proxied "
        "exchange given its audit Event (by its Audit-ID answer), and the exchanges the "
        "proxy did not see from the log, marked as seen only there",
    )
    add_output(parser)
    add_limits(parser, "max_line", "max_values", "max_open", "max_body")
    parser.set_defaults(handler=_import)


def _ignored(importer: AuditImport) -> tuple[str, ...]:
    ignored = count(importer.ignored, "repeated or late audit event")
    said: tuple[str, ...] = (f"{ignored} ignored",) if importer.ignored else ()
    if importer.evicted:
        open_ = count(importer.evicted, "exchange")
        said += (f"{open_} written unanswered past --max-open {importer.max_open:,}",)
    return said


def _import(args: argparse.Namespace) -> int:
    bounds = limits(args)
    if args.join is not None:
        return _join(args, bounds)
    checked("audit", args.logs, args)
    with writing("audit", args, "audit log") as written, Progress(lambda: so_far("audit", written)):
        importer = import_audit(args.logs, written, bounds)
    return said(args, written, count(importer.events, "audit event"), "line", *_ignored(importer))


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
                on_skip=Skips(),
                bounds=bounds,
            )
    except Stopped as stopped:
        why = f"stopped by {stopped.signal.name}: {args.output} not written"
        raise Stopped(stopped.signal, f"import audit: {why}") from None
    except OSError as error:
        raise unwritten("audit", args.output, error) from error
    return _said(args, done)


def _said(args: argparse.Namespace, done: Joined) -> int:
    """The last line: the exchanges seen only in the log and the lines skipped, as the
    import says them, then the join's counts."""
    events = count(done.importer.events, "audit event")
    joined = (
        f"{count(done.joined, 'proxied exchange')} of {args.join} joined, "
        f"{done.unmatched:,} not in the log, {done.without:,} without an Audit-ID"
    )
    origin = f"the audit log only ({events})"
    return said(args, done.sink, origin, "line", joined, *_ignored(done.importer))
