"""`k8s-wiretap import audit LOG... [--since TIME] [--until TIME] [--join RECORDING] -o OUT
[--overwrite] [--jobs N | --dask ADDRESS]`: the API server's audit log as a recording
(`importers.audit`), or joined with a proxy's recording of the same cluster
(`importers.join`, docs/importing.md).

`--jobs N` (default: the cores) and `--dask ADDRESS` (`commands.jobs`) split the import
into partitions run at once (`importers.partition`: plain files of lines cut at line ends
into ranges; standard input and gzip files of lines read here and cut into chunks as they
are read; a file of JSON documents whole), put back together into the recording one job
writes, and the same stderr; below twice `partition.SMALLEST` bytes of files (and of each
stream), and with `--jobs 1`, the import is one job in this process. A local pool's
partitions write their records (and a stream's chunks are written) to a hidden folder
beside OUT, removed at the end. A partition that fails (a worker killed) is one line,
exit 1, no OUT.

A LOG of `-` is standard input, read as a stream (`aws logs`, `gcloud logging read`, ...
piped in); a file named `-` is `./-`. `--since`/`--until` keep the exchanges whose requests
were received in that range (`importers.timerange`); each file's report counts the events
outside it. A bad time, or `-` given twice, is a one-line error, exit 2.

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
import contextlib
import multiprocessing
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mitmproxy.utils import human

from k8s_wiretap.capture.reader import RecordingError
from k8s_wiretap.commands import jobs
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
from k8s_wiretap.errors import Stopped, UsageError, WiretapError, raising_on_signals
from k8s_wiretap.importers import partition
from k8s_wiretap.importers.audit import STDIN, AuditImport, FileReport, import_audit
from k8s_wiretap.importers.join import Joined, join_audit, proxied
from k8s_wiretap.importers.limits import Limits
from k8s_wiretap.importers.timerange import TimeRange, moment
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
        "exits 1 when a file holds nothing importable. A LOG of - is standard input.",
    )
    parser.add_argument(
        "logs",
        nargs="+",
        type=_log_path,
        metavar="LOG",
        help="an audit log file, or - for standard input (read as a stream: pipe "
        "`aws logs`, `gcloud logging read`, `logcli`, ... into it)",
    )
    parser.add_argument(
        "--since",
        metavar="TIME",
        help="keep only the exchanges whose requests were received at TIME or after: an "
        "RFC 3339 time (no offset: UTC) or a duration before now (90s, 15m, 1h30m, 2d)",
    )
    parser.add_argument(
        "--until",
        metavar="TIME",
        help="keep only the exchanges whose requests were received before TIME (as "
        "--since); an exchange received before it and answered after is kept whole",
    )
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
    jobs.add_options(parser)
    parser.add_argument(  # the tests' and benchmarks' own: ranges this small, whatever the input
        "--partition-size", default=None, metavar="SIZE", help=argparse.SUPPRESS
    )
    parser.set_defaults(handler=_import)


def _ignored(importer: AuditImport) -> tuple[str, ...]:
    ignored = counted(importer.ignored, "repeated or late audit event")
    said: tuple[str, ...] = (f"{ignored} ignored",) if importer.ignored else ()
    if importer.evicted:
        open_ = counted(importer.evicted, "exchange")
        said += (f"{open_} written unanswered past --max-open {importer.max_open:,}",)
    return said


def _log_path(text: str) -> Path:
    """argparse's `type` for a LOG: `-` is standard input (`STDIN`); a file named `-` is
    given as `./-` (a path, not STDIN)."""
    if text == "-":
        return STDIN
    path = recording_path(text)
    return path.absolute() if path == STDIN else path


def _files(args: argparse.Namespace) -> list[Path]:
    """The LOGs that are files (checked as files are); standard input at most once."""
    if args.logs.count(STDIN) > 1:
        raise UsageError("import audit: - (standard input) is given more than once")
    return [path for path in args.logs if path != STDIN]


def _span(args: argparse.Namespace) -> TimeRange | None:
    """The time range of `--since`/`--until` (None without either); a bad one is a
    one-line error."""
    if args.since is None and args.until is None:
        return None
    now, bounds = time.time(), {}
    for flag in ("since", "until"):
        text = getattr(args, flag)
        if text is None:
            continue
        try:
            bounds[flag] = moment(text, now)
        except ValueError as error:
            raise UsageError(f"import audit: --{flag} {error}") from None
    span = TimeRange(bounds.get("since"), bounds.get("until"))
    if span.since is not None and span.until is not None and span.since >= span.until:
        raise UsageError(f"import audit: --since {args.since} is not before --until {args.until}")
    if args.join is not None:
        raise UsageError("import audit: --since and --until do not go with --join")
    return span


def _import(args: argparse.Namespace) -> int:
    bounds = limits(args)
    span = _span(args)
    if args.join is not None:
        return _join(args, bounds)
    checked("audit", _files(args), args)
    size = _partition_size(args)
    if not _parallel(args, size):
        if args.dask is not None:  # reached whatever the size: a wrong address is an error
            with jobs.pool(args):
                pass
        with (
            writing("audit", args, "audit log", on_skip=None) as written,
            Progress(lambda: so_far("audit", written)),
        ):
            importer = import_audit(args.logs, written, bounds, span)
    else:
        # a local pool's workers are forked from this process, which has the partitions'
        # code and hashes as the stitch does (`partition.Part.salt`); when they cannot be
        # (a thread runs here), from a server that has imported that code once (each would
        # take some 0.3 s of CPU to import it)
        preload = ["__main__", partition.__name__]
        multiprocessing.get_context("forkserver").set_forkserver_preload(preload)
        with contextlib.ExitStack() as stack:
            pool = stack.enter_context(jobs.pool(args, fork=True))
            # ranges for as many partitions at once as the pool runs
            # (a stream too small to be worth the workers imported here, unless sized)
            whole = 0 if size else 2 * partition.SMALLEST
            planned = partition.plan(args.logs, bounds, size or partition.SIZE, pool.workers, whole)
            written = stack.enter_context(writing("audit", args, "audit log", on_skip=None))
            stack.enter_context(Progress(lambda: so_far("audit", written)))
            stitch = partition.Stitch(written, bounds, span)
            # a local pool's partitions write their records beside OUT, the stitch copies
            # them in (no pipe between); Dask's workers may be elsewhere: theirs come back
            folder = None if args.dask else stack.enter_context(_parts_folder(args.output))
            try:
                importer = stitch.run(planned, pool.executor, pool.workers + 1, folder)
            except (OSError, Stopped):
                raise
            except Exception as error:  # a worker that died, or could not run a partition
                why = escape_controls(str(error) or type(error).__name__)
                raise WiretapError(
                    f"import audit: a partition failed on {pool.where}: {why} "
                    f"({args.output} not written)"
                ) from error
    empty = _reported(importer.files)
    said(args, written, counted(importer.events, "audit event"), "line", *_ignored(importer))
    return 1 if empty else 0


@contextlib.contextmanager
def _parts_folder(output: Path) -> Iterator[str]:
    """A hidden folder beside OUT (0700) for the partitions' records, removed after."""
    folder = tempfile.mkdtemp(prefix=f".{output.name}.", suffix=".parts", dir=output.parent)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _partition_size(args: argparse.Namespace) -> int | None:
    """The hidden `--partition-size` (bytes; `1m`), None without it."""
    if args.partition_size is None:
        return None
    try:
        size = human.parse_size(args.partition_size)
    except ValueError as error:
        raise UsageError(f"--partition-size {args.partition_size!r}: {error}") from error
    if size is None or size < 1:
        raise UsageError(f"--partition-size {args.partition_size}: must be 1 or more")
    return size


def _parallel(args: argparse.Namespace, size: int | None) -> bool:
    """Whether the import is split into partitions run by `--jobs`/`--dask`: more than one
    job asked for (the default: the cores), and input enough to be worth the processes
    (twice `partition.SMALLEST`, unless `--partition-size` says how small), or a stream
    (standard input, a gzip file), whose size is known once it is read."""
    if not jobs.many(args):
        return False
    if size is not None or partition.streamed(args.logs):
        return True
    return partition.splittable(args.logs) >= 2 * partition.SMALLEST


def _reported(files: list[FileReport]) -> bool:
    """Say on stderr, for each file, the shape it was read as and its events, then a line
    for each reason something was skipped (how many, the first place, what it said); for
    a file with nothing importable, one line of why. Whether any file had nothing."""
    empty = False
    for report in files:
        name = "- (standard input)" if report.path == STDIN else str(report.path)
        if report.events or report.outside:
            shape = report.shape or "no shape"
            line = f"{name}: {shape} ({report.framing}), {counted(report.events, 'event')}"
            if report.outside:
                line += _outside(report)
        else:
            empty = True
            line = f"{name}: nothing importable: {report.nothing()}"
        print(escape_controls(line), file=sys.stderr)
        for n, where, reason in report.skips.values():
            place = where.removeprefix(f"{report.path}:")
            first = f"first at line {place}" if place != str(report.path) else "the file"
            line = f"  {counted(n, 'skipped', 'skipped')}, {first}: {reason}"
            print(escape_controls(line), file=sys.stderr)
    return empty


def _outside(report: FileReport) -> str:
    """What the report line adds for the events outside the time range."""
    unparsed = f"{report.unparsed:,} of them skipped unparsed, by their time alone"
    return f" in the time range, {report.outside:,} outside it ({unparsed})"


def _join(args: argparse.Namespace, bounds: Limits) -> int:
    checked("audit", [*_files(args), args.join], args)
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
