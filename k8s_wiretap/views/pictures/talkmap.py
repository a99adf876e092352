"""The map picture: who talks to whom over a whole recording.

The API server sits in the middle — every component talks to it alone — with etcd
beneath it. Each component is a node with its edge to the API server, the edge as thick as
the component is talkative, the node saying what it reads (GET, LIST), watches and writes:
how many, how often (a minute, over the recording's span) and its top resources. The
controller manager's controllers sit together in one panel on the left, a row each; every
other client is a card on the right.

Counted as the recording is read (`Tally`): memory grows with the number of components and
resources, never with the recording.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from k8s_wiretap.views.pictures.rows import Row, read
from k8s_wiretap.views.pictures.svg import API_SERVER, ETCD, INK, MUTED, Svg, colour, fit
from k8s_wiretap.wire.words import counted

__all__ = ["KINDS", "Talk", "Tally", "map_picture", "tally"]

KINDS = ("read", "watch", "write")
WORDS = {"read": "reads", "watch": "watches", "write": "writes"}
GROUP = "controller-manager"
TOP = 110
LEFT, PANEL_W = 30, 760
API_X, API_W, API_H = 900, 240, 120
CARD_X, CARD_W, CARD_H = 1290, 640, 104
ROW_H = 50
SIZE, SMALL = 13, 12
TOP_RESOURCES = 3


@dataclass(slots=True)
class Talk:
    """What one component said to the API server."""

    component: str
    counts: Counter[str] = field(default_factory=Counter)  # read, watch, write, other
    targets: dict[str, Counter[str]] = field(default_factory=dict)  # kind → resource → n

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def add(self, kind: str, target: str) -> None:
        self.counts[kind] += 1
        self.targets.setdefault(kind, Counter())[target] += 1


@dataclass(slots=True)
class Tally:
    """Every component's talk, the recording's span, and how many writes the recording
    holds etcd's own record of."""

    talks: dict[str, Talk] = field(default_factory=dict)
    first: float = math.inf
    last: float = -math.inf
    stored: int = 0

    def add(self, row: Row) -> None:
        self.count(row.component, row.kind, row.target, row.time, stored=row.etcd is not None)

    def count(
        self, component: str, kind: str, target: str, time: float, *, stored: bool = False
    ) -> None:
        """One exchange of `component`'s (`kind` of `target_of`), at `time`."""
        talk = self.talks.get(component)
        if talk is None:
            talk = self.talks[component] = Talk(component)
        talk.add(kind, target)
        self.first, self.last = min(self.first, time), max(self.last, time)
        self.stored += stored

    def lines(self) -> list[str]:
        """Each component, most talkative first, in a line: `kubelet: 207 requests ·
        259.9/min — reads 85 · 106.7/min: pods 76, nodes 5 | watches …` (what is not zero)."""
        talks = sorted(self.talks.values(), key=lambda t: (-t.total, t.component))
        return [
            f"{t.component}: {_requests(t.total)} · {self.rate(t.total)} — "
            + " | ".join(_said(self, t, k) for k in KINDS if t.counts[k])
            for t in talks
        ]

    @property
    def minutes(self) -> float:
        return max(self.last - self.first, 0.0) / 60

    def rate(self, count: int) -> str:
        """`count` a minute over the recording's span."""
        return f"{count / self.minutes:.1f}/min" if self.minutes > 0 else "—/min"


def tally(records: Iterable[dict[str, Any]]) -> Tally:
    """The recording's tally, read as a stream."""
    found = Tally()
    read(records, found.add)
    return found


def _grouped(name: str) -> bool:
    return name == GROUP or name.startswith(GROUP + "/")


def _said(tally: Tally, talk: Talk, kind: str) -> str:
    """`reads 12 · 0.4/min: pods 8, nodes 4`."""
    count = talk.counts[kind]
    said = f"{WORDS[kind]} {count}"
    if not count:
        return said
    said += f" · {tally.rate(count)}"
    top = talk.targets[kind].most_common(TOP_RESOURCES)
    return said + ": " + ", ".join(f"{target} {n}" for target, n in top)


def map_picture(tally: Tally, title: str = "Who talks to whom") -> Svg:
    """The map of `tally` (`tally`) as a picture."""
    talks = sorted(tally.talks.values(), key=lambda t: (-t.total, t.component))
    grouped = [t for t in talks if _grouped(t.component)]
    cards = [t for t in talks if not _grouped(t.component)]
    panel_h = 48 + len(grouped) * ROW_H if grouped else 0
    body = max(panel_h, len(cards) * (CARD_H + 16), API_H + 200)
    svg = Svg(CARD_X + CARD_W + 30, TOP + body + 30, title)
    total = sum(t.total for t in talks)
    svg.text(20, 34, title, size=22, bold=True)
    svg.text(
        20,
        62,
        f"{counted(len(talks), 'component')}, {counted(total, 'request')} over "
        f"{tally.minutes:.1f} minutes. Each line: a component and the API server, "
        "thicker for more requests.",
        size=SIZE,
        fill=MUTED,
    )
    svg.text(
        20,
        84,
        "reads: GET and LIST · watches: WATCH · writes: CREATE, UPDATE, PATCH, "
        "DELETE · n/min: over the recording · then the top resources",
        size=SIZE,
        fill=MUTED,
    )
    api_y = TOP + body / 2 - API_H / 2
    anchors = _panel(svg, tally, grouped) + _cards(svg, tally, cards, body)
    _edges(svg, anchors, api_y)
    _api_server(svg, tally, api_y, total)
    return svg


def _panel(svg: Svg, tally: Tally, talks: list[Talk]) -> list[tuple[Talk, float, float]]:
    """The controller manager's panel; each row's edge anchor (its right end)."""
    if not talks:
        return []
    anchors: list[tuple[Talk, float, float]] = []
    svg.rect(
        LEFT,
        TOP,
        PANEL_W,
        48 + len(talks) * ROW_H,
        rx=10,
        fill="#f0fdf4",
        stroke=colour(GROUP),
        stroke_width=1.5,
    )
    svg.text(
        LEFT + 16,
        TOP + 30,
        "controller-manager: its controllers, informers and leader election",
        size=15,
        bold=True,
        fill=colour(GROUP),
    )
    for index, talk in enumerate(talks):
        top = TOP + 48 + index * ROW_H
        name = talk.component.partition("/")[2] or "controller-manager (itself)"
        with svg.group(class_="node", **_data(talk)):
            svg.title_of(talk.component)
            if index % 2:
                svg.rect(LEFT + 2, top, PANEL_W - 4, ROW_H, fill="#dcfce7")
            svg.text(
                LEFT + 16,
                top + 20,
                fit(name, 380, SIZE),
                size=SIZE,
                bold=True,
                fill=colour(talk.component),
            )
            svg.text(
                LEFT + PANEL_W - 16,
                top + 20,
                f"{_requests(talk.total)} · {tally.rate(talk.total)}",
                size=SMALL,
                fill=MUTED,
                anchor="end",
            )
            line = "   |   ".join(_said(tally, talk, k) for k in KINDS if talk.counts[k])
            svg.text(LEFT + 16, top + 40, fit(line, PANEL_W - 32, SMALL), size=SMALL, fill=INK)
        anchors.append((talk, LEFT + PANEL_W, top + ROW_H / 2))
    return anchors


def _cards(
    svg: Svg, tally: Tally, talks: list[Talk], body: float
) -> list[tuple[Talk, float, float]]:
    """Every other client's card; each card's edge anchor (its left end)."""
    anchors: list[tuple[Talk, float, float]] = []
    spacing = body / max(len(talks), 1)
    for index, talk in enumerate(talks):
        top = TOP + index * spacing + (spacing - CARD_H) / 2
        with svg.group(class_="node", **_data(talk)):
            svg.title_of(talk.component)
            svg.rect(
                CARD_X,
                top,
                CARD_W,
                CARD_H,
                rx=10,
                fill="#ffffff",
                stroke=colour(talk.component),
                stroke_width=2,
            )
            svg.rect(CARD_X, top, 8, CARD_H, fill=colour(talk.component))
            svg.text(
                CARD_X + 20,
                top + 22,
                fit(talk.component, 360, 15),
                size=15,
                bold=True,
                fill=colour(talk.component),
            )
            svg.text(
                CARD_X + CARD_W - 14,
                top + 22,
                f"{_requests(talk.total)} · {tally.rate(talk.total)}",
                size=SMALL,
                fill=MUTED,
                anchor="end",
            )
            for line, kind in enumerate(KINDS):
                svg.text(
                    CARD_X + 20,
                    top + 45 + line * 19,
                    fit(_said(tally, talk, kind), CARD_W - 34, SMALL),
                    size=SMALL,
                )
        anchors.append((talk, CARD_X, top + CARD_H / 2))
    return anchors


def _requests(count: int) -> str:
    return counted(count, "request")


def _data(talk: Talk) -> dict[str, object]:
    return {
        "data_component": talk.component,
        "data_total": talk.total,
        **{f"data_{WORDS[kind]}": talk.counts[kind] for kind in KINDS},
    }


def _edges(svg: Svg, anchors: list[tuple[Talk, float, float]], api_y: float) -> None:
    """A line from each node to the API server's facing side."""
    sides = {True: [], False: []}  # type: dict[bool, list[tuple[Talk, float, float]]]
    for anchor in anchors:
        sides[anchor[1] < API_X].append(anchor)
    for left, ends in sides.items():
        x = API_X if left else API_X + API_W
        for index, (talk, ax, ay) in enumerate(ends):
            y = api_y + 12 + (API_H - 24) * (index + 0.5) / len(ends)
            thickness = min(1 + math.log2(talk.total + 1) / 1.5, 7)
            with svg.group(class_="edge", data_component=talk.component):
                svg.line(
                    [(ax, ay), (x, y)],
                    colour(talk.component),
                    stroke_width=thickness,
                    stroke_opacity=0.55,
                    stroke_linecap="round",
                )


def _api_server(svg: Svg, tally: Tally, top: float, total: int) -> None:
    with svg.group(class_="api-server", data_component=API_SERVER):
        svg.rect(
            API_X,
            top,
            API_W,
            API_H,
            rx=12,
            fill="#eff6ff",
            stroke=colour(API_SERVER),
            stroke_width=3,
        )
        middle = API_X + API_W / 2
        svg.text(
            middle,
            top + 50,
            "API server",
            size=20,
            bold=True,
            anchor="middle",
            fill=colour(API_SERVER),
        )
        svg.text(middle, top + 76, counted(total, "request"), size=SIZE, anchor="middle")
        svg.text(middle, top + 96, counted(len(tally.talks), "client"), size=SIZE, anchor="middle")
    if not tally.stored:
        return
    etcd_top = top + API_H + 90
    with svg.group(class_="etcd", data_component=ETCD, data_stored=tally.stored):
        svg.line(
            [(API_X + API_W / 2, top + API_H), (API_X + API_W / 2, etcd_top)],
            colour(ETCD),
            stroke_width=3,
        )
        svg.rect(
            API_X + 30,
            etcd_top,
            API_W - 60,
            64,
            rx=12,
            fill="#fffbeb",
            stroke=colour(ETCD),
            stroke_width=2,
        )
        svg.text(
            API_X + API_W / 2,
            etcd_top + 28,
            "etcd",
            size=18,
            bold=True,
            anchor="middle",
            fill=colour(ETCD),
        )
        svg.text(
            API_X + API_W / 2,
            etcd_top + 50,
            f"{counted(tally.stored, 'write')} it recorded",
            size=SMALL,
            anchor="middle",
        )
