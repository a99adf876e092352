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

Related also are what a controller's own code links an object to: the Namespace of an
object in it (for the controllers `by_namespace` in controllers.yaml: the namespace
controller empties a terminating one, others fill a new one), the pods a
PodDisruptionBudget or a Service selects (by labels), the Service an Endpoints or
EndpointSlice is for, the pod a TokenRequest is bound to, the node a Binding names, the
ServiceAccount a token Secret is for, and for a client whose work queue holds an owner
(`queue` in controllers.yaml: the deployment controller syncs a Deployment on an event of any
of its ReplicaSets) every other object that owner owns: the old ReplicaSet of a rollout is
scaled down on an event of the new one, whose pods came up. A write that failed (a 409, a
403) has its cause too: it was a reaction all the same; only a write that succeeded can
cause another. A client that waits on purpose before acting (`delay` in controllers.yaml:
the namespace controller's 5 s) is linked to the latest event before that wait.

An object an informer's LIST gave a component counts as an event too (`LISTED`): an
informer that lists then watches (client-go before its watch lists, 1.20) hands each
listed object to its controller as added, which reacts to it as to a watch event.

A client unknown to `controllers.yaml` but kubectl (a third-party controller, an operator)
is taken at its word: its writes are linked to the events its own watches received.

Of the events that could have set a write off, one another client's write made is chosen
before the write's own client's echo (its own last write, come back to it), which only a
write nothing else explains is linked to (the namespace controller's next round) — or one
whose other events came before the event that set off the write echoed: the client had
already acted on them then (the deployment controller's status update, echoed 20 ms after
`kubectl set image`, explains its next write better than an old ReplicaSet's event of
seconds before, which it had handled long since).

Nothing is invented: a write with no such event has no cause, and when other events could
explain it as well (within `TIE` of the chosen one, on other objects), the cause says how
many (`alternatives`). Instead it may have a `Reason` (`reason`): a retry of the same
client's write of the same object that failed shortly before, else what `controllers.yaml`
says the client does unprompted (a timer, its start-up). The controller manager's
controllers receive their events through the shared informers, whose watches carry their
own User-Agent suffix (`shared-informers`, `metadata-informers`).

An exchange an audit log gave (`import audit`: `Exchange.audit_only`) had its client's
watches go unrecorded: the log holds no watch events. Its cause is taken from the writes
instead: in a recording with such exchanges, every successful write whose answer names its
object (level RequestResponse, or a proxied write of a joined recording) stands for the
event the API server then sent every watcher of that object (`INFERRED`:
its type from the verb, its resourceVersion the write's). Such a cause is weaker evidence
than a recorded event — the write was seen, its delivery was not — and says so
(`inferred`); a recorded event, where there is one, is always preferred.

Writes are taken in time order, each linked only to what came before it. Over a stream
(`keep=False`, `explain/stream.py`) memory stays bounded: `forget` drops the watch events
older than `WINDOW` before the next write (they can no longer be a cause), the writes older
than twice that but each object's latest (a late informer's ADDED carries its version),
and every chain but those of the writes kept. What stays for good is, per object, its uids
and ownerReferences — the size of the cluster, not of the recording.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache, lru_cache
from operator import attrgetter
from typing import Any

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.history import Observation
from k8s_wiretap.explain.names import spoken
from k8s_wiretap.kube.controllers import (
    Client,
    Reason,
    client,
    clients,
    longest_delay,
    third_party,
)
from k8s_wiretap.kube.refs import ObjectRef, involved_of, metadata_of, resource_version
from k8s_wiretap.kube.selectors import selector_of, selects
from k8s_wiretap.kube.verbs import WATCH, WRITES

__all__ = ["Cause", "Chains", "Hop", "Reason", "Write"]

WINDOW = 5.0  # seconds: a reaction comes within milliseconds; older events are not a cause
LIST, LISTED, DELETED = (
    "list",
    "LISTED",
    "DELETED",
)  # an Observation's source; a listed object's Hop type
EVENT_MEMORY = 600.0  # seconds an Event's subject is remembered for its next PATCH
RETRY_WINDOW = 60.0  # seconds: a client's work queue retries a failed write within a minute
TIE = 0.005  # seconds: events this close to the chosen one explain the write as well
STARTS = frozenset({LIST, WATCH})  # how an informer begins: what it then hands on
_TIME = attrgetter("time")  # an exchange's (or an event's): a key at C speed, asked log n a sort
INFERRED = ""  # the watcher of a write's inferred event: every watcher of its object
INFERRED_TYPES = {"create": "ADDED", "delete": "DELETED"}  # any other write: MODIFIED
SELECTING = frozenset({("", "services"), ("policy", "poddisruptionbudgets")})  # select pods
SERVICE_NAME = "kubernetes.io/service-name"  # an EndpointSlice's label naming its Service
SERVICE_ACCOUNT = "kubernetes.io/service-account.name"  # a token Secret's annotation
INFORMERS = {
    "controller-manager": (
        "controller-manager/shared-informers",
        "controller-manager/metadata-informers",
        "controller-manager",  # the same, named by their user alone (an audit log's, no agent)
    ),
}


@dataclass(slots=True)
class Hop:
    """A watch event that carried a change to a component, or an object its informer's
    LIST gave it (an informer that lists then watches hands each listed object to its
    controller as added: `LISTED`)."""

    watch: str  # the watch exchange's id (or the list's)
    event: int | None  # the event's index in that exchange (None: an item of a list)
    type: str  # ADDED, MODIFIED, DELETED, LISTED
    ref: ObjectRef
    resource_version: int | None
    time: float
    watcher: str  # the component whose watch it was (INFERRED: any)
    inferred: bool = False  # no recorded event: the write (`watch`) it must have followed

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "watch": None if self.inferred else self.watch,
            "event": self.event,
            "type": self.type,
            "object": str(self.ref),
            "resource_version": self.resource_version,
            "time": self.time,
            "watcher": self.watcher,
        }
        if self.inferred:
            record["inferred_from"] = "resourceVersion"
        return record


@dataclass(slots=True)
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
        if self.hop.inferred:
            record["evidence"] = "inferred from the write's resourceVersion: no watch event"
        return record


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


@dataclass(slots=True)
class _Timeline:
    times: list[float] = field(default_factory=list)
    hops: list[Hop] = field(default_factory=list)

    def add(self, hop: Hop) -> None:
        index = bisect.bisect_right(self.times, hop.time)
        self.times.insert(index, hop.time)
        self.hops.insert(index, hop)

    def forget(self, before: float) -> None:
        index = bisect.bisect_left(self.times, before)
        del self.times[:index], self.hops[:index]


@dataclass(slots=True)
class Write:
    """What the chains keep of a write once its exchange is gone: enough to name it."""

    id: str
    time: float
    component: str
    act: str  # its verb, or "binding"
    chain: tuple[str, ...]  # exchange ids from the root of its tree down to it
    prompted: float | None = None  # when the event that set it off reached its client


class Chains:
    """The causes of every write of an analysis, and the trees they make.

    Writes are taken in time order (`add`, or all of the analysis's at once); the watch
    events come from the analysis's history as it learns them. `keep=False` (a stream)
    holds only what later writes can still need — see `forget`."""

    def __init__(self, analysis: Analysis, *, keep: bool = True) -> None:
        self.analysis = analysis
        self.keep = keep
        self._by_id: dict[str, Exchange] = {}
        self._hops: dict[tuple[str, ObjectRef], _Timeline] = defaultdict(_Timeline)
        self._writes: dict[tuple[ObjectRef, int], Write] = {}
        self._blind_writes: dict[ObjectRef, list[tuple[float, str]]] = defaultdict(list)
        self._made: dict[str, Write] = {}  # write id → what it was
        self._refs_by_uid: dict[str, ObjectRef] = {}
        self._order: dict[ObjectRef, int] = {}  # when each object was first seen
        self._uids: dict[ObjectRef, set[str]] = defaultdict(set)
        self._owners: dict[ObjectRef, set[str]] = defaultdict(set)  # → owner uids
        self._owned: dict[str, set[ObjectRef]] = defaultdict(set)  # owner uid →
        self._causes: dict[str, Cause | None] = {}
        self._reasons: dict[str, Reason | None] = {}
        # (client, object) → its last refused write: time, id, verb, status
        self._failed: dict[tuple[str, ObjectRef], tuple[float, str, str, int]] = {}
        self._pods: dict[str, dict[ObjectRef, dict[str, Any]]] = defaultdict(dict)  # ns → labels
        self._selectors: dict[ObjectRef, dict[str, Any]] = {}
        self._versions: dict[tuple[str, ObjectRef], int] = {}  # the latest each watcher saw
        self._gone: dict[ObjectRef, float] = {}  # deleted objects, when: `forget` lets go
        self._about: dict[ObjectRef, tuple[ObjectRef, float]] = {}  # an Event → what it is about
        self._chains: dict[str, tuple[str, ...]] = {}
        self._children: dict[str, list[str]] = defaultdict(list)
        self._added: set[str] = set()
        self._opened: dict[
            tuple[str, str, str], float
        ] = {}  # audit only: a client's last LIST/WATCH
        # writes stand for their watch events once an audit log's exchanges are in: a
        # joined recording's proxied writes set off the components the log alone shows
        self._inferring = any(e.audit_only for e in analysis.exchanges)
        by_id = {e.id: e for e in analysis.exchanges}
        history = analysis.history
        for ref in history:
            for observation in history.timeline(ref):
                self._take(by_id[observation.exchange], ref, observation)
        analysis.on_observation(self._take)
        for exchange in analysis.exchanges:
            self.add(exchange)

    # -- feeding ----------------------------------------------------------------------------
    def add(self, exchange: Exchange) -> None:
        """Take in `exchange` (once it has ended), after every exchange before it."""
        if exchange.id in self._added:
            return
        _ = self.analysis.history  # every watch event recorded so far, taken in
        self._added.add(exchange.id)
        self._inferring = self._inferring or exchange.audit_only
        self.began(exchange)
        if self.keep:
            self._by_id[exchange.id] = exchange
        reacts = self._reacts(exchange)
        listed = self._listed(exchange) if reacts else None
        cause: Cause | None
        reason: Reason | None
        if listed is not None and listed.unprompted:  # never a reaction: no event is sought
            cause, reason = None, listed
        else:
            cause = self._cause(exchange) if reacts else None
            reason = (self._retry(exchange) or listed) if reacts and cause is None else None
        self._causes[exchange.id] = cause
        self._reasons[exchange.id] = reason
        if reacts and (exchange.status or 0) >= 400:  # what a retry shortly after repeats
            self._failed[(exchange.component, self._aimed(exchange))] = (
                exchange.time,
                exchange.id,
                exchange.info.verb,
                exchange.status or 0,
            )
        elif reacts and self._failed:  # it went through: nothing later retries it
            self._failed.pop((exchange.component, self._aimed(exchange)), None)
        parent = cause.exchange if cause is not None else None
        if parent is not None and self.keep:
            self._children[parent].append(exchange.id)
        chain = (*self._chains.get(parent, ()), exchange.id) if parent else (exchange.id,)
        if exchange.id in chain[:-1]:  # a cycle would be a bug; never loop on it
            chain = (exchange.id,)
        self._chains[exchange.id] = chain
        if self._is_write(exchange):
            self._index_write(exchange, chain, cause.hop.time if cause is not None else None)

    def began(self, exchange: Exchange) -> None:
        """Take in that an audit-only LIST or WATCH began (a stream, which explains a watch
        when it ends, says so as soon as it is first in line): `_initial` needs it."""
        info = exchange.info
        if exchange.audit_only and info.verb in STARTS:
            self._opened[(exchange.component, info.group, info.resource)] = exchange.time

    def forget(self, before: float) -> None:
        """Drop what no write at `before` or later can need: watch events older than
        `WINDOW` before it, writes older than twice that (but each object's latest, which
        an informer that starts late still sees), and the chains of the exchanges gone."""
        for key, timeline in list(self._hops.items()):
            timeline.forget(before - WINDOW - longest_delay())
            if not timeline.times:
                del self._hops[key]
        horizon = before - 2 * WINDOW
        latest: dict[ObjectRef, Write] = {}
        for (ref, _), write in self._writes.items():
            if ref not in latest or write.time > latest[ref].time:
                latest[ref] = write
        self._writes = {
            key: w for key, w in self._writes.items() if w.time >= horizon or latest[key[0]] is w
        }
        for ref, blind in list(self._blind_writes.items()):  # found by time, within WINDOW
            del blind[: bisect.bisect_left(blind, (horizon, ""))]
            if not blind:
                del self._blind_writes[ref]
        kept = {w.id for w in self._writes.values()}
        kept |= {i for blind in self._blind_writes.values() for _, i in blind}
        self._made = {i: w for i, w in self._made.items() if i in kept or w.time >= horizon}
        for held in (self._causes, self._chains, self._reasons):
            for exchange_id in [i for i in held if i not in self._made]:
                del held[exchange_id]
        self._added &= set(self._causes)
        self._failed = {k: f for k, f in self._failed.items() if f[0] >= before - RETRY_WINDOW}
        self._about = {e: a for e, a in self._about.items() if a[1] >= before - EVENT_MEMORY}
        for ref in [r for r, when in self._gone.items() if when < horizon]:
            del self._gone[ref]
            self._forget_object(ref)

    # -- questions --------------------------------------------------------------------------
    def exchange(self, exchange_id: str) -> Exchange:
        return self._by_id[exchange_id]

    def write(self, exchange_id: str) -> Write:
        """What a write that caused another was (kept after its exchange is gone)."""
        return self._made[exchange_id]

    def written(self, ref: ObjectRef, version: int | None, seen: float) -> str | None:
        """The id of the write whose answer carried `ref` at `version` (a subresource's
        answer, a Scale, carries its object's version too); failing one, the write that
        answered with no object (a delete's Status, a binding) shortly before `seen`."""
        found = self._writes.get((ref, version)) if version is not None else None
        if found is not None:
            return found.id
        blind = self._blind_writes.get(ref, [])
        index = bisect.bisect_right(blind, (seen, "\uffff"))
        if index and seen - blind[index - 1][0] <= WINDOW:
            return blind[index - 1][1]
        return None

    def caused_by(self, exchange: Exchange) -> Cause | None:
        self.add(exchange)
        return self._causes.get(exchange.id)

    def reason(self, exchange: Exchange) -> Reason | None:
        """Why a write no watch event explains happened: a retry, a timer, a start-up."""
        self.add(exchange)
        return self._reasons.get(exchange.id)

    def said(self, exchange: Exchange) -> str:
        """What set `exchange` off, in words (the summaries' `{cause}`)."""
        cause = self.caused_by(exchange)
        if cause is None:
            reason = self.reason(exchange)
            if reason is None:
                return "no watch event explains it, and no timer or start-up is known for it"
            return f"{_REASONS.get(reason.kind, reason.kind)}: {reason.says}"
        hop = cause.hop
        kind = self.analysis.resources.kind_of(hop.ref.group, hop.ref.resource) or hop.ref.resource
        where = f"{hop.ref.namespace}/{hop.ref.name}" if hop.ref.namespace else hop.ref.name
        if hop.inferred:
            return self._said_inferred(exchange, hop, f"{kind} {where}")
        seen = f"{hop.type} of {kind} {where}"
        if hop.type == LISTED:
            seen = f"{kind} {where} in its informer's LIST"
        ms = (exchange.time - hop.time) * 1000
        known = client(exchange.component)
        waited = f", which it acts on {known.delay:g} s after" if known and known.delay else ""
        if cause.exchange is None:
            return f"the {seen} reached it {ms:.0f} ms before{waited}"
        writer = self.write(cause.exchange)
        own = "its own " if cause.own else f"{spoken(writer.component)}'s "
        return f"the {seen} after {own}{writer.act} reached it {ms:.0f} ms before{waited}"

    def _said_inferred(self, exchange: Exchange, hop: Hop, what: str) -> str:
        """A cause from the writes alone: what was written, and that its event is inferred."""
        writer = self.write(hop.watch)
        version = f" (resourceVersion {hop.resource_version})" if hop.resource_version else ""
        wrote = f"{spoken(writer.component)}'s {writer.act}{version} of {what}"
        unseen = "(inferred: the audit log holds no watch events)"
        ms = (exchange.time - hop.time) * 1000
        if hop.type == LISTED:
            return (
                f"{wrote}, handed to it by the LIST or watch it began {ms:.0f} ms before {unseen}"
            )
        return f"{wrote} {ms:.0f} ms before, as the {hop.type} its watch must have had {unseen}"

    def children(self, exchange: Exchange) -> list[Exchange]:
        return [self._by_id[i] for i in self._children.get(exchange.id, ())]

    def chain_ids(self, exchange: Exchange) -> tuple[str, ...]:
        """The ids from the root of the tree `exchange` is in, down to `exchange`."""
        self.add(exchange)
        return self._chains.get(exchange.id, (exchange.id,))

    def chain(self, exchange: Exchange) -> list[Exchange]:
        """From the root of the tree `exchange` is in, down to `exchange`."""
        return [self._by_id[i] for i in self.chain_ids(exchange)]

    def tree(self, root: Exchange) -> list[Exchange]:
        """Every exchange `root` set off, directly or not, in time order."""
        found, todo = [], [root]
        while todo:
            found.append(node := todo.pop())
            todo += self.children(node)
        return sorted(found[1:], key=lambda e: e.time)

    def to_json(self, exchange: Exchange) -> dict[str, Any]:
        self.add(exchange)  # once, for `caused_by`, `reason` and `chain_ids` alike
        exchange_id = exchange.id
        cause = self._causes.get(exchange_id)
        record: dict[str, Any] = {"caused_by": None}
        if cause is not None:
            made = self._made[cause.exchange].time if cause.exchange else None
            record["caused_by"] = cause.to_json(made, exchange.time)
        reason = self._reasons.get(exchange_id)
        record["reason"] = reason.to_json() if reason is not None else None
        record["chain"] = list(self._chains.get(exchange_id, (exchange_id,)))
        return record

    # -- the index --------------------------------------------------------------------------
    def _index_write(
        self, exchange: Exchange, chain: tuple[str, ...], prompted: float | None
    ) -> None:
        info = exchange.info
        act = "binding" if info.subresource == "binding" else info.verb
        write = Write(exchange.id, exchange.time, exchange.component, act, chain, prompted)
        self._made[exchange.id] = write
        version = resource_version(self._object(exchange))
        target = self._target(exchange)
        if version is None:  # a Status (a binding, a delete): known by time only
            bisect.insort(self._blind_writes[target], (exchange.time, exchange.id))
        else:  # a subresource's answer (a Scale) carries its object's version too
            self._writes.setdefault((target, version), write)
        if self._inferring and target.name:  # what its watchers got, unrecorded
            kind = INFERRED_TYPES.get(info.verb, "MODIFIED")
            hop = Hop(exchange.id, None, kind, target, version, exchange.time, INFERRED, True)
            self._hops[(INFERRED, target)].add(hop)

    def _take(self, exchange: Exchange, ref: ObjectRef, observation: Observation) -> None:
        order = self._order.setdefault(ref, len(self._order))
        if observation.uid:
            known = self._refs_by_uid.get(observation.uid)
            if known is None or order >= self._order[known]:  # as the history is ordered
                self._refs_by_uid[observation.uid] = ref
            self._uids[ref].add(observation.uid)
        for owner in _owner_uids(observation.object):
            self._owners[ref].add(owner)
            self._owned[owner].add(ref)
        if observation.source == WATCH and observation.event is not None:
            kind = self.analysis.events(exchange)[observation.event].type
        elif observation.source == LIST:
            kind = LISTED
        else:
            self._learn_labels(ref, observation.object)
            return
        seen = (observation.component, ref)
        version = observation.resource_version
        if kind == DELETED:  # its labels stay while its deletion can still be a cause
            self._gone[ref] = observation.time
            self._versions.pop(seen, None)
        else:
            self._learn_labels(ref, observation.object)
            if version is not None:
                if kind == LISTED and version <= self._versions.get(seen, -1):
                    return  # a relist of what its watch already gave it: no change to act on
                self._versions[seen] = max(version, self._versions.get(seen, -1))
        hop = Hop(
            observation.exchange,
            observation.event,
            kind,
            ref,
            observation.resource_version,
            observation.time,
            observation.component,
        )
        self._hops[(observation.component, ref)].add(hop)

    def _forget_object(self, ref: ObjectRef) -> None:
        """A deleted pod's labels, a deleted Service's or budget's selector."""
        pods = self._pods.get(ref.namespace)
        if pods is not None:
            pods.pop(ref, None)
            if not pods:
                del self._pods[ref.namespace]
        self._selectors.pop(ref, None)

    def _learn_labels(self, ref: ObjectRef, obj: Any) -> None:
        """A pod's labels and a selecting object's selector (the size of the cluster)."""
        if not isinstance(obj, dict):
            return
        if (ref.group, ref.resource) == ("", "pods"):
            labels = metadata_of(obj).get("labels")
            self._pods[ref.namespace][ref] = dict(labels) if isinstance(labels, dict) else {}
        elif (ref.group, ref.resource) in SELECTING:
            selector = selector_of(obj)
            if selector is not None:
                self._selectors[ref] = selector

    # -- one exchange -----------------------------------------------------------------------
    def _reacts(self, exchange: Exchange) -> bool:
        """A write that was answered, whatever it was answered: a reaction of its client."""
        info = exchange.info
        return info.is_resource_request and info.verb in WRITES and exchange.status is not None

    def _is_write(self, exchange: Exchange) -> bool:
        """A write that changed something: answered 2xx, and no dry run (which tells no
        watcher, so it is no one's cause)."""
        status, info = exchange.status, exchange.info
        return (
            info.is_resource_request
            and info.verb in WRITES
            and status is not None
            and status < 300
            and not info.dry_run
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

    def _carried(self, exchange: Exchange) -> Any:
        """The object the write answered with; for a refused one, the object it sent."""
        obj = self._object(exchange)
        if obj is None and exchange.status is not None and exchange.status >= 300:
            sent = self.analysis.request_body(exchange).value
            meta = sent.get("metadata") if isinstance(sent, dict) else None
            if isinstance(meta, dict):  # a body sent seldom names its namespace: the URL does
                namespace = meta.get("namespace") or exchange.info.namespace
                return {**sent, "metadata": {**meta, "namespace": namespace}}
        return obj

    def _cause(self, exchange: Exchange) -> Cause | None:
        known = client(exchange.component)
        if known is None and not third_party(exchange.component):
            return None
        obj = self._carried(exchange)
        target = self.analysis.ref(exchange, obj)
        watched = [
            ref
            for ref in self._related(exchange, target, obj, known)
            if known is None or known.watches_resource(ref.group, ref.resource)
        ]
        before = exchange.time - (known.delay if known else 0)
        candidates = self._candidates(
            _informers(known) if known else (exchange.component,), watched, before
        )
        if not candidates and exchange.audit_only:
            candidates = self._candidates((INFERRED,), watched, before)
            if not candidates:
                candidates = self._initial(known, exchange.component, watched, before)
        if not candidates:
            return None
        writes = {id(h): h.watch if h.inferred else self._write_of(h) for h in candidates}
        echoes = {
            id(h)
            for h in candidates
            if (by := writes[id(h)]) is not None and self._made[by].component == exchange.component
        }
        # what it had already acted on when it made a write echoed here (an event older
        # than the one that set that write off) is no better a cause than the echo
        acted = max(
            [p for h in candidates if id(h) in echoes if (p := self._prompted(writes[id(h)]))],
            default=None,
        )
        others_ = [
            h for h in candidates if id(h) not in echoes and (acted is None or h.time >= acted)
        ]
        chosen = max(others_ or candidates, key=_TIME)
        others = len(
            [
                h
                for h in candidates
                if h is not chosen and h.ref != chosen.ref and chosen.time - h.time <= TIE
            ]
        )
        return Cause(chosen, writes[id(chosen)], others, id(chosen) in echoes)

    def _prompted(self, write: str | None) -> float | None:
        """When the event that set `write` off reached its client."""
        return self._made[write].prompted if write is not None else None

    def _candidates(
        self, watchers: tuple[str, ...], watched: list[ObjectRef], before: float
    ) -> list[Hop]:
        """The latest event each watcher had of each object, within `WINDOW` of `before`."""
        found = []
        hops = self._hops
        for watcher in watchers:  # `_latest` of each, inlined: five an exchange
            for ref in watched:
                timeline = hops.get((watcher, ref))
                if timeline is None:
                    continue
                index = bisect.bisect_left(timeline.times, before)
                if index and before - timeline.times[index - 1] <= WINDOW:
                    found.append(timeline.hops[index - 1])
        return found

    def _initial(
        self, known: Client | None, component: str, watched: list[ObjectRef], before: float
    ) -> list[Hop]:
        """Audit only: the objects a LIST or WATCH its client began shortly before handed
        it (an informer's list, or a watch list's initial events), each as the write that
        made its version — however long before that was."""
        found = []
        for watcher in _informers(known) if known else (component,):
            for ref in watched:
                opened = self._opened.get((watcher, ref.group, ref.resource))
                if opened is None or not 0 <= before - opened <= WINDOW:
                    continue
                timeline = self._hops.get((INFERRED, ref))
                index = bisect.bisect_left(timeline.times, opened) if timeline else 0
                if timeline and index:
                    made = timeline.hops[index - 1]
                    hop = Hop(made.watch, None, LISTED, ref, made.resource_version, opened, watcher)
                    hop.inferred = True
                    found.append(hop)
        return found

    def _write_of(self, hop: Hop) -> str | None:
        """The write that produced the event's resourceVersion."""
        if hop.resource_version is not None:
            found = self._writes.get((hop.ref, hop.resource_version))
            if found is not None:
                return found.id
        blind = self._blind_writes.get(hop.ref, [])
        index = bisect.bisect_left(blind, (hop.time, ""))
        if index and hop.time - blind[index - 1][0] <= WINDOW:
            return blind[index - 1][1]
        return None

    def _related(
        self, exchange: Exchange, target: ObjectRef, obj: Any, known: Client | None
    ) -> list[ObjectRef]:
        """The target, its owners, what it owns, for an Event what it is about, and what
        the module's docstring lists (namespace, selected pods, Service, bound pod, node)."""
        related = {target}
        queued = known.queue if known is not None else None
        for uid in {*_owner_uids(obj), *self._owners.get(target, ())}:
            if uid in self._refs_by_uid:
                owner = self._refs_by_uid[uid]
                related.add(owner)
                if (owner.group, owner.resource) == queued:  # its sync writes any of them
                    related |= self._owned.get(uid, set())
        for uid in self._uids.get(target, ()):
            related |= self._owned.get(uid, set())
        involved = _involved(obj, self.analysis)
        if involved is not None:
            self._about[target] = (involved, exchange.time)
        elif target in self._about:  # an Event's PATCH (its next count) that names none
            involved = self._about[target][0]
        if involved is not None:
            related.add(involved)
        if target.namespace and known is not None and known.by_namespace:
            related.add(ObjectRef("", "namespaces", "", target.namespace))
        service = _service_of(target, obj)
        for selecting in (target, service) if service else (target,):
            related |= self._selected(selecting, obj if selecting is target else None)
        if service is not None:
            related.add(service)
        related |= _named_in_request(target, self.analysis.request_body(exchange).value)
        return sorted(related)

    def _selected(self, ref: ObjectRef, obj: Any) -> set[ObjectRef]:
        """The pods a Service or PodDisruptionBudget selects, by the labels seen."""
        if (ref.group, ref.resource) not in SELECTING:
            return set()
        selector = selector_of(obj) if obj is not None else None
        if selector is None:
            selector = self._selectors.get(ref)
        if selector is None:
            return set()
        pods = self._pods.get(ref.namespace, {})
        return {pod for pod, labels in pods.items() if selects(selector, labels)}

    def _aimed(self, exchange: Exchange) -> ObjectRef:
        """The object a write is about, refused or not."""
        return self.analysis.ref(exchange, self._carried(exchange))

    def _retry(self, exchange: Exchange) -> Reason | None:
        """The same client's refused write of the same object, shortly before."""
        failed = self._failed.get((exchange.component, self._aimed(exchange)))
        if failed is None or exchange.time - failed[0] > RETRY_WINDOW:
            return None
        when, refused, verb, status = failed
        if verb != exchange.info.verb:  # another write of it (an Event's next PATCH)
            return None
        after = f"{exchange.time - when:.1f} s"
        says = f"it sends its {verb} again, {after} after the API server refused it ({status})"
        return Reason("retry", says, exchange=refused)

    def _listed(self, exchange: Exchange) -> Reason | None:
        """What controllers.yaml says the client does unprompted, for such a write. A
        binary named without its part (the controller manager by its user alone, in an
        audit log without User-Agents) whose own entry says nothing of it is the one part
        of it that does such a write unprompted, when only one does (its leader election's
        Lease renewals)."""
        info = exchange.info
        about = _about_kind(self._carried(exchange))
        what = (info.verb, info.group, info.resource, info.subresource, about)
        return _unprompted(exchange.component, what)


def _owner_uids(obj: Any) -> list[str]:
    if not isinstance(obj, dict):
        return []
    owners = metadata_of(obj).get("ownerReferences") or []
    return [str(o["uid"]) for o in owners if isinstance(o, dict) and o.get("uid")]


def _involved(obj: Any, analysis: Analysis) -> ObjectRef | None:
    """What an Event is about (`involvedObject`, or `regarding` in events.k8s.io)."""
    if not isinstance(obj, dict) or obj.get("kind") != "Event":
        return None
    about = involved_of(obj)
    if about is None or not about.get("name"):
        return None
    served = analysis.resources.resource_of(
        str(about.get("apiVersion", "")), str(about.get("kind", ""))
    )
    if served is None:
        return None
    return ObjectRef(
        served.group, served.resource, str(about.get("namespace") or ""), str(about["name"])
    )


_REASONS = {
    "timer": "a timer",
    "start-up": "its start-up",
    "resync": "a resync",
    "retry": "a retry",
}


def _service_of(target: ObjectRef, obj: Any) -> ObjectRef | None:
    """The Service an Endpoints (its namesake) or an EndpointSlice (by its label) is for."""
    if (target.group, target.resource) == ("", "endpoints") and target.name:
        return ObjectRef("", "services", target.namespace, target.name)
    if (target.group, target.resource) == ("discovery.k8s.io", "endpointslices"):
        labels = metadata_of(obj).get("labels") if isinstance(obj, dict) else None
        name = labels.get(SERVICE_NAME) if isinstance(labels, dict) else None
        if name:
            return ObjectRef("", "services", target.namespace, str(name))
    return None


def _about_kind(obj: Any) -> str:
    """The kind an Event is about ("" for anything else)."""
    if not isinstance(obj, dict) or obj.get("kind") != "Event":
        return ""
    about = involved_of(obj)
    return str(about.get("kind") or "") if about is not None else ""


def _named_in_request(target: ObjectRef, sent: Any) -> set[ObjectRef]:
    """The pod a TokenRequest is bound to; the node a Binding places its pod on; the
    ServiceAccount a token Secret is for (1.20's tokens controller makes one for each)."""
    if not isinstance(sent, dict):
        return set()
    annotations = metadata_of(sent).get("annotations")
    account = annotations.get(SERVICE_ACCOUNT) if isinstance(annotations, dict) else None
    if account and (target.group, target.resource) == ("", "secrets"):
        return {ObjectRef("", "serviceaccounts", target.namespace, str(account))}
    spec = sent.get("spec")
    bound = spec.get("boundObjectRef") if isinstance(spec, dict) else None
    if isinstance(bound, dict) and bound.get("kind") == "Pod" and bound.get("name"):
        return {ObjectRef("", "pods", target.namespace, str(bound["name"]))}
    node = sent.get("target") if sent.get("kind") == "Binding" else None
    if isinstance(node, dict) and node.get("kind") == "Node" and node.get("name"):
        return {ObjectRef("", "nodes", "", str(node["name"]))}
    return set()


def _informers(known: Client) -> tuple[str, ...]:
    return INFORMERS.get(known.component, (known.component,))


@cache
@lru_cache(maxsize=4096)
def _unprompted(component: str, what: tuple[str, str, str, str, str]) -> Reason | None:
    """`Chains._listed` of a write `what` (verb, group, resource, subresource, the kind an
    Event is about) by `component`: a look at its entry's reasons, or its parts', made once
    for each (controllers.yaml does not change)."""
    known = client(component)
    said = known.reason(*what) if known is not None else None
    if said is not None:
        return said
    found = [r for part in _parts(component) if (r := part.reason(*what))]
    return found[0] if len(found) == 1 else None


@lru_cache(maxsize=1024)
def _parts(binary: str) -> tuple[Client, ...]:
    """The clients controllers.yaml names as parts of `binary` (`controller-manager/...`):
    found once for each binary (a look at every known client, asked of most writes)."""
    if "/" in binary:
        return ()
    prefix = f"{binary}/"
    return tuple([c for name, c in clients().items() if name.startswith(prefix)])
