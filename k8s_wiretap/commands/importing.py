"""`k8s-wiretap import SOURCE ...`: another tool's records made a recording that `explain`,
`replay` and the rest read as the proxy's own.

Each source has a module of its own, `commands/import_<source>.py`, whose `register(sources)`
adds its subcommand; `SOURCES` lists those that exist, in the order `--help` shows them.
What they share is here: the `-o RECORDING [--overwrite]` options (`add_output`), the
bounds of memory (`add_limits`, `limits`: `importers.limits`), the checks made before
anything is written (`checked`: each input a readable file, the output none of them and
free unless `--overwrite`; one-line errors, exit 2), the sink (`sink`: the first SAID
skipped parts said on stderr as they are found, then one line that the rest are counted),
on a terminal a line of progress every 2 s (`Progress`), and the last line (`said`: the
counts in words, "1 exchange", "2 exchanges").

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
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mitmproxy.utils import human

from k8s_wiretap.capture.outputs import reason, recording_problem
from k8s_wiretap.capture.recorder import DEFAULT_MAX_BODY
from k8s_wiretap.errors import Stopped, UsageError, WiretapError, raising_on_signals
from k8s_wiretap.importers import limits as bounds
from k8s_wiretap.importers.har import Malformed
from k8s_wiretap.importers.sink import SKIP_NOTES, Sink
from k8s_wiretap.wire.controls import escape_controls
from k8s_wiretap.wire.words import counted

__all__ = [
    "SOURCES",
    "Progress",
    "Skips",
    "add_limits",
    "add_output",
    "checked",
    "imported",
    "limits",
    "register",
    "said",
    "sink",
    "so_far",
    "unwritten",
    "writing",
]

# each one's module: k8s_wiretap.commands.import_<source>
SOURCES: tuple[str, ...] = ("audit", "har", "mitmproxy")
SAID = 100  # skipped parts said on stderr one by one, at most
CLEAR = "\r\x1b[K"  # back to the start of the line, and the line cleared
# Each bound's flag: its default, whether it is a size (`1m`) or a count, and its help.
LIMITS: dict[str, tuple[int, bool, str]] = {
    "max_line": (bounds.MAX_LINE, True, "largest line of a log read; a longer one is skipped"),
    "max_values": (
        bounds.MAX_VALUES,
        False,
        "most JSON values a line may hold (by its commas and brackets); one of more is skipped",
    ),
    "max_open": (
        bounds.MAX_OPEN,
        False,
        "most exchanges held open at once; past it the oldest is written unanswered",
    ),
    "max_flow": (bounds.MAX_FLOW, True, "largest flow read; a larger one is skipped unread"),
    "max_file": (bounds.MAX_FILE, True, "largest HAR file read (it is read whole)"),
    "max_body": (
        DEFAULT_MAX_BODY,
        True,
        "largest body kept whole (and inflated, with a content-encoding); a larger one "
        "keeps its first SIZE bytes",
    ),
}


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


def add_limits(parser: argparse.ArgumentParser, *names: str) -> None:
    """The flags of the bounds `names` (`LIMITS`' keys: `--max-line` for `max_line`)."""
    for name in names:
        default, size, help = LIMITS[name]
        said = f"{default:,} bytes" if size else f"{default:,}"
        parser.add_argument(
            "--" + name.replace("_", "-"),
            default=str(default),
            metavar="SIZE" if size else "N",
            help=f"{help} (default {said}{', or e.g. 1m' if size else ''})",
        )


def _bound(args: argparse.Namespace, name: str) -> int:
    value, (_, size, _) = getattr(args, name), LIMITS[name]
    flag = "--" + name.replace("_", "-")
    try:
        number = human.parse_size(value) if size else int(value)
    except ValueError as error:
        raise UsageError(f"{flag} {value!r}: {error}") from error
    if number is None or number < 1:
        raise UsageError(f"{flag} {value}: must be 1 or more")
    return number


def limits(args: argparse.Namespace) -> bounds.Limits:
    """The bounds the flags of `add_limits` gave (the defaults for those not added)."""
    given = {name: _bound(args, name) for name in LIMITS if hasattr(args, name)}
    given.pop("max_body", None)
    return bounds.Limits(**given)


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


class Progress:
    """On a terminal, a line on stderr every EVERY seconds saying how far the import has
    come (`said()`), from a thread of its own (nothing is added to the import's own work),
    cleared at the end; elsewhere, nothing."""

    EVERY = 2.0

    def __init__(self, said: Callable[[], str]) -> None:
        self._said = said
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = time.monotonic()

    def __enter__(self) -> Progress:
        if sys.stderr.isatty():
            self._thread = threading.Thread(target=self._run, name="progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            print(CLEAR, end="", file=sys.stderr, flush=True)

    def _run(self) -> None:
        while not self._stop.wait(self.EVERY):
            seconds = int(time.monotonic() - self._started)
            line = f"{self._said()} ({seconds // 60}m {seconds % 60:02d}s)"
            print(f"{CLEAR}{line}", end="", file=sys.stderr, flush=True)


class Skips:
    """Says skipped parts on stderr: the first SAID one by one, then one line that the
    rest are only counted (a log can hold millions: a line each would bury the rest)."""

    def __init__(self) -> None:
        self.told = 0

    def __call__(self, line: str) -> None:
        self.told += 1
        clear = CLEAR if sys.stderr.isatty() else ""  # over a `Progress` line
        if self.told <= SAID:
            print(clear + escape_controls(line), file=sys.stderr, flush=True)
        elif self.told == SAID + 1:
            print(
                f"{clear}... more skipped parts are not said here: the last line counts them, "
                f"and the recording notes the first {SKIP_NOTES:,}",
                file=sys.stderr,
                flush=True,
            )


_SAID: Any = object()  # `sink`'s default: skipped parts said by `Skips`


def sink(name: str, args: argparse.Namespace, source: str, on_skip: Any = _SAID) -> Sink:
    """The sink writing `args.output`; the first SAID skipped parts said on stderr as they
    are found (`Skips`), unless `on_skip` says otherwise (None: the command says them)."""
    max_body = _bound(args, "max_body") if hasattr(args, "max_body") else DEFAULT_MAX_BODY
    try:
        return Sink(
            args.output,
            source=source,
            overwrite=args.overwrite,
            max_body=max_body,
            on_skip=Skips() if on_skip is _SAID else on_skip,
        )
    except OSError as error:
        raise UsageError(f"import {name}: -o {args.output}: {reason(error)}") from error


@contextmanager
def writing(
    name: str, args: argparse.Namespace, source: str, on_skip: Any = _SAID
) -> Iterator[Sink]:
    """The sink writing `args.output`, for the import in the block: OUT appears only once
    it is whole, or cut by a signal and ended with a note that says so."""
    with raising_on_signals():
        written = sink(name, args, source, on_skip)
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
        held = counted(written.exchanges, "exchange")
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
    skipped = counted(written.skipped, f"unreadable {singular}", plural and f"unreadable {plural}")
    exchanges = f"{counted(written.exchanges, 'exchange')} from {origin}"
    print(f"{args.output}: " + "; ".join((exchanges, f"{skipped} skipped", *more)), file=sys.stderr)
    return 0


def imported(
    args: argparse.Namespace,
    name: str,
    source: str,
    reader: Callable[[Path, bounds.Limits], Callable[[Sink], int]],
    parts: str,
) -> int:
    """`import NAME FILE`: FILE checked by `reader(FILE)` before anything is written (a
    `Malformed` FILE is a one-line error), then written to `args.output` by what it
    returns; said in one last line (`parts` as `said` takes it)."""
    checked(name, [args.file], args)
    try:
        write = reader(args.file, limits(args))
    except Malformed as error:
        raise UsageError(f"import {name}: {error}") from error
    with writing(name, args, source) as written, Progress(lambda: so_far(name, written)):
        write(written)
    return said(args, written, str(args.file), parts)


def so_far(name: str, written: Sink) -> str:
    """What a `Progress` line says of an import into `written`."""
    return f"import {name}: {counted(written.exchanges, 'exchange')} written so far"
