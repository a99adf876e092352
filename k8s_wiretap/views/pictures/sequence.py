"""The sequence picture: a range of exchanges as a sequence diagram.

Lifelines: the components that send or receive in the range (in the order they first do),
the API server, and etcd when the recording holds etcd's record of a write in the range.
Messages, top to bottom in time: each request (solid, component → API server), each
response with its status (API server → component), each write etcd recorded (API server →
etcd, its key and revision), and the watch events the API server delivered in the range
(dashed): those of the watches the range opens, and those that set off its writes.

The range is `Range`: FROM:TO, each an exchange id or a 1-based position in `explain`'s
order; by default the first `DEFAULT` exchanges from the first kubectl command. One pass,
keeping only the range's rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from k8s_wiretap.errors import UsageError
from k8s_wiretap.views.pictures.rows import Enough, Row, read
from k8s_wiretap.views.pictures.svg import API_SERVER, ETCD, INK, MUTED, Svg, colour, fit

__all__ = [
    "DEFAULT",
    "LONGEST",
    "BadRange",
    "Message",
    "Range",
    "messages",
    "range_rows",
    "sequence_picture",
]

DEFAULT = 40
LONGEST = 200  # exchanges: a range longer than that is no picture
LEFT, TOP = 110, 150
SPACING = 200
STEP = 32
ETCD_ROOM = 300  # right of etcd's lifeline: its messages' labels run on
SIZE, SMALL = 13, 12


class BadRange(UsageError):
    """A range that cannot be drawn: unknown ends, backwards, too long."""


@dataclass(frozen=True, slots=True)
class Range:
    """A range of exchanges, FROM:TO as given: each end an exchange id, a 1-based
    position, or None (the default)."""

    start: str | int | None = None
    end: str | int | None = None

    @classmethod
    def parse(cls, said: str) -> Range:
        start, colon, end = said.partition(":")
        if not colon or not start or not end:
            raise BadRange(f"--range {said}: give FROM:TO (exchange ids or 1-based positions)")
        span = cls(_end(start), _end(end))
        if isinstance(span.start, int) and isinstance(span.end, int):
            if span.start > span.end:
                raise BadRange(f"--range {said}: FROM comes after TO")
            if span.end - span.start >= LONGEST:
                raise BadRange(f"--range {said}: at most {LONGEST} exchanges")
        return span


def _end(said: str) -> str | int:
    if said.isdigit():
        if int(said) < 1:
            raise BadRange(f"--range: positions count from 1, not {said}")
        return int(said)
    return said


def _is(row: Row, end: str | int | None) -> bool:
    return row.position == end if isinstance(end, int) else row.id == end


def range_rows(records: Iterable[dict[str, Any]], span: Range) -> list[Row]:
    """The rows of `span`, read as a stream (with their watch events)."""
    kept: list[Row] = []
    early = False  # TO came before FROM was seen

    def keep(row: Row) -> None:
        nonlocal early
        if not kept:
            started = row.component == "kubectl" if span.start is None else _is(row, span.start)
            early = early or (not started and span.end is not None and _is(row, span.end))
            if not started:
                return
            if early:
                raise BadRange(f"--range: {span.end} comes before {span.start}")
        kept.append(row)
        done = len(kept) >= DEFAULT if span.end is None else _is(row, span.end)
        if done:
            raise Enough
        if len(kept) >= LONGEST:
            raise BadRange(f"--range: {span.end} is not within {LONGEST} exchanges of {span.start}")

    read(records, keep, events=True)
    if not kept:
        where = "no kubectl command" if span.start is None else f"no exchange {span.start}"
        raise BadRange(f"--range: {where} in the recording")
    if span.end is not None and not _is(kept[-1], span.end):
        raise BadRange(f"--range: no exchange {span.end} after {span.start} in the recording")
    return kept


@dataclass(frozen=True, slots=True)
class Message:
    time: float
    sender: str
    receiver: str
    label: str
    kind: str  # request, response, etcd, event
    exchange: str


def _request(row: Row) -> str:
    return " ".join(part for part in (row.verb.upper(), row.target, row.name) if part)


def _response(row: Row) -> str:
    status = row.status or 0
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    said = f"{status} {phrase}".strip()
    return said + (", events follow" if row.verb == "watch" and status < 300 else "")


def messages(rows: list[Row]) -> list[Message]:
    """The range's messages in time order."""
    first = rows[0].time
    last = max(_answered(row) for row in rows)
    seen: set[tuple[str, int]] = set()  # watch events drawn: (watch, index)
    found: list[Message] = []
    for row in rows:
        found += _exchange(row)
        for event in row.events:
            if first <= event.time <= last and (row.id, event.index) not in seen:
                seen.add((row.id, event.index))
                label = f"{event.type} {event.kind} {event.name}".strip()
                found.append(Message(event.time, API_SERVER, row.component, label, "event", row.id))
        hop = row.cause
        if hop is None or not hop.watch or hop.event is None or hop.time < first:
            continue
        if (hop.watch, hop.event) not in seen:
            seen.add((hop.watch, hop.event))
            label = f"{hop.type} {hop.object}"
            found.append(Message(hop.time, API_SERVER, hop.watcher, label, "event", hop.watch))
    order = {"request": 0, "etcd": 1, "response": 2, "event": 3}
    return sorted(found, key=lambda m: (m.time, order[m.kind]))


def _answered(row: Row) -> float:
    """When the answer came: a watch's at once (its events follow), else at its end."""
    return row.time if row.verb == "watch" or row.end is None else row.end


def _exchange(row: Row) -> list[Message]:
    """The exchange's request, etcd's record of it, and its response."""
    said = [Message(row.time, row.component, API_SERVER, _request(row), "request", row.id)]
    if row.etcd is not None:
        said.append(Message(_answered(row), API_SERVER, ETCD, row.etcd, "etcd", row.id))
    if row.status is not None:
        response = _response(row)
        said.append(
            Message(_answered(row), API_SERVER, row.component, response, "response", row.id)
        )
    return said


def _lifelines(said: list[Message]) -> list[str]:
    clients: list[str] = []
    for message in said:
        for who in (message.sender, message.receiver):
            if who not in (API_SERVER, ETCD) and who not in clients:
                clients.append(who)
    etcd = [ETCD] if any(m.kind == "etcd" for m in said) else []
    return [*clients, API_SERVER, *etcd]


def sequence_picture(rows: list[Row], title: str | None = None) -> Svg:
    """The range `rows` make (`range_rows`) as a sequence diagram."""
    said = messages(rows)
    lifelines = _lifelines(said)
    x = {who: LEFT + SPACING / 2 + index * SPACING for index, who in enumerate(lifelines)}
    height = TOP + 30 + len(said) * STEP + 40
    title = title or f"Exchanges {rows[0].position} to {rows[-1].position}" + (
        f": {rows[0].command}" if rows[0].command else ""
    )
    room = ETCD_ROOM if ETCD in lifelines else 20
    svg = Svg(LEFT + len(lifelines) * SPACING + room, height, title)
    svg.text(20, 34, title, size=22, bold=True)
    svg.text(20, 60, fit(f"From: {rows[0].summary}", svg.width - 40, SIZE), size=SIZE)
    svg.text(
        20,
        82,
        fit(
            "Solid: requests and responses (with their status) · dashed: watch "
            "events the API server delivered · left: ms since the first request",
            svg.width - 40,
            SIZE,
        ),
        size=SIZE,
        fill=MUTED,
    )
    for who in lifelines:
        _lifeline(svg, who, x[who], height)
    for index, message in enumerate(said):
        _message(svg, message, x, TOP + 30 + index * STEP + STEP / 2, rows[0].time)
    return svg


def _lifeline(svg: Svg, who: str, x: float, height: float) -> None:
    owner, _, name = who.rpartition("/")
    if who == API_SERVER:
        owner, name = "", "API server"
    with svg.group(class_="lifeline", data_component=who):
        svg.line(
            [(x, TOP), (x, height - 20)], colour(who), stroke_width=1.5, stroke_dasharray="2 4"
        )
        svg.rect(
            x - SPACING / 2 + 8,
            TOP - 48,
            SPACING - 16,
            48,
            rx=8,
            fill="#ffffff",
            stroke=colour(who),
            stroke_width=2,
        )
        svg.text(
            x,
            TOP - (26 if owner else 18),
            fit(name, SPACING - 28, SIZE),
            size=SIZE,
            bold=True,
            anchor="middle",
            fill=colour(who),
        )
        if owner:
            svg.text(
                x, TOP - 8, fit(owner, SPACING - 28, SMALL), size=SMALL, anchor="middle", fill=MUTED
            )


def _message(svg: Svg, message: Message, x: dict[str, float], y: float, start: float) -> None:
    x1, x2 = x[message.sender], x[message.receiver]
    rightwards = x2 > x1
    stroke = colour(message.sender if message.kind == "request" else message.receiver)
    failed = message.kind == "response" and message.label[:1] not in "123"
    stroke = "#b91c1c" if failed else stroke
    dash = "7 5" if message.kind == "event" else None
    with svg.group(class_=f"message {message.kind}", data_exchange=message.exchange):
        svg.text(
            LEFT - 16,
            y + 4,
            f"+{(message.time - start) * 1000:.0f} ms",
            size=SMALL,
            anchor="end",
            fill=MUTED,
        )
        svg.line([(x1, y), (x2, y)], stroke, arrow=True, stroke_width=2, stroke_dasharray=dash)
        anchor = "start" if rightwards else "end"
        room = SPACING * 2.4
        svg.text(
            x1 + (10 if rightwards else -10),
            y - 6,
            fit(message.label, room, SMALL),
            size=SMALL,
            anchor=anchor,
            fill="#b91c1c" if failed else INK,
            halo=True,
        )
