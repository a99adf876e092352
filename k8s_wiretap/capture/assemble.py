"""Records in, exchanges out: the one place a recording's records become exchanges.

A recording interleaves the records of many exchanges (request, response, events, end,
tied together by `id`; their kinds and fields: `records.py`). `Assembler.feed(record)`
takes them one at a time, as the proxy writes them or as a file is read, and says what
changed (`Update`), so every consumer — the reader, the console, the analysis, the TUI's
index — sees the same exchanges, open ones included. A record whose request was never
recorded (a recording made before the proxy recorded rejected requests, or cut at the
front; with `keep=False`, one that comes after its exchange's end) still makes an
exchange: the method and path are unknown, everything else is kept, and a warning says
so. Notes and etcd's records are kept aside (`notes`, `etcd`) for whoever reads them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from k8s_wiretap.capture import records
from k8s_wiretap.capture.exchange import (
    Body,
    End,
    EtcdChange,
    Exchange,
    Request,
    Response,
    StreamEvent,
)

__all__ = ["Assembler", "Update"]

RecordKind = Literal["request", "response", "event", "end"]


@dataclass(slots=True)  # not frozen: one a record, and a frozen __init__ costs 4x
class Update:
    """`exchange` changed: its `record` ("request", "response", "event" or "end") arrived;
    `began`: that record began it (its request, or the first record of one whose request
    was not recorded); `event`: the event an "event" record made."""

    exchange: Exchange
    record: RecordKind
    began: bool = False
    event: StreamEvent | None = None


@dataclass
class Assembler:
    """Assembles exchanges from records. `keep=False` forgets an exchange once it has ended
    (a console that runs for days must not hold every exchange); `events=False` hands
    each event on in its `Update` and does not add it to its exchange (the TUI's index,
    which keeps rows, not exchanges, over watches that stream for days)."""

    keep: bool = True
    events: bool = True
    exchanges: list[Exchange] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)
    etcd: list[EtcdChange] = field(default_factory=list)  # what etcd itself recorded
    warnings: list[str] = field(default_factory=list)
    _open: dict[str, Exchange] = field(default_factory=dict)

    def feed(self, record: dict[str, Any]) -> Update | None:
        """Take one record; the update it makes (None for a header or a note). A record
        that is malformed (a field missing or of the wrong type, bytes that are not base64)
        is skipped with a warning: the rest of the recording still reads."""
        try:
            return self._feed(record)
        except (KeyError, ValueError, TypeError, AttributeError) as error:
            kind, exchange = record.get("record"), record.get("id", "")
            self.warnings.append(f"skipped a malformed {kind} record of {exchange}: {error!r}")
            return None

    def _feed(self, record: dict[str, Any]) -> Update | None:
        kind = record.get("record")
        if kind == "note":
            self.notes.append(record)
            return None
        if kind == "etcd":
            self.etcd.append(EtcdChange.from_record(cast(records.Etcd, record)))
            return None
        if kind == "request":
            request = Request.from_record(cast(records.Request, record))
            return Update(self._new(Exchange(str(record["id"]), request)), "request", True)
        if kind not in ("response", "event", "end"):
            return None
        exchange = self._open.get(str(record.get("id", "")))
        began = exchange is None
        if exchange is None:
            exchange = self._orphan(record)
        if kind == "response":
            exchange.response = Response.from_record(cast(records.Response, record))
            return Update(exchange, "response", began)
        if kind == "event":
            event = stream_event(cast(records.Event, record))
            if self.events:
                exchange.events.append(event)
            return Update(exchange, "event", began, event)
        exchange.end = End.from_record(cast(records.End, record))
        if not self.keep:
            del self._open[exchange.id]
        return Update(exchange, "end", began)

    def feed_all(self, records: Iterable[dict[str, Any]]) -> None:
        for record in records:
            self.feed(record)

    @property
    def open(self) -> list[Exchange]:
        """Exchanges that have not ended yet (a watch still streaming, say)."""
        return [e for e in self._open.values() if e.end is None]

    @property
    def holding(self) -> int:
        """How many exchanges it holds for records still to come (ended ones too when
        `keep`)."""
        return len(self._open)

    def _new(self, exchange: Exchange) -> Exchange:
        self._open[exchange.id] = exchange
        if self.keep:
            self.exchanges.append(exchange)
        return exchange

    def _orphan(self, record: dict[str, Any]) -> Exchange:
        exchange_id = str(record.get("id", ""))
        self.warnings.append(
            f"{record.get('record')} record for exchange {exchange_id} whose request was "
            "not recorded: shown with an unknown method and path"
        )
        request = Request(float(record.get("time") or 0.0), "", "", unrecorded=True)
        return self._new(Exchange(exchange_id, request))


def stream_event(record: records.Event) -> StreamEvent:
    body = Body.from_record(record.get("data")) or Body(b"", 0)
    return StreamEvent(
        int(record["seq"]),
        float(record["time"]),
        str(record["kind"]),
        body,
        bool(record.get("from_client")),
        bool(record.get("incomplete")),
    )
