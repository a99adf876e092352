"""The chain picture: a causal chain as lanes, one per component, time left to right.

Each exchange is a box on its component's lane (a short verb and object, when it came
after the chain's first, its status). Each hop — the write, the watch event the API
server delivered, the reaction — is one arrow from the write's box through a dot on the
API server's lane (the event) to the reaction's box; over the dot its delivery delay
(`delivered_ms`: write → event), under it the reaction's (`reacted_ms`: event → write).

Which chain: `exchange`'s — its causes up to the root, and everything it set off — or, by
default, the deepest chain a kubectl command set off (its last exchange's). Two passes
over the recording: the first finds the chain, the second keeps only its rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from k8s_wiretap.errors import UsageError
from k8s_wiretap.views.pictures.rows import Row, read
from k8s_wiretap.views.pictures.svg import API_SERVER, INK, MUTED, Svg, colour, fit, width
from k8s_wiretap.wire.words import counted

__all__ = [
    "Chain",
    "NotInRecording",
    "chain_picture",
    "chain_rows",
    "lanes_of",
    "short",
    "title_of",
]

LABEL_W = 250  # the lanes' names
TOP = 116  # the title and legend
LANE = 88
BOX_W, BOX_H = 200, 62
STEP = 100  # the least distance between two boxes, one after the other in time
GAP = 14  # between two boxes on one lane
DOT = BOX_W - 52  # an arrow comes down to its box this far right of the box's left edge
OUT = BOX_W - 18  # and leaves its write this far right of it: a box's left part is free
TRACK = 12  # between two tracks, the arrows' horizontal runs in the API server's lane
DOTS = 44  # the dots' row at the bottom of the API server's lane, with their delays
DELAY_GAP = 9  # between a dot and its delays, left of it
MARGIN = 8  # the least room between an arrow and a box or a delay, or two arrows
NUDGE = 4  # how far a box moves right when it is not clear where it is
SIZE = 13
SMALL = 12
SHORT_KINDS = {
    "deployments": "deployment",
    "replicasets": "replicaset",
    "statefulsets": "statefulset",
    "daemonsets": "daemonset",
    "endpoints": "endpoints",
    "endpointslices": "endpointslice",
    "poddisruptionbudgets": "pdb",
    "serviceaccounts": "serviceaccount",
}


class NotInRecording(UsageError):
    """The exchange asked for is not in the recording."""


def short(row: Row) -> tuple[str, str]:
    """A box's two lines: verb and kind, and the object's name."""
    kind = SHORT_KINDS.get(row.resource, row.resource.removesuffix("s"))
    if row.subresource == "binding":
        return "bind pod", row.name
    verb = f"{row.verb} {kind}" if kind else row.verb
    name = row.name or (row.path.split("?")[0] if row.non_resource else "")
    return verb, name


def lanes_of(rows: Iterable[Row]) -> list[str]:
    """The lanes: the first exchange's component, the API server, then each other
    component in the order it first acts."""
    lanes: list[str] = []
    for row in rows:
        if row.component not in lanes:
            lanes.append(row.component)
        if len(lanes) == 1:
            lanes.append(API_SERVER)
    return lanes


def _target(records: Iterable[dict[str, Any]], exchange: str | None) -> tuple[str, ...]:
    """The chain to draw, as its exchange ids from the root: `exchange`'s, or the
    deepest a kubectl command set off."""
    roots: set[str] = set()
    best: tuple[str, ...] = ()

    def look(row: Row) -> None:
        nonlocal best
        if exchange is not None:
            if row.id == exchange:
                best = row.chain
                raise _Found
            return
        if row.component == "kubectl" and len(row.chain) == 1:
            roots.add(row.id)
        if row.chain[0] in roots and len(row.chain) > len(best):
            best = row.chain

    with suppress(_Found):
        read(records, look)
    if not best:
        if exchange is not None:
            raise NotInRecording(f"no exchange {exchange} in the recording")
        raise NotInRecording("no chain a kubectl command set off in the recording")
    return best


class _Found(Exception):
    pass


@dataclass(slots=True)
class Chain:
    """A chain's rows, in time order, and which run of its root's command it follows:
    (n, of how many) runs of that command that wrote the root's object."""

    rows: list[Row]
    nth: tuple[int, int] = (1, 1)


def chain_rows(
    records: Callable[[], Iterable[dict[str, Any]]], exchange: str | None = None
) -> Chain:
    """The rows of the chain: `exchange`'s causes up to the root, itself, and what it set
    off (by default the deepest chain a kubectl command set off), in time order."""
    target = _target(records(), exchange)
    ancestors = set(target)
    kept: list[Row] = []
    writes: list[Row] = []  # of the clients people drive, each run's write of an object

    def keep(row: Row) -> None:
        if row.id in ancestors or row.chain[: len(target)] == target:
            kept.append(row)
        if row.command and row.kind == "write":
            writes.append(row)

    read(records(), keep)
    rows = sorted(kept, key=lambda row: (row.time, row.position))
    return Chain(rows, _nth(rows[0], writes))


def _nth(root: Row, writes: list[Row]) -> tuple[int, int]:
    """Which of the runs of `root`'s command that wrote its object `root` is, of how many."""
    what = (root.component, root.command, root.resource, root.namespace, root.name)
    runs = [
        w.id for w in writes if (w.component, w.command, w.resource, w.namespace, w.name) == what
    ]
    return (runs.index(root.id) + 1, len(runs)) if root.id in runs else (1, 1)


@dataclass(slots=True)
class _Layout:
    lanes: list[str]
    x: dict[str, float]  # each box's left edge
    y: dict[str, float]  # each lane's top
    width: float
    height: float
    tracks: dict[str, float]  # each hop's (by its reaction's id) horizontal run, its height
    band: float  # the API server lane's height: the tracks, then the dots and delays

    def height_of(self, lane: str) -> float:
        return self.band if lane == API_SERVER else LANE

    def dot(self) -> float:
        """The height of the events' dots, under the tracks."""
        return self.y[API_SERVER] + self.band - DOTS / 2

    def top_of(self, row: Row) -> float:
        return self.y[row.component] + (LANE - BOX_H) / 2


def _lanes_of(rows: list[Row]) -> list[str]:
    """`lanes_of`, the API server first when the first component also reacts in the
    chain: every box an arrow ends at is then under the API server's lane."""
    lanes = lanes_of(rows)
    if any(row.component == lanes[0] for row in rows[1:]):
        lanes[:2] = [API_SERVER, lanes[0]]
    return lanes


def _layout(rows: list[Row]) -> _Layout:
    """Boxes in time order, each at least `STEP` right of the one before, placed where
    neither it nor its arrows cross another box or a delay; then each hop's horizontal
    run on a track of its own within the API server's lane, above the dots."""
    lanes = _lanes_of(rows)
    parents = {row.cause.exchange for row in rows if row.cause is not None}
    drawn = {row.id: row for row in rows}
    place = _Placing(lanes, {row.id for row in rows if row.id in parents})
    previous = float(LABEL_W + 20 - STEP)
    for row in rows:
        cause = row.cause.exchange if row.cause is not None else None
        x = place.fit(row, max(previous + STEP, place.end(row.component)), cause in drawn)
        previous = x
    runs = []
    for row in rows:
        if row.cause is not None and (cause := row.cause.exchange) in drawn:
            ends = place.x[cause] + OUT, place.x[row.id] + DOT
            runs.append((row.id, min(ends), max(ends)))
    track = _tracks(runs)
    band = TRACK * (max(track.values(), default=0) + 2) + DOTS
    y: dict[str, float] = {}
    top = float(TOP)
    for lane in lanes:
        y[lane] = top
        top += band if lane == API_SERVER else LANE
    tracks = {hop: y[API_SERVER] + TRACK * (1 + n) for hop, n in track.items()}
    return _Layout(lanes, place.x, y, previous + BOX_W + 30, top + 16, tracks, band)


@dataclass(slots=True)
class _Vertical:
    x: float
    lanes: range  # the lanes it crosses (indices), the API server's included
    dots: bool  # whether it crosses the dots' row


class _Placing:
    """Where the boxes go. A lane is an index; the API server's lane holds no box. An
    arrow's vertical parts run in the boxes' own columns: down from the dots to its
    reaction (`DOT` from the box's left edge), up from its write to the tracks (`OUT`)."""

    def __init__(self, lanes: list[str], parents: set[str]) -> None:
        self.lane = {lane: n for n, lane in enumerate(lanes)}
        self.api = self.lane[API_SERVER]
        self.parents = parents
        self.x: dict[str, float] = {}
        self.boxes: list[tuple[int, float]] = []  # lane, left edge
        self.delays: list[tuple[float, float]] = []  # the delays' left and right edges
        self.verticals: list[_Vertical] = []
        self.last: dict[str, float] = {}

    def end(self, lane: str) -> float:
        """Where the next box on `lane` may begin."""
        return self.last.get(lane, -BOX_W) + BOX_W + GAP

    def fit(self, row: Row, x: float, caused: bool) -> float:
        """The first place at or right of `x` where `row`'s box and arrows are clear."""
        lane = self.lane[row.component]
        room = max((width(text, SMALL) for text in _delays(row)), default=0.0)
        while True:
            mine = self._verticals(lane, x, caused, row.id in self.parents)
            delay = (x + DOT - DELAY_GAP - room, x + DOT + 6) if caused else None
            if self._clear(lane, x, mine, delay):
                break
            x += NUDGE
        self.x[row.id] = self.last[row.component] = x
        self.boxes.append((lane, x))
        self.verticals += mine
        if delay is not None:
            self.delays.append(delay)
        return x

    def _verticals(self, lane: int, x: float, caused: bool, parent: bool) -> list[_Vertical]:
        """The vertical parts of the arrows into and out of a box at `x` on `lane`: each
        crosses the lanes between it and the API server's, and the dots' row when it
        comes from under it (an arrow in always does: it ends under the API server)."""
        between = range(min(lane, self.api) + 1, max(lane, self.api))
        into = _Vertical(x + DOT, between, True)
        out = _Vertical(x + OUT, between, lane > self.api)
        return [v for v, wanted in ((into, caused), (out, parent)) if wanted]

    def _clear(
        self,
        lane: int,
        x: float,
        mine: list[_Vertical],
        delay: tuple[float, float] | None,
    ) -> bool:
        margin = MARGIN
        for other in self.verticals:  # none through the box, or its delays
            if lane in other.lanes and x - margin <= other.x <= x + BOX_W + margin:
                return False
            if delay and other.dots and delay[0] - margin <= other.x <= delay[1] + margin:
                return False
            if any(abs(other.x - v.x) < margin for v in mine):  # two arrows as one
                return False
        for vertical in mine:  # its arrows through no box, nor delay
            for at, left in self.boxes:
                if at in vertical.lanes and left - margin <= vertical.x <= left + BOX_W + margin:
                    return False
            crossed = (a - margin <= vertical.x <= b + margin for a, b in self.delays)
            if vertical.dots and any(crossed):
                return False
        return True


def _tracks(runs: list[tuple[str, float, float]]) -> dict[str, int]:
    """A track for each horizontal run (hop, left, right): the first whose runs so far
    end left of it."""
    ends: list[float] = []
    track: dict[str, int] = {}
    for hop, left, right in sorted(runs, key=lambda run: (run[1], run[2])):
        n = next((n for n, end in enumerate(ends) if end + MARGIN < left), len(ends))
        if n == len(ends):
            ends.append(right)
        ends[n] = right
        track[hop] = n
    return track


def title_of(rows: list[Row], nth: tuple[int, int] = (1, 1)) -> str:
    """The picture's title: what the chain's first exchange did — the command it was part
    of (`kubectl apply`), and when that command wrote the object more than once (`nth`:
    which run, of how many), which run it was."""
    root = rows[0]
    verb, name = short(root)
    if not root.command:
        return f"What {root.component}'s {verb} {name} set off".replace("  ", " ")
    which, runs = nth
    command = f"the {_ordinal(which)} {root.command}" if runs > 1 else root.command
    kind = verb.partition(" ")[2]
    return f"What {command} of {kind} {name} set off, from its {root.verb}".replace("  ", " ")


ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


def _ordinal(n: int) -> str:
    return ORDINALS[n - 1] if 0 < n <= len(ORDINALS) else f"{n}th"


def chain_picture(chain: Chain, title: str | None = None) -> Svg:
    """The chain (`chain_rows`) as a picture."""
    rows = chain.rows
    title = title or title_of(rows, chain.nth)
    layout = _layout(rows)
    svg = Svg(max(layout.width, 900), layout.height, title)
    _header(svg, rows, title)
    _lanes(svg, layout)
    drawn = {row.id: row for row in rows}
    for row in rows:
        if row.cause is not None and row.cause.exchange in drawn:
            _hop(svg, layout, row, drawn[row.cause.exchange])
    for row in rows:
        _box(svg, layout, row, rows[0].time)
    return svg


def _header(svg: Svg, rows: list[Row], title: str) -> None:
    ids = {row.id for row in rows}
    hops = sum(1 for row in rows if row.cause and row.cause.exchange in ids)
    span = (max(row.time for row in rows) - rows[0].time) * 1000
    svg.text(20, 32, title, size=20, bold=True)
    said = f"{counted(len(rows), 'exchange')}, {counted(hops, 'hop')}, over {span:.0f} ms. "
    svg.text(20, 58, fit(said + f"From: {rows[0].summary}", svg.width - 40, SIZE), size=SIZE)
    legend = (
        "Each arrow: a write → the watch event (•) it made → the write that event set off.",
        "Left of the dot: delivered (write → event) over reacted (event → write).",
    )
    for line, text in enumerate(legend):
        svg.text(20, 80 + line * 19, fit(text, svg.width - 40, SIZE), size=SIZE, fill=MUTED)


def _lanes(svg: Svg, layout: _Layout) -> None:
    for index, lane in enumerate(layout.lanes):
        top, height = layout.y[lane], layout.height_of(lane)
        shade = "#eef2ff" if lane == API_SERVER else ("#f3f4f6" if index % 2 else "#ffffff")
        with svg.group(class_="lane", data_component=lane):
            svg.rect(0, top, svg.width, height, fill=shade)
            svg.rect(0, top, 6, height, fill=colour(lane))
            name, owner = _lane_name(lane)
            middle = top + height / 2
            svg.text(
                18,
                middle + (-2 if owner else 5),
                fit(name, LABEL_W - 30, 14),
                size=14,
                bold=True,
                fill=colour(lane),
            )
            if owner:
                svg.text(18, middle + 16, fit(owner, LABEL_W - 30, SMALL), size=SMALL, fill=MUTED)


def _lane_name(lane: str) -> tuple[str, str]:
    if lane == API_SERVER:
        return "API server", "watch events it delivers"
    owner, _, name = lane.rpartition("/")
    return name, owner


def _hop(svg: Svg, layout: _Layout, row: Row, write: Row) -> None:
    """The arrow write → event → reaction: up from the write to its track, along it, down
    through the event's dot to the reaction; its delays beside the dot."""
    cause = row.cause
    assert cause is not None
    out, down = layout.x[write.id] + OUT, layout.x[row.id] + DOT
    track, dot = layout.tracks[row.id], layout.dot()
    start = _edge(layout, write, track)
    end = layout.top_of(row)
    stroke = colour(write.component)
    delivered, reacted = _delays(row)
    with svg.group(class_="hop", data_exchange=row.id, data_cause=write.id):
        svg.title_of(
            f"{cause.type} {cause.object}, delivered to {cause.watcher} "
            f"{delivered} after the write; reacted +{cause.reacted_ms:g} ms later"
        )
        svg.line(
            [(out, start), (out, track), (down, track), (down, end)],
            stroke,
            arrow=True,
            stroke_width=2,
            class_="arrow",
            stroke_linejoin="round",
        )
        svg.circle(down, dot, 5, fill=colour(API_SERVER))
        svg.text(
            down - DELAY_GAP,
            dot - 3,
            delivered,
            size=SMALL,
            anchor="end",
            class_="delivered",
            data_ms=cause.delivered_ms,
            fill=colour(API_SERVER),
        )
        svg.text(
            down - DELAY_GAP,
            dot + 14,
            reacted,
            size=SMALL,
            anchor="end",
            class_="reacted",
            data_ms=cause.reacted_ms,
            fill=INK,
        )


def _delays(row: Row) -> tuple[str, ...]:
    """The hop into `row`: its delivery delay and its reaction delay, as said."""
    cause = row.cause
    if cause is None:
        return ()
    delivered = f"+{cause.delivered_ms:g} ms" if cause.delivered_ms is not None else "?"
    return delivered, f"+{cause.reacted_ms:g} ms"


def _edge(layout: _Layout, row: Row, towards: float) -> float:
    """The edge of `row`'s box that faces the height `towards`."""
    top = layout.top_of(row)
    return top if towards < top else top + BOX_H


def _box(svg: Svg, layout: _Layout, row: Row, start: float) -> None:
    x, top = layout.x[row.id], layout.top_of(row)
    failed = (row.status or 0) >= 400
    stroke = "#b91c1c" if failed else colour(row.component)
    verb, name = short(row)
    when = f"+{(row.time - start) * 1000:.0f} ms"
    with svg.group(class_="exchange", data_exchange=row.id, data_component=row.component):
        svg.title_of(row.summary)
        svg.rect(
            x,
            top,
            BOX_W,
            BOX_H,
            rx=6,
            fill="#ffffff",
            fill_opacity=0.82,
            stroke=stroke,
            stroke_width=2,
        )
        svg.text(
            x + 8,
            top + 18,
            fit(verb, BOX_W - 14, SIZE),
            size=SIZE,
            bold=True,
            fill=colour(row.component),
        )
        svg.text(x + 8, top + 36, fit(name, BOX_W - 14, SMALL), size=SMALL)
        status = "" if row.status is None else f" · {row.status}"
        if row.subresource and row.subresource != "binding":
            status += f" · {row.subresource}"
        svg.text(x + 8, top + 54, when + status, size=SMALL, fill="#b91c1c" if failed else MUTED)
