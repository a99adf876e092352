"""Causal chains: which exchange set off which, through which watch event.

Kubernetes components do not call each other: a write changes an object, the API server
sends the new version as a watch event to every component watching it, and a component's
reaction is a write of its own. So an exchange W2 (a write by component C) is caused by the
latest watch event that reached C, shortly before W2, on an object W2 is about or related
to (the same object, its owner, an object it owns — by ownerReferences —, or for an Event
the object it is about), of a resource C watches (`kube/data/controllers.yaml`). That
event carries a resourceVersion; the write that produced it is found through the history's
(object, resourceVersion) index, or, when the write answered with no object (a binding
answers with a Status), as the latest such write on the object before the event.

Nothing is invented: a write with no such event has no cause (a user, a resync, a timer),
and when other events could explain it as well (within `TIE` of the chosen one, on other
objects), the cause says how many (`alternatives`). The controller manager's controllers
receive their events through the shared informers, whose watches carry their own
User-Agent suffix (`shared-informers`, `metadata-informers`).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.decode.history import Observation
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.kube.controllers import Client, client
from k8s_wiretap.kube.refs import ObjectRef, resource_version

__all__ = ["Cause", "Chains", "Hop"]

WRITES = frozenset({"create", "update", "patch", "delete", "deletecollection"})
WINDOW = 5.0  # seconds: a reaction comes within milliseconds; older events are not a cause
TIE = 0.005  # seconds: events this close to the chosen one explain the write as well
INFORMERS = {
    "controller-manager": (
        "controller-manager/shared-informers",
        "controller-manager/metadata-informers",
    ),
}


@dataclass(frozen=True, slots=True)
class Hop:
    """A watch event that carried a change to a component."""

    watch: str  # the watch exchange's id
    event: int  # the event's index in that exchange
    type: str  # ADDED, MODIFIED, DELETED
    ref: ObjectRef
    resource_version: int | None
    time: float
    watcher: str  # the component whose watch it was

    def to_json(self) -> dict[str, Any]:
        return {
            "watch": self.watch,
            "event": self.event,
            "type": self.type,
            "object": str(self.ref),
            "resource_version": self.resource_version,
            "time": self.time,
            "watcher": self.watcher,
        }


@dataclass(frozen=True, slots=True)
class Cause:
    """Why an exchange happened: the event that reached its component, and the write
    (`exchange`, None when the recording has not got it) that made that event."""

    hop: Hop
    exchange: str | None
    alternatives: int = 0  # other events as close to the write, on other objects
    own: bool = False  # the change was the component's own write, come back to it

    def to_json(self, made: float | None, reacted: float) -> dict[str, Any]:
        record: dict[str, Any] = {
            "exchange": self.exchange,
            "event": self.hop.to_json(),
            "delivered_ms": _ms(self.hop.time - made) if made is not None else None,
            "reacted_ms": _ms(reacted - self.hop.time),
        }
        if self.alternatives:
            record["ambiguous"] = True
            record["alternatives"] = self.alternatives
        if self.own:
            record["own_change"] = True
        return record


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


@dataclass
class _Timeline:
    times: list[float] = field(default_factory=list)
    hops: list[Hop] = field(default_factory=list)


class Chains:
    """The causes of every write of an analysis, and the trees they make."""

    def __init__(self, analysis: Analysis) -> None:
        self.analysis = analysis
        self._by_id = {e.id: e for e in analysis.exchanges}
        self._hops: dict[tuple[str, ObjectRef], _Timeline] = defaultdict(_Timeline)
        self._writes: dict[tuple[ObjectRef, int], str] = {}
        self._blind_writes: dict[ObjectRef, list[tuple[float, str]]] = defaultdict(list)
        self._refs_by_uid: dict[str, ObjectRef] = {}
        self._uids: dict[ObjectRef, set[str]] = defaultdict(set)
        self._owners: dict[ObjectRef, set[str]] = defaultdict(set)  # → owner uids
        self._owned: dict[str, set[ObjectRef]] = defaultdict(set)  # owner uid →
        self._causes: dict[str, Cause | None] = {}
        self._children: dict[str, list[str]] = defaultdict(list)
        self._index()
        for exchange in analysis.exchanges:
            cause = self._cause(exchange) if self._is_write(exchange) else None
            self._causes[exchange.id] = cause
            if cause is not None and cause.exchange is not None:
                self._children[cause.exchange].append(exchange.id)

    # -- questions --------------------------------------------------------------------------
    def exchange(self, exchange_id: str) -> Exchange:
        return self._by_id[exchange_id]

    def caused_by(self, exchange: Exchange) -> Cause | None:
        return self._causes.get(exchange.id)

    def children(self, exchange: Exchange) -> list[Exchange]:
        return [self._by_id[i] for i in self._children.get(exchange.id, ())]

    def chain(self, exchange: Exchange) -> list[Exchange]:
        """From the root of the tree `exchange` is in, down to `exchange`."""
        path, seen = [exchange], {exchange.id}
        while (cause := self._causes.get(path[-1].id)) is not None and cause.exchange:
            if cause.exchange in seen:  # a cycle would be a bug; never loop on it
                break
            seen.add(cause.exchange)
            path.append(self._by_id[cause.exchange])
        return path[::-1]

    def tree(self, root: Exchange) -> list[Exchange]:
        """Every exchange `root` set off, directly or not, in time order."""
        found, todo = [], [root]
        while todo:
            found.append(node := todo.pop())
            todo += self.children(node)
        return sorted(found[1:], key=lambda e: e.time)

    def to_json(self, exchange: Exchange) -> dict[str, Any]:
        cause = self.caused_by(exchange)
        record: dict[str, Any] = {"caused_by": None}
        if cause is not None:
            made = self._by_id[cause.exchange].time if cause.exchange else None
            record["caused_by"] = cause.to_json(made, exchange.time)
        record["chain"] = [e.id for e in self.chain(exchange)]
        return record

    # -- the index --------------------------------------------------------------------------
    def _index(self) -> None:
        history = self.analysis.history
        for ref in history:
            for observation in history.timeline(ref):
                self._take(ref, observation)
        for timeline in self._hops.values():
            order = sorted(range(len(timeline.times)), key=timeline.times.__getitem__)
            timeline.times = [timeline.times[i] for i in order]
            timeline.hops = [timeline.hops[i] for i in order]
        for exchange in self.analysis.exchanges:
            if not self._is_write(exchange):
                continue
            version = resource_version(self._object(exchange))
            target = self._target(exchange)
            if version is None:  # a Status (a binding, a delete): known by time only
                self._blind_writes[target].append((exchange.time, exchange.id))
            else:  # a subresource's answer (a Scale) carries its object's version too
                self._writes.setdefault((target, version), exchange.id)

    def _take(self, ref: ObjectRef, observation: Observation) -> None:
        if observation.uid:
            self._refs_by_uid[observation.uid] = ref
            self._uids[ref].add(observation.uid)
        for owner in _owner_uids(observation.object):
            self._owners[ref].add(owner)
            self._owned[owner].add(ref)
        if observation.source == "watch" and observation.event is not None:
            event = self.analysis.events(self._by_id[observation.exchange])[observation.event]
            hop = Hop(
                observation.exchange,
                observation.event,
                event.type,
                ref,
                observation.resource_version,
                observation.time,
                observation.component,
            )
            timeline = self._hops[(observation.component, ref)]
            timeline.times.append(hop.time)
            timeline.hops.append(hop)

    # -- one exchange -----------------------------------------------------------------------
    def _is_write(self, exchange: Exchange) -> bool:
        status = exchange.status
        return (
            exchange.info.is_resource_request
            and exchange.info.verb in WRITES
            and status is not None
            and status < 300
        )

    def _object(self, exchange: Exchange) -> Any:
        value = self.analysis.response_body(exchange).value
        return (
            value
            if isinstance(value, dict)
            and isinstance(value.get("metadata"), dict)
            and value.get("kind") != "Status"
            else None
        )

    def _target(self, exchange: Exchange) -> ObjectRef:
        return self.analysis.ref(exchange, self._object(exchange))

    def _cause(self, exchange: Exchange) -> Cause | None:
        known = client(exchange.component)
        if known is None:
            return None
        target = self._target(exchange)
        candidates: list[Hop] = []
        for watcher in _informers(known):
            for ref in self._related(target, self._object(exchange)):
                if not known.watches_resource(ref.group, ref.resource):
                    continue
                hop = self._latest(watcher, ref, exchange.time)
                if hop is not None:
                    candidates.append(hop)
        if not candidates:
            return None
        chosen = max(candidates, key=lambda h: h.time)
        others = sum(
            1
            for h in candidates
            if h is not chosen and h.ref != chosen.ref and chosen.time - h.time <= TIE
        )
        by = self._write_of(chosen)
        own = by is not None and self._by_id[by].component == exchange.component
        return Cause(chosen, by, others, own)

    def _latest(self, watcher: str, ref: ObjectRef, before: float) -> Hop | None:
        timeline = self._hops.get((watcher, ref))
        if timeline is None:
            return None
        index = bisect.bisect_left(timeline.times, before)
        if index == 0 or before - timeline.times[index - 1] > WINDOW:
            return None
        return timeline.hops[index - 1]

    def _write_of(self, hop: Hop) -> str | None:
        """The write that produced the event's resourceVersion."""
        if hop.resource_version is not None:
            found = self._writes.get((hop.ref, hop.resource_version))
            if found is not None:
                return found
        blind = self._blind_writes.get(hop.ref, [])
        index = bisect.bisect_left(blind, (hop.time, ""))
        if index and hop.time - blind[index - 1][0] <= WINDOW:
            return blind[index - 1][1]
        return None

    def _related(self, target: ObjectRef, obj: Any) -> list[ObjectRef]:
        """The target, its owners, what it owns, and for an Event what it is about."""
        related = {target}
        for uid in {*_owner_uids(obj), *self._owners.get(target, ())}:
            if uid in self._refs_by_uid:
                related.add(self._refs_by_uid[uid])
        for uid in self._uids.get(target, ()):
            related |= self._owned.get(uid, set())
        involved = _involved(obj, self.analysis)
        if involved is not None:
            related.add(involved)
        return sorted(related)


def _owner_uids(obj: Any) -> list[str]:
    if not isinstance(obj, dict):
        return []
    owners = (obj.get("metadata") or {}).get("ownerReferences") or []
    return [str(o["uid"]) for o in owners if isinstance(o, dict) and o.get("uid")]


def _involved(obj: Any, analysis: Analysis) -> ObjectRef | None:
    """What an Event is about (`involvedObject`, or `regarding` in events.k8s.io)."""
    if not isinstance(obj, dict) or obj.get("kind") != "Event":
        return None
    about = obj.get("involvedObject") or obj.get("regarding")
    if not isinstance(about, dict) or not about.get("name"):
        return None
    served = analysis.resources.resource_of(
        str(about.get("apiVersion", "")), str(about.get("kind", ""))
    )
    if served is None:
        return None
    return ObjectRef(
        served.group, served.resource, str(about.get("namespace") or ""), str(about["name"])
    )


def _informers(known: Client) -> tuple[str, ...]:
    return INFORMERS.get(known.component, (known.component,))
