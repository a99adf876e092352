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
from k8s_wiretap.views.pictures.svg import API_SERVER, INK, MUTED, Svg, colour, fit
from k8s_wiretap.wire.words import counted

__all__ = ["NotInRecording", "chain_picture", "chain_rows", "lanes_of", "short", "title_of"]

LABEL_W = 250  # the lanes' names
TOP = 116  # the title and legend
LANE = 88
API_LANE = 96
BOX_W, BOX_H = 200, 62
STEP = 100  # the least distance between two boxes, one after the other in time
GAP = 14  # between two boxes on one lane
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


def chain_rows(
    records: Callable[[], Iterable[dict[str, Any]]], exchange: str | None = None
) -> list[Row]:
    """The rows of the chain: `exchange`'s causes up to the root, itself, and what it set
    off (by default the deepest chain a kubectl command set off), in time order."""
    target = _target(records(), exchange)
    ancestors = set(target)
    kept: list[Row] = []

    def keep(row: Row) -> None:
        if row.id in ancestors or row.chain[: len(target)] == target:
            kept.append(row)

    read(records(), keep)
    return sorted(kept, key=lambda row: (row.time, row.position))


@dataclass(slots=True)
class _Layout:
    lanes: list[str]
    x: dict[str, float]  # each box's left edge
    y: dict[str, float]  # each lane's top
    width: float
    height: float

    def height_of(self, lane: str) -> float:
        return API_LANE if lane == API_SERVER else LANE


def _layout(rows: list[Row]) -> _Layout:
    lanes = lanes_of(rows)
    y: dict[str, float] = {}
    top = float(TOP)
    for lane in lanes:
        y[lane] = top
        top += API_LANE if lane == API_SERVER else LANE
    x: dict[str, float] = {}
    last: dict[str, float] = {}
    previous = float(LABEL_W + 20 - STEP)
    for row in rows:
        at = max(previous + STEP, last.get(row.component, -BOX_W) + BOX_W + GAP)
        x[row.id] = previous = last[row.component] = at
    return _Layout(lanes, x, y, previous + BOX_W + 30, top + 16)


def title_of(rows: list[Row]) -> str:
    """The picture's title: what the chain's first exchange did."""
    root = rows[0]
    verb, name = short(root)
    return f"What {root.component}'s {verb} {name} set off".replace("  ", " ")


def chain_picture(rows: list[Row], title: str | None = None) -> Svg:
    """The chain `rows` make (`chain_rows`) as a picture."""
    title = title or title_of(rows)
    layout = _layout(rows)
    svg = Svg(max(layout.width, 900), layout.height, title)
    _header(svg, rows, title)
    _lanes(svg, layout)
    drawn = {row.id for row in rows}
    for row in rows:
        if row.cause is not None and row.cause.exchange in drawn:
            _hop(svg, layout, row, next(r for r in rows if r.id == row.cause.exchange))
    for row in rows:
        _box(svg, layout, row, rows[0].time)
    return svg


def _header(svg: Svg, rows: list[Row], title: str) -> None:
    ids = {row.id for row in rows}
    hops = sum(1 for row in rows if row.cause and row.cause.exchange in ids)
    span = (max(row.time for row in rows) - rows[0].time) * 1000
    svg.text(20, 32, title, size=20, bold=True)
    said = f"{_count(len(rows), 'exchange')}, {_count(hops, 'hop')}, over {span:.0f} ms. "
    svg.text(20, 58, fit(said + f"From: {rows[0].summary}", svg.width - 40, SIZE), size=SIZE)
    legend = (
        "Each arrow: a write → the watch event (•) → the write it set off.",
        "Over the dot: delivered (write → event); under it: reacted (event → write).",
    )
    for line, text in enumerate(legend):
        svg.text(20, 80 + line * 19, fit(text, svg.width - 40, SIZE), size=SIZE, fill=MUTED)


def _count(count: int, thing: str) -> str:
    return counted(count, thing)


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


def _middle(layout: _Layout, lane: str) -> float:
    return layout.y[lane] + layout.height_of(lane) / 2


def _hop(svg: Svg, layout: _Layout, row: Row, write: Row) -> None:
    """The arrow write → event → reaction, its delays at the event's dot."""
    cause = row.cause
    assert cause is not None
    api = _middle(layout, API_SERVER)
    dot = layout.x[row.id] + 18
    start_x = layout.x[write.id] + BOX_W / 2
    start_y = _edge(layout, write.component, api)
    end_y = _edge(layout, row.component, api)
    stroke = colour(write.component)
    delivered = f"+{cause.delivered_ms:g} ms" if cause.delivered_ms is not None else "?"
    with svg.group(class_="hop", data_exchange=row.id, data_cause=write.id):
        svg.title_of(
            f"{cause.type} {cause.object}, delivered to {cause.watcher} "
            f"{delivered} after the write; reacted +{cause.reacted_ms:g} ms later"
        )
        svg.line(
            [(start_x, start_y), (dot, api), (dot, end_y)],
            stroke,
            arrow=True,
            stroke_width=2,
            class_="arrow",
            stroke_linejoin="round",
        )
        svg.circle(dot, api, 5, fill=colour(API_SERVER))
        svg.text(
            dot,
            api - 12,
            delivered,
            size=SMALL,
            anchor="middle",
            class_="delivered",
            data_ms=cause.delivered_ms,
            fill=colour(API_SERVER),
            halo=True,
        )
        svg.text(
            dot,
            api + 22,
            f"+{cause.reacted_ms:g} ms",
            size=SMALL,
            anchor="middle",
            class_="reacted",
            data_ms=cause.reacted_ms,
            fill=INK,
            halo=True,
        )


def _edge(layout: _Layout, lane: str, towards: float) -> float:
    """A box's edge on `lane` that faces the height `towards`."""
    middle = _middle(layout, lane)
    return middle - BOX_H / 2 if towards < middle else middle + BOX_H / 2


def _box(svg: Svg, layout: _Layout, row: Row, start: float) -> None:
    x, top = layout.x[row.id], _middle(layout, row.component) - BOX_H / 2
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
