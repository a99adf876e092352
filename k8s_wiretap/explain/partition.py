"""A recording explained in partitions that run at once (`explain --format json --jobs N`,
`--dask ADDRESS`), their lines put together byte for byte one job's.

What one job knows when it reaches an exchange is everything before it: the exchanges of
the last `LOOKAHEAD` seconds and the watches still open (`explain/stream.py`), the chains'
watch events of the last `WINDOW` and writes of twice that, failed writes for
`RETRY_WINDOW`, an Event's subject for `EVENT_MEMORY` (`explain/chains.py`), and for the
whole run each object's latest observation and versions (`history.py`), its uids, owners,
labels and selectors, the latest version each watcher saw of it, its latest write with the
chain that write was in (which a late informer's event, or a relist, links a write to long
after), each client's latest LIST and WATCH of a resource (`summaries.py`), the resources
and OpenAPI documents the server described, and the release of the first `/version`
answer, which the bodies are decoded as. The long-lived part is made of every record
before, and of what each earlier line asked: a chain is a chain of causes, each found when
its write was explained. No warm-up of a bounded length rebuilds it, and a partition
started part-way cannot tell what it lacks from what never was.

So nothing crosses a split but the split's time: every partition runs the one stream of
`explain/stream.py` from the recording's first record, and its state is one job's at every
record. What it saves is the lines that are not its own (`stream.Gate`): before its range
and after it, `skim` asks of each exchange only the questions of a line that change what
later lines say (who sent it, the analysis caught up, whether it starts an informer, its
place in the chains: `views.json.skim`), not the rest (the bodies decoded, the summary, the
patch replay, the record and its serialization), which only reads or decodes what any
later moment decodes alike. A partition's range
is a run of the output's lines, from the first made for an exchange whose request is at
its start time or later to the first, after that, at the next partition's: the same line in
both partitions, as both run the same stream. What is not made yet at that line (watches
begun before it, explained when they end, up to 10 minutes of the recording later) is
the same in both too: the partition before leaves those lines as holes and stops there,
the one after makes them where one job does (or leaves them on, if they are still open at
its own end), and `Stitch` puts them in their places. So no partition reads past its range.

One thing a skim leaves otherwise than a line: what it does not decode is decoded later,
when a later line asks, and so under the release of that moment. The release changes once
at most, when the first `/version` answer comes after the `PRELUDE` records the stream
waits for it; a partition that skimmed before such a change (`Gate.unsure`) runs again
with the whole line made and dropped in place of the skim (`thorough`): one job's work,
one job's lines.

The cost: a skim is 0.55-0.7 of a line (`SKIM_COST`; reading and assembling the records
are a tenth of a line, the analysis taking each exchange in (its observed bodies decoded
into the history) more than a third, finding causes a fifth, and a skim does them all:
docs/benchmarks.md, "`explain` in partitions"), so partition
k also pays that share of what comes before it; `plan` chooses the ranges so that every
partition costs the same (`shares`), which on two workers is 1/(2 - SKIM_COST) of one job:
at best 1.4 times as fast. A recording smaller than `MIN_BYTES` is explained by one job in
this process: starting processes costs more.

`PART_BYTES_ENV` (a number of bytes; tests) splits a recording of any size into ranges of
that many bytes of it, whatever the workers; `FAIL_ENV` (a partition's number) makes that
partition's process exit at once, as a worker that dies.
"""

from __future__ import annotations

import gc
import itertools
import os
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.reader import GZIP_MAGIC, iter_records
from k8s_wiretap.explain.explainer import Explainer
from k8s_wiretap.explain.stream import HOLE, Gate, explained

__all__ = [
    "FAIL_ENV",
    "MIN_BYTES",
    "PART_BYTES_ENV",
    "SKIM_COST",
    "Done",
    "Part",
    "Stitch",
    "explain_part",
    "plan",
    "shares",
    "worth",
]

MIN_BYTES = 32 << 20  # a recording smaller than this is explained by one job, in process
SKIM_COST = 0.6  # what a skimmed exchange costs, of a line made (measured: 0.55-0.7, audit)
PART_BYTES_ENV = "K8S_WIRETAP_EXPLAIN_PART_BYTES"
FAIL_ENV = "K8S_WIRETAP_EXPLAIN_FAIL_PART"
REQUEST = b'{"record":"request"'

Line = Callable[[Explainer, Exchange], bytes]
Skim = Callable[[Explainer, Exchange], object]


@dataclass(frozen=True)
class Part:
    """One partition: the output's lines from the first for an exchange at `start` (None:
    the first) to the first after that at `end` (None: the last), of `path`; `index` of
    `count`."""

    path: str
    index: int
    count: int
    start: float | None
    end: float | None


@dataclass
class Done:
    """A partition's lines, as they go out: `pieces`, runs of lines and `HOLE`s (a line
    left open at its end, which a later partition makes), after `inherited`, one line (or
    `HOLE` again) for each of the holes left open before its start (`stream.Gate`); the
    warnings of the records it read (the last partition read them all: one job's);
    `thorough`: it ran again with whole lines in place of skims (`Gate.unsure`); `cpu`:
    the CPU seconds it took."""

    pieces: list[bytes | None]
    inherited: list[bytes | None] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    thorough: bool = False
    cpu: float = 0.0  # CPU seconds it took

    @property
    def holes(self) -> int:
        return self.pieces.count(HOLE) + self.inherited.count(HOLE)


class Stitch:
    """The partitions' lines put together in order: `add` each partition's `Done`, in
    order, and write what it returns (the lines up to the first hole still open)."""

    def __init__(self) -> None:
        self._out: list[bytes | None] = []
        self._holes: list[int] = []  # where in `_out`, in order
        self._written = 0

    def add(self, done: Done) -> bytes:
        if len(done.inherited) != len(self._holes):  # the same stream on both sides
            raise RuntimeError(
                f"a partition took over {len(done.inherited)} lines, the one before left"
                f" {len(self._holes)}"
            )
        out, holes = self._out, []
        for at, line in zip(self._holes, done.inherited, strict=True):
            if line is HOLE:
                holes.append(at)
            else:
                out[at] = line
        for piece in done.pieces:
            if piece is HOLE:
                holes.append(len(out))
            out.append(piece)
        done.pieces, done.inherited = [], []  # taken: let them go
        self._holes = holes
        ready = holes[0] if holes else len(out)
        lines = b"".join(p for p in out[self._written : ready] if p is not None)
        out[self._written : ready] = [b""] * (ready - self._written)  # written: let go
        self._written = ready
        return lines

    @property
    def open(self) -> int:
        """The holes no partition has filled yet (none once the last is added)."""
        return len(self._holes)


def explain_part(part: Part, line: Line, skim: Skim) -> Done:
    """Partition `part` of a recording: `line(explainer, exchange)` for each exchange of
    its range, `skim(explainer, exchange)` for the others read (module docstring)."""
    if os.environ.get(FAIL_ENV) == str(part.index):
        os._exit(70)  # a worker that dies (tests)
    began = time.process_time()
    before = gc.get_threshold()
    gc.freeze()  # as one job's (`commands/writers._batch_collector`): passes are rare
    gc.set_threshold(100_000, 50, 100)
    try:
        done = _run(part, line, skim)
        if done is None:  # skimmed under another release: whole lines in place of skims
            done = _run(part, line, line)
            assert done is not None
            done.thorough = True
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
    done.cpu = time.process_time() - began
    return done


def _run(part: Part, line: Line, skim: Skim) -> Done | None:
    out: list[bytes | None] = []
    warnings: list[str] = []
    gate = Gate(part.start, part.end, skim)
    assembler = explained(iter_records(part.path, warnings), line, out.append, gate=gate)
    if gate.unsure and skim is not line:
        return None
    inherited, pieces = out[: gate.inherited], _runs(out[gate.inherited :])
    return Done(pieces, inherited, warnings + assembler.warnings)


def _runs(lines: list[bytes | None]) -> list[bytes | None]:
    """`lines` with each run of lines between two holes joined (one bytes to send)."""
    runs: list[bytes | None] = []
    run: list[bytes] = []
    for line in lines:
        if line is HOLE:
            if run:
                runs.append(b"".join(run))
                run = []
            runs.append(HOLE)
        else:
            run.append(line)
    if run:
        runs.append(b"".join(run))
    return runs


def worth(path: Path) -> bool:
    """Whether `path` is worth partitions (`MIN_BYTES`, or `PART_BYTES_ENV` set)."""
    if _part_bytes() is not None:
        return True
    try:
        return path.stat().st_size >= MIN_BYTES
    except OSError:
        return False  # one job says what is wrong with it


def shares(workers: int, skim: float = SKIM_COST) -> list[float]:
    """Where `workers` equal partitions split a recording, as fractions of it: partition
    k costs `skim` of what is before its start and all of its range, so the ranges grow
    shorter: x[k+1] = T + (1 - skim) x[k], x[0] = 0, x[workers] = 1."""
    keep = 1.0 - skim
    total = skim / (1.0 - keep**workers) if skim > 0 else 1.0 / workers
    splits, at = [], 0.0
    for _ in range(workers - 1):
        at = total + keep * at
        splits.append(at)
    return splits


def plan(path: Path, workers: int) -> list[Part]:
    """The partitions of the recording at `path` for `workers` running at once (one if
    it cannot be split): ranges of equal cost (`shares`), or of `PART_BYTES_ENV` bytes."""
    size = _size(path)
    every = _part_bytes()
    if every is not None:
        offsets = list(range(every, size, every))
    else:
        offsets = [int(size * share) for share in shares(workers)]
    times: list[float] = []
    for when in _times_at(path, offsets):
        if not times or when > times[-1]:
            times.append(when)
    bounds: list[float | None] = [None, *times, None]
    count = len(bounds) - 1
    where = str(path.absolute())  # a Dask worker's folder is its own
    return [Part(where, index, count, bounds[index], bounds[index + 1]) for index in range(count)]


def _part_bytes() -> int | None:
    text = os.environ.get(PART_BYTES_ENV, "")
    return int(text) if text.isdigit() and int(text) > 0 else None


def _gzipped(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(2) == GZIP_MAGIC


def _size(path: Path) -> int:
    """The bytes of the recording as read (a gzipped one's, unzipped)."""
    if not _gzipped(path):
        return path.stat().st_size
    return sum(len(line) for line in _unzipped(path))


def _unzipped(path: Path) -> Iterator[bytes]:
    decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
    rest = b""
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            try:
                data = rest + decompressor.decompress(chunk)
            except zlib.error:
                return  # one job says so
            *complete, rest = data.split(b"\n")
            for line in complete:
                yield line + b"\n"
    if rest:
        yield rest


def _times_at(path: Path, offsets: list[int]) -> Iterator[float]:
    """The request time of the first request record at or after each offset (in order)."""
    if _gzipped(path):
        lines = _unzipped(path)
        at = 0
        for offset in offsets:
            for line in lines:
                at += len(line)
                if at > offset and line.startswith(REQUEST):
                    time = _time(line)
                    if time is not None:
                        yield time
                        break
        return
    with path.open("rb") as handle:
        for offset in offsets:
            handle.seek(offset)
            handle.readline()  # the rest of the line the offset fell in
            for line in itertools.islice(handle, 100_000):
                if line.startswith(REQUEST):
                    time = _time(line)
                    if time is not None:
                        yield time
                        break


def _time(line: bytes) -> float | None:
    try:
        time = orjson.loads(line).get("time")
    except (orjson.JSONDecodeError, AttributeError):
        return None
    return float(time) if isinstance(time, (int, float)) else None
