"""The selected exchange, decoded and explained on demand, over a window of the recording.

An exchange is explained by the explanation layer as `explain` does it, but over the
exchanges around it rather than the whole file: those from `BEFORE` seconds before it (at
most `MAX_BEFORE` of them: what a patch is replayed on, what event caused a write, which
chains reach back at most 5 s a hop) to `AFTER` seconds after it ends (at most
`MAX_AFTER`: what comes shortly after can still say something about it, as in
`explain/stream.py`), with etcd's records of that time and the recording's first
`/version` exchange (which release decodes the protobuf). A recording of at most `WHOLE`
exchanges is one window. The last window's analysis is kept, made `EXTRA` seconds (and a
quarter more exchanges) wider on both sides: moving along the list inside it costs
nothing more. A window of 1,000 exchanges of the apply story takes about 0.6 s.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any

from k8s_wiretap.capture.assemble import Assembler
from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.reader import Recording
from k8s_wiretap.decode.watch import WatchEvent
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.explainer import Explained, Explainer
from k8s_wiretap.explain.patches import PatchReplay
from k8s_wiretap.views.json import exchange_record
from k8s_wiretap.views.tui.listing.index import RecordingIndex

__all__ = ["Detail", "Hop", "Windows"]

BEFORE, AFTER, EXTRA = 15.0, 12.0, 5.0  # seconds
MAX_BEFORE, MAX_AFTER = 2000, 500  # exchanges
WHOLE = 5000


@dataclass(frozen=True)
class Hop:
    """One exchange of the selected one's causal chain, as the list would show it."""

    id: str
    time: float
    component: str
    summary: str
    position: int | None  # its row, to jump to


@dataclass(frozen=True)
class Detail:
    position: int
    exchange: Exchange
    explained: Explained
    record: dict[str, Any]  # views/json.py's exchange_record, explained
    replay: PatchReplay | None
    events: list[WatchEvent]
    chain: list[Hop]


@dataclass
class _Window:
    low: int
    high: int  # rows [low, high)
    rows: int  # how many rows the index had when it was made
    explainer: Explainer
    exchanges: dict[str, Exchange]


class Windows:
    """Details of an index's exchanges; one window kept."""

    def __init__(self, index: RecordingIndex) -> None:
        self.index = index
        self._window: _Window | None = None

    def detail(self, position: int) -> Detail:
        window = self._window_for(position)
        row = self.index.rows[position]
        exchange = window.exchanges[row.id]
        explainer, analysis = window.explainer, window.explainer.analysis
        said = explainer.explain(exchange)
        record = exchange_record(analysis, exchange, explainer)
        chain = [
            Hop(
                e.id,
                e.time,
                analysis.who(e).component,
                explainer.summaries.explain(e).summary,
                self.index.by_id.get(e.id),
            )
            for e in said.chain
        ]
        replay = analysis.replay(exchange)
        events = analysis.events(exchange) if exchange.watch_events() else []
        return Detail(position, exchange, said, record, replay, events, chain)

    def forget(self) -> None:
        """Let the kept window go: its exchanges grew since (a recording being followed)."""
        self._window = None

    def around(self, position: int) -> tuple[Explainer, dict[str, Exchange]]:
        """The explainer of `position`'s window and the window's exchanges by id: what
        `detail` explains with (a walkthrough follows its causal chains)."""
        window = self._window_for(position)
        return window.explainer, window.exchanges

    def _window_for(self, position: int) -> _Window:
        low, high = self._bounds(position)
        kept = self._window
        covers = kept is not None and kept.low <= low and high <= kept.high
        if kept is not None and covers and (kept.rows == len(self.index) or high < kept.rows):
            return kept
        low, high = self._bounds(position, EXTRA)  # wider, so that moving along keeps it
        self._window = None  # let the old one go before the new one is made
        self._window = self._build(low, high)
        return self._window

    def _bounds(self, position: int, extra: float = 0.0) -> tuple[int, int]:
        rows, count = self.index.rows, len(self.index)
        if count <= WHOLE and self.index.done:
            return 0, count
        row = rows[position]
        times = rows.time  # the requests' times: nearly in order, enough for bisect
        wider = 1.25 if extra else 1.0
        since = row.time - BEFORE - extra
        low = max(position - int(MAX_BEFORE * wider), bisect.bisect_left(times, since, 0, position))
        # a long watch brings its own events; what matters is what came soon after it began
        until = min(row.ended or row.time, row.time + AFTER) + AFTER + extra
        high = min(
            position + int(MAX_AFTER * wider), bisect.bisect_right(times, until, position, count)
        )
        return low, max(high, position + 1)

    def _build(self, low: int, high: int) -> _Window:
        index = self.index
        positions = list(range(low, high))
        if index.release is not None and index.release < low:
            positions.insert(0, index.release)
        since = index.rows[low].time - BEFORE
        until = index.rows[high - 1].time + 2 * AFTER
        assembler = Assembler()
        records = index.records(positions, since, until)
        assembler.feed_all(records[1:])
        recording = Recording(records[0], assembler.exchanges, etcd=assembler.etcd)
        explainer = Explainer(Analysis.of(recording))
        exchanges = {e.id: e for e in assembler.exchanges}
        return _Window(low, high, len(index), explainer, exchanges)
