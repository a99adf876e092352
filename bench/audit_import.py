"""`import audit` and `explain` over an audit log of a million events built from a real one:
`python -m bench audit_import [--sizes 100000 1000000] [--log PATH] [--gzip] [--keep DIR]
[--jobs N]`.

The log repeated is recordings/wide-session.audit.log.gz: a real lab's API server's own
audit log at RequestResponse, through the wide session (k8s_wiretap/workshop/wide.py) from
the lab's start to its end, recorded by scripts/record_audit.py (2,029 events, 1,883
exchanges; Secrets' bodies dropped, see there). It is repeated, whole copies, until the log
holds at least each size's events (10,000 and 100,000 by default; `--sizes 100000 1000000`
for the figures of docs/benchmarks.md). Each copy gives every auditID a fresh one (the
last 12 hex digits of the UUID are the copy's number), moves `requestReceivedTimestamp` and
`stageTimestamp` on by the sample's span, and every resourceVersion (`"resourceVersion":
"N"` in the objects, `resourceVersion=N` in the request URIs; 0, "any", kept) past the
sample's highest: the same session again and again on one cluster, in time order, with
nothing else changed (names and uids repeat, as the session's objects are made again).
The lines are made one at a time and written as they come (the log is never held), to a
plain file (`--gzip`: gzipped, level 1, which `import audit` reads as is; the peer then
reads it through gzip too).

Each step runs in a process of its own: its wall clock, the CPU seconds it used
(`os.wait4`) and its peak resident memory (its own VmHWM, read at its exit: `MEASURED`;
Linux only):

- the peer: a plain `json.loads` of every line of the same file, in the same Python (the
  floor any importer of this log pays: the importer parses each line too, with orjson
  where it reads as `json` does). *vs peer* is the import's CPU seconds over the peer's:
  how many times the bare parse the import costs (1.00 would be an import that does
  nothing but parse);
- `k8s-wiretap import audit LOG -o RECORDING`: events per second;
- `k8s-wiretap explain RECORDING --format json`, output to /dev/null: exchanges per second.

Both with `--jobs 1`; *imp/core* and *exp/core* are the events and exchanges per CPU
second (a core's rate, whatever the wall clock). With `--jobs N` (N > 1; by default 2 where
this process may run on 2 cores or more, else none: `--jobs 1`) both run again with
`--jobs N`: their wall seconds, the speed-up over one job (its wall seconds over theirs),
and `=`: whether their outputs are byte for byte one job's (the recordings compared
whole, but for what each import makes afresh: `same_recording`; the explain outputs by
their SHA-1, which this process takes of each as it comes
through a pipe, one job's and N jobs' alike, at about 1 GB/s: a second of a core per GB
of output). Outputs that differ fail the benchmark, after its table.

Bounded memory means the same peak at every size. What `import audit` keeps grows to a
cap and stays there: the open exchanges (as many as the cluster has requests in flight),
and the last 100,000 finished auditIDs (DONE_LIMIT), past which a Bloom filter of 8 MiB
holds those forgotten; so the peak rises up to about 100,000 exchanges and no further.
The figures are reported, not asserted: the exit status is 0 unless a step fails, the
import writes another number of exchanges than the log holds, or N jobs write other bytes
than one job.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import hashlib
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

from k8s_wiretap.commands.jobs import cores

SAMPLE = Path(__file__).resolve().parents[1] / "recordings" / "wide-session.audit.log.gz"
SIZES = (10_000, 100_000)
# What a copy changes in a line: the auditID, the two times, a resourceVersion.
SLOTS = re.compile(
    r'"auditID":"(?P<id>[^"]+)"'
    r'|"(?:requestReceivedTimestamp|stageTimestamp)":"(?P<time>[^"]+)"'
    r'|(?:"resourceVersion":"|resourceVersion=)(?P<rv>[1-9][0-9]*)'
)
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"  # the audit log's (metav1.MicroTime, in UTC)
PEER = (
    "import gzip, json, sys\n"
    "path = sys.argv[1]\n"
    "stream = gzip.open(path, 'rb') if path.endswith('.gz') else open(path, 'rb')\n"
    "for line in stream:\n"
    "    if line.strip():\n"
    "        json.loads(line)\n"
)
# Runs `-m MODULE ARGS...` or `-c CODE ARGS...` and writes its own peak resident set
# (VmHWM, KiB) to a file at exit: the child's `ru_maxrss` is no good, Linux carries the
# parent's peak into it across the exec (a child of a 500 MB parent says at least 500 MB).
MEASURED = (
    "import atexit, runpy, sys\n"
    "out, how, what = sys.argv[1:4]\n"
    "sys.argv = [what, *sys.argv[4:]]\n"
    "def said():\n"
    "    with open('/proc/self/status') as status:\n"
    "        peak = next(s.split()[1] for s in status if s.startswith('VmHWM:'))\n"
    "    with open(out, 'w') as file:\n"
    "        file.write(peak)\n"
    "atexit.register(said)\n"
    "if how == '-m':\n"
    "    runpy.run_module(what, run_name='__main__', alter_sys=True)\n"
    "else:\n"
    "    exec(compile(what, '<peer>', 'exec'), {'__name__': '__main__'})\n"
)
# A redaction placeholder, as text and base64-encoded (a Secret's `data`): made with a key
# each import makes afresh (capture/redact.py), so two imports of one log differ in them.
PLACEHOLDER = re.compile(rb"redacted:[0-9a-f]{16}|cmVkYWN0ZWQ6[A-Za-z0-9+/]{22}==")
NOTE_TIME = re.compile(rb'^\{"record":"note","time":[0-9.e+-]+,')  # the import's clock
SAID = re.compile(r"([\d,]+) exchanges? from ([\d,]+) audit events?")

Part = str | tuple[str, object]  # a literal, or a slot: ("id", ID), ("time", T), ("rv", N)


@dataclass(frozen=True)
class Sample:
    """The log repeated: each line as literals and slots; what one copy moves them by."""

    lines: list[list[Part]]
    span: dt.timedelta  # a copy's times move on by this
    versions: int  # and its resourceVersions by this
    exchanges: int  # distinct auditIDs in a copy


def _text(path: Path, mode: str, *, zipped: bool) -> IO[str]:
    """`path` opened as UTF-8 text, through gzip (level 1 to write) when `zipped`."""
    if zipped:
        return cast(IO[str], gzip.open(path, mode + "t", 1, encoding="utf-8"))
    return path.open(mode, encoding="utf-8")


def template(line: str) -> list[Part]:
    """`line` cut at its slots (SLOTS), each slot's value parsed."""
    parts: list[Part] = []
    at = 0
    for match in SLOTS.finditer(line):
        kind = match.lastgroup or ""
        start, end = match.span(kind)
        value: object = match[kind]
        if kind == "time":
            value = dt.datetime.fromisoformat(match[kind])
        elif kind == "rv":
            value = int(match[kind])
        parts += [line[at:start], (kind, value)]
        at = end
    parts.append(line[at:])
    return parts


def load(path: Path) -> Sample:
    """The log at `path` (gzip or not) as a Sample."""
    with _text(path, "r", zipped=path.read_bytes()[:2] == b"\x1f\x8b") as stream:
        lines = [template(line.rstrip("\n")) for line in stream if line.strip()]
    slots = [p for parts in lines for p in parts if isinstance(p, tuple)]
    times = [v for k, v in slots if k == "time" and isinstance(v, dt.datetime)]
    versions = [v for k, v in slots if k == "rv" and isinstance(v, int)]
    ids = {v for k, v in slots if k == "id"}
    if not times or not ids:
        raise SystemExit(f"{path}: no audit events")
    span = max(times) - min(times) + dt.timedelta(seconds=1)
    return Sample(lines, span, max(versions, default=0), len(ids))


def _slot(kind: str, value: object, copy: int, sample: Sample) -> str:
    if kind == "id":
        return f"{str(value)[:-12]}{copy:012x}"
    if kind == "time" and isinstance(value, dt.datetime):
        return (value + copy * sample.span).strftime(TIME_FORMAT)
    if kind == "rv" and isinstance(value, int):
        return str(value + copy * sample.versions)
    raise ValueError(f"no slot {kind}")


def repeated(sample: Sample, copies: int) -> Iterator[str]:
    """The sample's lines, `copies` times over, each copy moved on (see the docstring)."""
    for copy in range(copies):
        for parts in sample.lines:
            yield "".join(p if isinstance(p, str) else _slot(*p, copy, sample) for p in parts)


def write(sample: Sample, copies: int, path: Path, *, zipped: bool) -> None:
    """Write `copies` copies of the sample to `path`, a line at a time."""
    with _text(path, "w", zipped=zipped) as out:
        for line in repeated(sample, copies):
            out.write(line + "\n")


@dataclass(frozen=True)
class Run:
    """One process: wall-clock seconds, CPU seconds, peak RSS in bytes, and the SHA-1 of
    its output when asked for."""

    seconds: float
    cpu: float
    peak: int
    digest: str = ""


def _digest(stream: IO[bytes]) -> str:
    sha = hashlib.sha1(usedforsecurity=False)
    while chunk := stream.read(1 << 20):
        sha.update(chunk)
    return sha.hexdigest()


def run(
    how: str,
    what: str,
    args: list[str],
    folder: Path,
    stderr: Path | None = None,
    *,
    digest: bool = False,
) -> Run:
    """Run `python -m MODULE ARGS` or `python -c CODE ARGS` (`how`, `what`) through
    MEASURED (stdout to /dev/null, or hashed as it comes when `digest`; stderr to `stderr`
    if given) and measure it."""
    peak = folder / "peak.txt"
    peak.unlink(missing_ok=True)
    command = [sys.executable, "-c", MEASURED, str(peak), how, what, *args]
    started = time.perf_counter()
    said = ""
    with open(stderr or os.devnull, "w") as errors:
        out = subprocess.PIPE if digest else subprocess.DEVNULL
        child = subprocess.Popen(command, stdout=out, stderr=errors)
        if child.stdout is not None:
            said = _digest(child.stdout)
            child.stdout.close()
        _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    if status != 0 or not peak.exists():
        said = stderr.read_text()[-2000:] if stderr else ""
        raise SystemExit(f"{how} {what[:40]} {' '.join(args)} failed ({status})\n{said}")
    cpu = usage.ru_utime + usage.ru_stime
    return Run(elapsed, cpu, int(peak.read_text()) * 1024, said)


def _renumbered(line: bytes, seen: dict[bytes, int]) -> bytes:
    line = NOTE_TIME.sub(b'{"record":"note",', line)
    if b"redacted:" not in line and b"cmVkYWN0ZWQ6" not in line:
        return line
    return PLACEHOLDER.sub(lambda m: b"redacted:%d" % seen.setdefault(m[0], len(seen)), line)


def same_recording(one: Path, other: Path) -> bool:
    """Whether two imports of one log wrote the same recording: byte for byte but for what
    each import makes afresh, its header's `created` time, its notes' times (its clock as
    it wrote them) and its redaction key (the placeholders, numbered in the order they come
    in each, which keeps which values are equal to which). Read a line at a time, both at
    once."""
    seen: tuple[dict[bytes, int], dict[bytes, int]] = ({}, {})
    with one.open("rb") as a, other.open("rb") as b:
        first = [json.loads(a.readline()), json.loads(b.readline())]
        for header in first:
            header.pop("created", None)
        if first[0] != first[1]:
            return False
        for left, right in itertools.zip_longest(a, b):
            if left is None or right is None:
                return False
            if _renumbered(left, seen[0]) != _renumbered(right, seen[1]):
                return False
    return True


def imported(said: str) -> tuple[int, int]:
    """Exchanges and events from `import audit`'s last line."""
    match = SAID.search(said.strip().splitlines()[-1])
    if match is None:
        raise SystemExit(f"import audit said no count: {said[-500:]}")
    return int(match[1].replace(",", "")), int(match[2].replace(",", ""))


# import's and explain's CPU seconds and peak resident memory (MB) each in its own column
COLUMNS = [
    ("events", 10),
    ("exchanges", 10),
    ("log MB", 7),
    ("peer s", 7),
    ("import s", 9),
    ("events/s", 9),
    ("imp CPU", 8),
    ("vs peer", 8),
    ("imp RSS", 8),
    ("explain s", 10),
    ("exch./s", 8),
    ("exp CPU", 8),
    ("exp RSS", 8),
    ("imp/core", 9),
    ("exp/core", 9),
]


def jobs_columns(jobs: int) -> list[tuple[str, int]]:
    """The columns of the runs with `--jobs N`: none for 1."""
    if jobs == 1:
        return []
    return [
        (f"imp {jobs}j s", 9),
        ("imp x", 6),
        ("imp =", 6),
        (f"exp {jobs}j s", 9),
        ("exp x", 6),
        ("exp =", 6),
    ]


def measure(
    sample: Sample, size: int, folder: Path, *, zipped: bool, jobs: int
) -> tuple[str, bool]:
    """Build the log of `size` events (whole copies), import it, explain it (with one job,
    and again with `jobs` when more than 1): one row, and whether the outputs of `jobs`
    jobs are one job's (`=`: yes or NO)."""
    copies = -(-size // len(sample.lines))
    log = folder / (f"audit-{size}.log" + (".gz" if zipped else ""))
    recording = folder / f"audit-{size}.jsonl"
    said = folder / f"audit-{size}.import.txt"
    recording.unlink(missing_ok=True)
    write(sample, copies, log, zipped=zipped)
    peer = run("-c", PEER, [str(log)], folder)
    imports = run(
        "-m",
        "k8s_wiretap",
        ["import", "audit", str(log), "-o", str(recording), "--jobs", "1"],
        folder,
        said,
    )
    exchanges, events = imported(said.read_text())
    if (events, exchanges) != (copies * len(sample.lines), copies * sample.exchanges):
        raise SystemExit(
            f"import audit wrote {exchanges:,} exchanges from {events:,} events; the log "
            f"has {copies * sample.exchanges:,} from {copies * len(sample.lines):,}"
        )
    explain_args = ["explain", str(recording), "--format", "json"]
    compared = jobs > 1
    explain = run("-m", "k8s_wiretap", [*explain_args, "--jobs", "1"], folder, digest=compared)
    values = [
        f"{events:,}",
        f"{exchanges:,}",
        f"{log.stat().st_size / 1e6:,.0f}",
        f"{peer.seconds:.1f}",
        f"{imports.seconds:.1f}",
        f"{events / imports.seconds:,.0f}",
        f"{imports.cpu:.1f}",
        f"{imports.cpu / peer.cpu:.2f}",
        f"{imports.peak / 1e6:,.0f}",
        f"{explain.seconds:.1f}",
        f"{exchanges / explain.seconds:,.0f}",
        f"{explain.cpu:.1f}",
        f"{explain.peak / 1e6:,.0f}",
        f"{events / imports.cpu:,.0f}",
        f"{exchanges / explain.cpu:,.0f}",
    ]
    same = True
    if compared:
        many = folder / f"audit-{size}.jobs.jsonl"
        many.unlink(missing_ok=True)
        args = ["import", "audit", str(log), "-o", str(many), "--jobs", str(jobs)]
        imports_n = run("-m", "k8s_wiretap", args, folder, said)
        explain_n = run(
            "-m", "k8s_wiretap", [*explain_args, "--jobs", str(jobs)], folder, digest=True
        )
        same_import = same_recording(recording, many)
        same_explain = explain.digest == explain_n.digest
        same = same_import and same_explain
        many.unlink()
        values += [
            f"{imports_n.seconds:.1f}",
            f"{imports.seconds / imports_n.seconds:.2f}",
            "yes" if same_import else "NO",
            f"{explain_n.seconds:.1f}",
            f"{explain.seconds / explain_n.seconds:.2f}",
            "yes" if same_explain else "NO",
        ]
    columns = COLUMNS + jobs_columns(jobs)
    return " ".join(f"{v:>{w}}" for v, (_, w) in zip(values, columns, strict=True)), same


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench audit_import")
    parser.add_argument("--log", type=Path, default=SAMPLE, help="the audit log repeated")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="events")
    parser.add_argument("--gzip", action="store_true", help="write the logs gzipped")
    parser.add_argument("--keep", type=Path, default=None, help="build the files in this folder")
    parser.add_argument(
        "--jobs",
        type=int,
        default=2 if cores() >= 2 else 1,
        help="run import and explain with --jobs N too, and compare (default: 2 where "
        "there are 2 cores or more; 1: one job only)",
    )
    args = parser.parse_args(argv or [])
    if args.jobs < 1:
        parser.error(f"--jobs {args.jobs}: 1 or more")
    sample = load(args.log)
    zipped = " gzipped" if args.gzip else ""
    print(
        f"import audit and explain over {args.log.name} repeated ({len(sample.lines):,} "
        f"events, {sample.exchanges:,} exchanges a copy{zipped}); vs peer: import CPU over "
        "a json.loads of every line; /core: per CPU second"
        + (f"; x: one job's wall seconds over {args.jobs} jobs'" if args.jobs > 1 else "")
    )
    columns = COLUMNS + jobs_columns(args.jobs)
    print(" ".join(f"{name:>{width}}" for name, width in columns))
    differ = []
    with tempfile.TemporaryDirectory(prefix="k8s-wiretap-bench-") as temporary:
        folder = args.keep or Path(temporary)
        for size in args.sizes:
            row, same = measure(sample, size, folder, zipped=args.gzip, jobs=args.jobs)
            print(row, flush=True)
            if not same:
                differ.append(size)
            if args.keep is None:
                for path in folder.iterdir():
                    path.unlink()
    if differ:
        raise SystemExit(
            f"--jobs {args.jobs} wrote other bytes than --jobs 1 at {', '.join(map(str, differ))} "
            "events (import's recording or explain's output)"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
