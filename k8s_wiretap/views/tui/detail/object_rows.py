"""An object's history in the TUI: its rows in the index, read back and turned around.

The TUI holds no analysis of the whole recording (the list's summaries come from a stream,
`listing/explaining.py`, that forgets as it goes; the detail pane explains a window of
the file, `listing/window.py`). An object's timeline is made from the rows that can
carry it, found in the index's columns, not by reading the file:

- the requests on the object itself or a subresource of it (`deployments/scale` of
  `web`: its writes, its GETs);
- the requests on its collection, in its namespace or all namespaces: a create (a POST
  names no object in its path), the LISTs and watches whose items and events carry it.

Only those rows' records are read back (by offset, as the detail pane reads its window),
with the first `/version` exchange (which release the bodies are decoded as) and etcd's
records of their time, one at a time, as a stream: `explain/objects.history_streamed`
keeps of them only the object's versions and its writes, explained as they come (memory
bounded by its versions, not by how many exchanges carried it), and tells every version,
its changes, its write, the write's explanation and managedFields.

Which object an exchange is about is found from its own records (and the `/version`
exchange's, for the release its body is decoded as), kept per row.

Why a write was made needs more than the object's own exchanges: its causal chain runs
through other objects (a ReplicaSet's status, a Pod's binding). `because` asks the
window around the write (`Windows.around`, the detail pane's: kept, so asking again
for writes near each other costs nothing), as the chain view does.

`Timelines` keeps, per object, the rows found (extended with the rows added since: a
followed recording) and the history made from them, made again only when those rows
changed (a new row, a watch's new events, an exchange that ended): for the `KEEP` objects
last asked for, so that memory stays bounded however many are opened.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from k8s_wiretap.capture.assemble import Assembler
from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.reader import Recording
from k8s_wiretap.errors import UsageError
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.objects import ObjectHistory, history_streamed
from k8s_wiretap.kube.refs import ObjectRef
from k8s_wiretap.views.tui.listing.index import RecordingIndex
from k8s_wiretap.views.tui.listing.window import Windows

__all__ = ["Timelines", "object_of"]

ETCD_MARGIN = 5.0  # seconds of etcd's records read either side of the object's rows
KEEP = 8  # objects whose rows and history are kept (the last asked for)
BECAUSE_KEPT = 512  # writes whose causal chain is kept


def object_of(analysis: Analysis, exchange: Exchange) -> ObjectRef | str:
    """The one object `exchange` is about, or why it has none (a path that is no
    resource, a list or a watch of many)."""
    info = exchange.info
    if not info.resource:
        return f"{exchange.path.split('?')[0]} is not a Kubernetes object: no history"
    obj = _object(analysis.response_body(exchange).value)
    if obj is None and info.verb == "create":
        obj = _object(analysis.request_body(exchange).value)
    if not info.name and obj is None:
        return f"a {info.verb or 'request'} of {info.resource} is about many objects: no history"
    return analysis.ref(exchange, obj)


def _object(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict) and isinstance(value.get("metadata"), dict):
        return None if value.get("kind") == "Status" else value
    return None


@dataclass
class _Found:
    """An object's rows, found up to row `scanned`, and the history made from them."""

    rows: list[int] = field(default_factory=list)
    scanned: int = 0
    stamp: tuple[int, ...] = ()
    history: ObjectHistory | None = None


class Timelines:
    """Objects' histories over an index, made on demand and kept per object."""

    def __init__(self, index: RecordingIndex, windows: Windows, lock: threading.Lock) -> None:
        """`windows` and `lock`: the detail pane's (one window kept, used by one thread)."""
        self.index, self.windows, self.lock = index, windows, lock
        self._found: dict[ObjectRef, _Found] = {}
        self._because: dict[str, list[str]] = {}
        self._objects: dict[int, ObjectRef | str] = {}  # the object of a row
        self._mutex = threading.Lock()  # the histories are made in workers

    def object_at(self, position: int) -> ObjectRef | str:
        """The object of the exchange at row `position` (or why it has none), from its
        own records and the first `/version` exchange's (the release its body is decoded
        as): the detail pane's window is left as it is."""
        kept = self._objects.get(position)
        if kept is not None:
            return kept
        index = self.index
        wanted = sorted({position} | ({index.release} if index.release is not None else set()))
        records = index.records(wanted, math.inf, -math.inf)  # no etcd record
        assembler = Assembler()
        assembler.feed_all(records[1:])
        analysis = Analysis.of(Recording(records[0], assembler.exchanges))
        exchange = next(e for e in assembler.exchanges if e.id == index.rows.ids.id_of(position))
        found = object_of(analysis, exchange)
        if len(self._objects) >= BECAUSE_KEPT:
            self._objects.clear()
        self._objects[position] = found
        return found

    def history(self, ref: ObjectRef) -> ObjectHistory:
        """Every version of `ref` the recording shows so far (made again only when its
        rows changed)."""
        with self._mutex:
            return self._history(ref)

    def _history(self, ref: ObjectRef) -> ObjectHistory:
        found = self._kept(ref)
        self._scan(ref, found)
        stamp = self._stamp(found.rows)
        if found.history is None or stamp != found.stamp:
            found.history = self._made(ref, found.rows)
            found.stamp = stamp
        return found.history

    def rows_of(self, ref: ObjectRef) -> list[int]:
        """The rows that can carry `ref` (its own requests, its collection's)."""
        with self._mutex:
            found = self._kept(ref)
            self._scan(ref, found)
            return list(found.rows)

    def _kept(self, ref: ObjectRef) -> _Found:
        """`ref`'s rows and history, the last asked for; the `KEEP` last objects kept."""
        found = self._found.pop(ref, None) or _Found()
        self._found[ref] = found
        while len(self._found) > KEEP:
            del self._found[next(iter(self._found))]
        return found

    def known_because(self, exchange_id: str) -> list[str] | None:
        """The causal chain of a write if it has been found (`because`), else None."""
        return self._because.get(exchange_id)

    def because(self, exchange_id: str) -> list[str] | None:
        """The causal chain of a write, as its explanations, nearest first up to the root,
        over the window around it (None: not among the index's rows)."""
        kept = self._because.get(exchange_id)
        if kept is not None:
            return kept
        position = self.index.by_id.get(exchange_id)
        if position is None:
            return None
        with self.lock:
            explainer, exchanges = self.windows.around(position)
            exchange = exchanges.get(exchange_id)
            if exchange is None:
                return None
            chain = explainer.chains.chain(exchange)
            said = [explainer.summaries.explain(e).summary for e in reversed(chain[:-1])]
        if len(self._because) >= BECAUSE_KEPT:
            self._because.clear()
        self._because[exchange_id] = said
        return said

    def position(self, exchange_id: str) -> int | None:
        return self.index.by_id.get(exchange_id)

    # -- finding and reading the rows -------------------------------------------------------
    def _scan(self, ref: ObjectRef, found: _Found) -> None:
        rows = self.index.rows
        count = len(rows)
        if found.scanned >= count:
            return
        wanted = _matcher(rows.strings, ref)
        resource, namespace, name = (rows.codes[n] for n in ("resource", "namespace", "name"))
        found.rows.extend(
            n for n in range(found.scanned, count) if wanted(resource[n], namespace[n], name[n])
        )
        found.scanned = count

    def _stamp(self, positions: list[int]) -> tuple[int, ...]:
        """What changes when the rows' records do: how many, their events, how many ended."""
        rows = self.index.rows
        events = sum(rows.events[p] for p in positions)
        ended = sum(1 for p in positions if rows.ended[p] == rows.ended[p])  # not NaN
        return (len(positions), events, ended)

    def _made(self, ref: ObjectRef, positions: list[int]) -> ObjectHistory:
        """`ref`'s history from the records of `positions`, read as a stream."""
        name = f"{ref.resource}.{ref.group}" if ref.group else ref.resource
        try:
            return history_streamed(self._records(positions), f"{name}/{ref.name}", ref.namespace)
        except UsageError:  # its rows carry no version of it (a GET that found nothing)
            return ObjectHistory(ref, ref.resource, [])

    def _records(self, positions: list[int]) -> Iterator[dict[str, Any]]:
        """The header, the records of `positions` and of the first `/version` exchange,
        and etcd's records of their time, in file order; one at a time (the file is read
        with `pread`: no lock needed)."""
        index, rows = self.index, self.index.rows
        wanted = set(positions)
        if index.release is not None:
            wanted.add(index.release)
        spans: list[tuple[int, int]] = []
        for position in wanted:
            row_spans = rows.spans(position)
            spans += zip(row_spans[::2], row_spans[1::2], strict=True)
        if positions:
            times = [rows.time[p] for p in positions]
            since, until = min(times) - ETCD_MARGIN, max(times) + ETCD_MARGIN
            etcd = index.etcd
            spans += [
                (int(etcd[at + 1]), int(etcd[at + 2]))
                for at in range(0, len(etcd), 3)
                if since <= etcd[at] <= until
            ]
        yield index.header
        for offset, length in sorted(spans):
            yield index.read(offset, length)


def _matcher(strings: dict[str, Any], ref: ObjectRef) -> Callable[[int, int, int], bool]:
    """A test of a row's (resource, namespace, name) codes: does it carry `ref`?"""
    resources = strings["resource"].values
    names = strings["name"].values
    namespaces = strings["namespace"].values
    own = {
        code
        for code, text in enumerate(resources)
        if text == ref.resource or text.startswith(f"{ref.resource}/")
    }
    whole = {code for code, text in enumerate(resources) if text == ref.resource}

    def wanted(resource: int, namespace: int, name: int) -> bool:
        if resource not in own:
            return False
        where = namespaces[namespace]
        if names[name] == ref.name and where == ref.namespace:
            return True  # the object itself, or one of its subresources
        # its collection: creates, LISTs and watches, here or in all namespaces
        return not names[name] and resource in whole and where in (ref.namespace, "")

    return wanted
