"""Explain a recording as a stream, in bounded memory: what `explain --format json` uses.

`explained(records, line)` reads the records one by one (a recording may be larger than
memory), assembles them into exchanges, feeds the analysis, and calls `line(explainer,
exchange)` for every exchange — in time order, as `Analysis.of` orders them — once it is
complete: ended, and `LOOKAHEAD` seconds of the recording past it (what comes shortly after
an exchange can still say something about it: the kubectl a dispatcher's `/version` was
for, a watch event that makes a patch's starting point stale, etcd's record of a write).
A watch, which ends much later, takes its place in the output after the same `LOOKAHEAD`:
the proxy writes two clients' request records in the order it reads them, which is not
always their time order (a kubelet's watches, opened together, come a few milliseconds out
of it), and the output is in the time order of the requests, as `Analysis.of` has it.
Then everything older than it that no later exchange can need is forgotten
(`Explainer.forget`): the exchanges every `FORGET_EVERY` seconds of the recording; the
history's and the chains' per-object state, whose sweep costs the size of the cluster
whatever goes, every `SWEEP_EVERY`.

What stays in memory: the exchanges of the last `LOOKAHEAD` seconds and those still open
(a watch is explained when it ends, so the lines after it wait for it, as text: an
informer's watch ends within 10 minutes); the chains' watch events of the last `WINDOW`
and writes of twice that; per object, its latest observation, uids and owners (the size
of the cluster); the decode cache (16 MB of bodies at most, and what they decoded to).

A recording followed as it is written (the TUI, live) has quiet spells: while nothing is
written its reader sends "clock" records (`{"record": "clock", "time": T}`, never in a
file), the recording's time now, so that what waits for `LOOKAHEAD` seconds to pass is
explained when they have, not when the next record comes.

The release the bodies are decoded as is the first `/version` answer, as `Analysis.of`
takes it: the records are held back until it comes (the proxy asks at start), for at most
`PRELUDE` records.

`explain --jobs N` runs this same stream in every partition (`explain/partition.py`),
from the first record, with a `Gate` that says which lines are the partition's own: the
others are skimmed (their questions that change what later lines say, asked at the same
point), and the stream stops at the end of the partition's range: the lines still open
there (watches) are the next partition's to make.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from k8s_wiretap.capture.assemble import Assembler, Update
from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.explain.analysis import Analysis, insort_by_time, recorded_release
from k8s_wiretap.explain.explainer import Explainer
from k8s_wiretap.kube.release import Release
from k8s_wiretap.kube.verbs import WRITES

__all__ = ["HOLE", "LOOKAHEAD", "PRELUDE", "Gate", "explained"]

LOOKAHEAD = 12.0  # seconds: more than who.DISPATCH_WINDOW (a dispatcher's kubectl)
PRELUDE = 5000  # records held back at most while waiting for the first /version answer
FORGET_EVERY = 1.0  # seconds of recording between two rounds of forgetting exchanges
SWEEP_EVERY = 10.0  # and between two sweeps of the per-object state (`Explainer.forget`)

T = TypeVar("T")  # what a line is: text, or bytes (`explain --format json` writes bytes)
Line = Callable[[Explainer, Exchange], T]


def _release(records: Iterable[dict[str, Any]]) -> tuple[list[dict[str, Any]], Release | None]:
    """The first records, up to the first /version answer (or PRELUDE), and its release."""
    held: list[dict[str, Any]] = []
    probe = Assembler()
    versions: set[str] = set()
    for record in records:
        held.append(record)
        update = probe.feed(record)
        if update is None:
            continue
        exchange = update.exchange
        if update.record == "request" and exchange.path.split("?")[0] == "/version":
            versions.add(exchange.id)
        if update.record == "end" and exchange.id in versions:
            release = recorded_release([exchange])
            if release is not None:
                return held, release
        if len(held) >= PRELUDE:
            break
    return held, None


class Gate:
    """Which lines a partition writes (`explain/partition.py`): every partition runs the
    one stream from the recording's first record, so that its state is one job's at every
    record; a line is *owned* from the first slot made in the output for an exchange whose
    request time is `start` or later (None: the first slot), until the first slot, after
    that, for one at `end` or later (None: none). A line it does not own is not made:
    `skim(explainer, exchange)` asks, in its place, every question of a line that changes
    what later lines say (the same questions at the same point of the stream: the state
    stays one job's).

    The two moments are the same in the partitions on either side of a split (the same
    stream makes the same slots in the same order), and so is what is not made yet then:
    the watches put aside, explained when they end (up to 10 minutes of the recording
    later). The partition before the split leaves them (`handed`: a hole in its lines,
    `HOLE`) and stops at once; the one after takes them over (`inherited`, the first lines
    it writes), made as whole lines where one job makes them, or left again to the next
    if they are still open at its own end. So a partition reads its range and no further."""

    def __init__(
        self,
        start: float | None,
        end: float | None,
        skim: Callable[[Explainer, Exchange], object],
    ) -> None:
        self.start, self.end, self.skim = start, end, skim
        self.phase = 0 if start is not None else 1  # 0 before, 1 owned, 2 after
        self.pending = 0  # owned slots not filled yet
        self.inherited = 0  # the lines the partition before left open at the split
        self.handed = 0  # the holes this partition leaves to the next
        self.skimmed: set[Release | None] = set()  # the releases skims were made under
        self.unsure = False  # an owned line made under another release than a skim

    def owns(self, exchange: Exchange, slots: Iterable[_Slot[Any]] = ()) -> bool:
        """Whether the slot made now, in output order, for `exchange` is owned; `slots`:
        those made before it and still in the output (some not made yet)."""
        if self.phase == 0 and exchange.time >= (self.start or 0.0):
            self.phase = 1
            for slot in slots:  # open at the split: the partition before left them
                if not slot.made:
                    slot.owned = True
                    self.inherited += 1
                    self.pending += 1
        if self.phase == 1 and self.end is not None and exchange.time >= self.end:
            self.phase = 2
            for slot in slots:  # still open: the next partition makes them
                if slot.owned and not slot.made:
                    slot.made = slot.hole = True
                    self.handed += 1
                    self.pending -= 1
        if self.phase == 1:
            self.pending += 1
            return True
        return False

    @property
    def done(self) -> bool:
        return self.phase == 2 and self.pending == 0


HOLE = None  # what a partition writes for a line it left to the next one (`Gate`)


class _Slot[T]:
    """One exchange's place in the output: its line once made (`made`); `owned`: written
    (a partition's others are never made: `Gate`); `hole`: owned, but left to the next
    partition (written as `HOLE`)."""

    __slots__ = ("hole", "line", "made", "owned")

    def __init__(self, owned: bool) -> None:
        self.line: T | None = None
        self.made = False
        self.owned = owned
        self.hole = False


class _Output[T]:
    """Lines in time order: a line waits for the exchanges before it to be explained."""

    def __init__(self, write: Callable[[T], object], gate: Gate | None) -> None:
        self._write = write
        self._gate = gate
        self._slots: deque[_Slot[T]] = deque()

    def slot(self, exchange: Exchange) -> _Slot[T]:
        gate = self._gate
        slot: _Slot[T] = _Slot(True if gate is None else gate.owns(exchange, self._slots))
        self._slots.append(slot)
        return slot

    def flush(self) -> None:
        slots, write = self._slots, self._write
        while slots and slots[0].made:
            slot = slots.popleft()
            if slot.owned:
                write(slot.line)  # type: ignore[arg-type]  # made: a line (or a HOLE)

    def flush_owned(self) -> None:
        """Write the owned lines left (all made) past the others still waiting."""
        for slot in self._slots:
            if slot.owned:
                self._write(slot.line)  # type: ignore[arg-type]  # all made (`Gate.done`)
        self._slots.clear()

    @property
    def waiting(self) -> int:
        return len(self._slots)


class _Stream[T]:
    def __init__(
        self,
        explainer: Explainer,
        line: Line[T],
        write: Callable[[T], object],
        gate: Gate | None = None,
    ) -> None:
        self.explainer = explainer
        self.analysis = explainer.analysis
        self.line = line
        self.gate = gate
        self.output = _Output(write, gate)
        self.waiting: list[Exchange] = []  # in time order, not explained yet
        self.aside: dict[str, tuple[Exchange, _Slot[T]]] = {}  # open, not writes
        self.order: dict[str, int] = {}  # each one's place among those put aside
        self.placed = 0  # how many were put aside
        self.ended: set[str] = set()  # those put aside whose end has come
        self.orphans: set[str] = set()  # exchanges whose request was not recorded
        self.forgotten = self.looked = self.swept = -math.inf

    def add(self, exchange: Exchange) -> None:
        insort_by_time(self.waiting, exchange)

    def take(self, update: Update) -> None:
        exchange = update.exchange
        if update.record == "request":
            self.add(exchange)
        elif exchange.request.unrecorded and exchange.id not in self.orphans:
            self.orphans.add(exchange.id)
            self.add(exchange)
        if update.record == "end" and exchange.id in self.aside:
            self.ended.add(exchange.id)

    def drain(self, now: float) -> None:
        """Explain every exchange that is complete by `now` (math.inf: all of them)."""
        waiting = self.waiting
        if waiting and now - self.looked < FORGET_EVERY:  # what most records come to:
            head = waiting[0]  # the first in time has ended but is not complete, so
            end = head.end  # nothing after it is explained yet, and no round is due
            if end is not None and now - max(head.time, end.time) < LOOKAHEAD:
                return
        frontier = None
        while self.waiting:
            exchange = self.waiting[0]
            if now - exchange.time < LOOKAHEAD:
                break  # a request recorded late (out of time order) may still come before it
            if exchange.end is None and exchange.info.verb not in WRITES and now < math.inf:
                # a watch, say: explained when it ends; it needs no chain of its own
                self.waiting.pop(0)
                self.explainer.summaries.saw(exchange)
                self.explainer.chains.began(exchange)
                self.aside[exchange.id] = (exchange, self.output.slot(exchange))
                self.order[exchange.id] = self.placed
                self.placed += 1
                continue
            if not _complete(exchange, now):
                break
            self.waiting.pop(0)
            self.explainer.summaries.saw(exchange)
            self.fill(self.output.slot(exchange), exchange)
            frontier = exchange.time
        if now - self.looked >= FORGET_EVERY:  # the watches put aside, now and then
            self.looked = now
            # those that have ended (all at the end), in the order they were put aside:
            # not a look at every open watch each round
            if now < math.inf:
                ids = sorted(self.ended, key=self.order.__getitem__)
            else:
                ids = list(self.aside)
            for exchange_id in ids:
                exchange, slot = self.aside[exchange_id]
                end = exchange.end  # `_complete`, inlined
                if now == math.inf or (
                    end is not None and now - max(exchange.time, end.time) >= LOOKAHEAD
                ):
                    self.fill(slot, exchange)
                    del self.aside[exchange_id], self.order[exchange_id]
                    self.ended.discard(exchange_id)
            self.output.flush()
        elif frontier is not None:
            self.output.flush()
        if frontier is not None and frontier - self.forgotten >= FORGET_EVERY:
            deep = frontier - self.swept >= SWEEP_EVERY
            self.explainer.forget(frontier, keeping=self.aside.keys(), deep=deep)
            self.forgotten = frontier
            self.swept = frontier if deep else self.swept

    def fill(self, slot: _Slot[T], exchange: Exchange) -> None:
        """Make the line of `slot` (or, for a line not owned, ask what it would ask)."""
        gate, release = self.gate, self.analysis.release
        if slot.owned and not slot.hole:
            if gate is not None and gate.skimmed and gate.skimmed != {release}:
                # what the skims did not decode, this line decodes under another release
                # than one job did (the first /version answer came late: `PRELUDE`)
                gate.unsure = True
            slot.line = self.line(self.explainer, exchange)
            slot.made = True
            if self.gate is not None:
                self.gate.pending -= 1
            return
        assert gate is not None
        gate.skim(self.explainer, exchange)
        gate.skimmed.add(release)
        slot.made = True


def _complete(exchange: Exchange, now: float) -> bool:
    if now == math.inf:
        return True
    end = exchange.end
    return end is not None and now - max(exchange.time, end.time) >= LOOKAHEAD


def explained[T](
    records: Iterable[dict[str, Any]],
    line: Line[T],
    write: Callable[[T], object],
    begin: Callable[[Analysis], object] | None = None,
    gate: Gate | None = None,
) -> Assembler:
    """`write(line(explainer, exchange))` for every exchange of `records` (a recording's,
    header first), in time order: a line is what `line` makes, its newline included; the
    assembler that read them (its notes and warnings) is returned. `begin(analysis)` is
    called before the first record is fed to the analysis (to listen to its observations).
    `gate`: a partition's (`Gate`): only the lines it owns are written, and the records
    are read only until they are all made."""
    records = iter(records)
    held, release = _release(records)
    analysis = Analysis(release=release)
    if begin is not None:
        begin(analysis)
    stream = _Stream(Explainer(analysis, keep=False), line, write, gate)
    assembler = Assembler(keep=False)
    now = -math.inf
    for source in (held, records):
        for record in source:
            if record.get("record") == "clock":  # a followed recording, idle (see above)
                now = max(now, float(record["time"]))
                stream.drain(now)
                continue
            update = assembler.feed(record)
            if assembler.etcd:
                analysis.add_etcd(assembler.etcd.pop())
            if update is None:
                continue
            analysis.feed(update)
            stream.take(update)
            now = max(now, float(record.get("time") or now))
            stream.drain(now)
            if gate is not None and gate.done:
                stream.output.flush_owned()
                return assembler
    stream.drain(math.inf)
    stream.output.flush()
    return assembler
