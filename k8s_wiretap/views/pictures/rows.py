"""What the pictures know of an exchange: a `Row`, made as the recording is explained.

`read` explains a recording as a stream (`explain/stream.explained`, as `explain --format
json` does) and hands each exchange's row, in the order `explain` prints them, to a sink;
a picture keeps only the rows it draws. A sink that has all it needs raises `Enough`.
The fields are those of `explain --format json` (views/json.py) a picture uses.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from k8s_wiretap.capture.assemble import Assembler
from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.decode.body import Decoded
from k8s_wiretap.explain.explainer import Explainer
from k8s_wiretap.explain.stream import explained

__all__ = ["Enough", "Event", "Hop", "Row", "kind_of", "read", "target_of"]

READS = frozenset({"get", "list"})
WRITES = frozenset({"create", "update", "patch", "delete", "deletecollection"})


class Enough(Exception):
    """Raised by a sink that needs no more rows."""


@dataclass(frozen=True, slots=True)
class Hop:
    """`caused_by`: the watch event that set the exchange off, and the write behind it."""

    exchange: str | None  # the write
    watch: str | None  # the watch that delivered the event (None: inferred)
    event: int | None  # its index in the watch
    delivered_ms: float | None
    reacted_ms: float
    type: str  # ADDED, MODIFIED, ...
    object: str
    time: float
    watcher: str


@dataclass(frozen=True, slots=True)
class Event:
    """One event a watch delivered."""

    index: int
    type: str
    kind: str
    name: str
    time: float


@dataclass(slots=True)
class Row:
    id: str
    time: float
    end: float | None
    component: str
    verb: str
    resource: str
    subresource: str
    namespace: str
    name: str
    status: int | None
    summary: str
    non_resource: bool
    path: str
    cause: Hop | None
    chain: tuple[str, ...]
    etcd: str | None  # "key @revision", where the recording holds etcd's record of it
    command: str
    events: tuple[Event, ...] = ()
    position: int = 0  # 1-based, in `explain`'s order

    @property
    def kind(self) -> str:
        """What the exchange does: a read, a watch, a write, or other."""
        return kind_of(self.verb)

    @property
    def target(self) -> str:
        """Its resource (and subresource), or its path when it is not about one."""
        resource = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        return target_of(resource, self.path, self.non_resource)


def kind_of(verb: str) -> str:
    """What an exchange of `verb` does: a read, a watch, a write, or other."""
    if verb in READS:
        return "read"
    if verb == "watch":
        return "watch"
    return "write" if verb in WRITES else "other"


def target_of(resource: str, path: str, non_resource: bool = False) -> str:
    """What an exchange is about: its resource (`pods/status`), or its path (no query) when
    it is about none."""
    if non_resource or not resource:
        return path.split("?")[0] or "/"
    return resource


def _no_body(decoded: Decoded) -> None:
    return None


def _name(explainer: Explainer, exchange: Exchange) -> str:
    """The object's name: the path's, else the created object's (its answer's)."""
    name = exchange.info.name
    if name or exchange.info.verb != "create":
        return name
    answer = explainer.analysis.response_body(exchange)
    value = answer.value if answer.ok else None
    metadata = value.get("metadata") if isinstance(value, dict) else None
    found = metadata.get("name") if isinstance(metadata, dict) else None
    return found if isinstance(found, str) else ""


def _hop(said: Any) -> Hop | None:
    if not isinstance(said, dict):
        return None
    event = said["event"]
    return Hop(
        said["exchange"],
        event["watch"],
        event["event"],
        said["delivered_ms"],
        said["reacted_ms"],
        event["type"],
        event["object"],
        event["time"],
        event["watcher"],
    )


def _events(explainer: Explainer, exchange: Exchange) -> tuple[Event, ...]:
    found = []
    for index, event in enumerate(explainer.analysis.events(exchange)):
        said = event.summary()
        if said.get("time") is not None:
            found.append(
                Event(index, said["type"], said["kind"] or "", said["name"] or "", said["time"])
            )
    return tuple(found)


def _etcd(said: Any) -> str | None:
    """`explain`'s `etcd` field as "key @revision", when it holds what etcd stored."""
    if not isinstance(said, dict) or "stored" not in said:
        return None
    return f"{said.get('key') or ''} @{said.get('revision')}"


def row(explainer: Explainer, exchange: Exchange, *, events: bool = False) -> Row:
    """The exchange's row (`events`: with its watch events)."""
    info = exchange.info
    said = explainer.to_json(exchange, _no_body)
    etcd = said.get("etcd")
    return Row(
        id=exchange.id,
        time=exchange.time,
        end=exchange.end.time if exchange.end is not None else None,
        component=explainer.analysis.who(exchange).component,
        verb=info.verb,
        resource=info.resource,
        subresource=info.subresource,
        namespace=info.namespace,
        name=_name(explainer, exchange),
        status=exchange.status,
        summary=said.get("summary") or "",
        non_resource=not info.is_resource_request,
        path=exchange.path,
        cause=_hop(said.get("caused_by")),
        chain=tuple(said.get("chain") or (exchange.id,)),
        etcd=_etcd(etcd),
        command=explainer.analysis.who(exchange).command,
        events=_events(explainer, exchange) if events and info.verb == "watch" else (),
    )


def read(
    records: Iterable[dict[str, Any]], sink: Callable[[Row], object], *, events: bool = False
) -> Assembler | None:
    """Every exchange's row to `sink`, in `explain`'s order, positions counted from 1;
    the assembler (its warnings), or None when the sink had `Enough` before the end."""
    position = 0

    def write(made: Row) -> None:
        nonlocal position
        position += 1
        made.position = position
        sink(made)

    try:
        return explained(records, lambda e, x: row(e, x, events=events), write)
    except Enough:
        return None
