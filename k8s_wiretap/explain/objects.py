"""One object's history: every version a recording shows, who wrote each, and why.

A recording holds an object's versions wherever they passed: a write's answer, a GET, a
LIST's item, a watch event (`explain/history.py` keeps them per object). Turned around,
from exchanges to the object, they are its history:

- **Versions**, one per (incarnation, resourceVersion): an object deleted and created again
  under its name is another incarnation (uid), told apart; within one, versions are in
  resourceVersion order (the order etcd wrote them). Each says where it was seen
  (`sightings`: the write's answer, each watch event and LIST that carried it).
- **What changed** from the version before it (`explain/changes.changes_between`: set,
  changed old → new, removed), but the resourceVersion and managedFields, which every
  write changes. The first version seen of an incarnation has no version before it: if it
  is its create's answer, everything in it was set then; if not, the recording joined its
  life later, and its fields are only first seen.
- **Who wrote it**: the write whose answer is that version (its client, as `who.py` names
  it: component, kubectl command, user; its verb, patch type, field manager). A version
  seen only in a watch event, a GET or a LIST was written by a client the proxy did not
  see (one not routed through it): it says so (`write` is None).
- **Why**: the write's explanation, and the causal chain up to its root (`chains.py`):
  "replicas 3 → 5 because the deployment controller scaled … because kubectl scale …".
- **What the server's managedFields say** of that version: the entries that are new, or
  whose time or operation moved, since the version before — the manager the API server
  recorded for the write. Beside our attribution, and where the write's field manager (as
  the request named it, or the API server's default: the User-Agent's program name) is
  not among them, `disagrees` says so.

`field_story` tells one field's story from it, value by value: its value in the first
version of each incarnation (set by the create, or first seen), then each version that
changed it, with its writer and cause. A path no version holds is refused, with the
object's top-level fields.

`find` names an object as people do (`deploy/web -n default`, `deployments/default/web`,
`node/node-1`, a custom resource by its kind or plural); one the recording does not hold
is refused with the closest names it does hold.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from k8s_wiretap.capture.exchange import EtcdChange, Exchange
from k8s_wiretap.errors import UsageError
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.chains import WINDOW
from k8s_wiretap.explain.changes import Changed, changes_between, field_path, leaves, under
from k8s_wiretap.explain.explainer import Explainer
from k8s_wiretap.explain.history import Observation
from k8s_wiretap.explain.stream import explained
from k8s_wiretap.kube.etcd import etcd_key
from k8s_wiretap.kube.media import patch_type
from k8s_wiretap.kube.refs import ObjectRef, metadata_of, resource_version
from k8s_wiretap.kube.resources import ApiResource, Resources
from k8s_wiretap.kube.verbs import WRITES

__all__ = [
    "FieldStep",
    "Lost",
    "Manager",
    "ObjectHistory",
    "Sighting",
    "Version",
    "Writer",
    "field_story",
    "find",
    "history_of",
    "history_streamed",
]

CLOSEST = 5  # names offered for an object the recording does not hold


@dataclass(frozen=True, slots=True)
class Sighting:
    """Where a version was seen: how (`create`, `patch`, `watch`, `list`, `get`, ...),
    in which exchange, by which client."""

    source: str
    exchange: str
    component: str
    time: float

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "exchange": self.exchange,
            "component": self.component,
            "time": self.time,
        }


@dataclass(frozen=True, slots=True)
class Manager:
    """A managedFields entry: who the API server says wrote a set of fields, how, when."""

    manager: str
    operation: str
    subresource: str
    time: str

    @classmethod
    def of(cls, entry: dict[str, Any]) -> Manager:
        return cls(
            str(entry.get("manager") or ""),
            str(entry.get("operation") or ""),
            str(entry.get("subresource") or ""),
            str(entry.get("time") or ""),
        )

    def to_json(self) -> dict[str, str]:
        return {
            "manager": self.manager,
            "operation": self.operation,
            "subresource": self.subresource,
            "time": self.time,
        }

    def __str__(self) -> str:
        on = f" of {self.subresource}" if self.subresource else ""
        when = f", {self.time}" if self.time else ""
        return f"{self.manager} ({self.operation}{on}{when})"


@dataclass(frozen=True, slots=True)
class Lost:
    """A manager that no longer manages some fields at a version (taken over, or gone)."""

    manager: Manager
    fields: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {**self.manager.to_json(), "fields": list(self.fields)}

    def __str__(self) -> str:
        return f"{self.manager.manager} no longer manages {', '.join(self.fields)}"


@dataclass(frozen=True)
class Writer:
    """The write that made a version: who sent it, what it was, why."""

    exchange: Exchange
    component: str
    command: str  # kubectl's Kubectl-Command, if kubectl
    identity: str
    verb: str
    subresource: str
    patch: str | None  # merge, strategic, json, apply
    field_manager: str  # as the request named it, else the API server's default
    summary: str
    because: list[str]  # the causal chain's summaries, nearest first, up to its root
    chain: list[str]  # the chain's exchange ids, root first

    @property
    def who(self) -> str:
        return self.command or self.component

    def to_json(self) -> dict[str, Any]:
        return {
            "exchange": self.exchange.id,
            "component": self.component,
            "command": self.command,
            "identity": self.identity,
            "verb": self.verb,
            "subresource": self.subresource,
            "patch": self.patch,
            "field_manager": self.field_manager,
            "summary": self.summary,
            "because": self.because,
            "chain": self.chain,
        }


@dataclass
class Version:
    uid: str
    resource_version: int | None
    time: float  # first seen
    object: dict[str, Any]
    sightings: list[Sighting]
    writer: Writer | None
    changes: list[Changed]
    first: bool  # the first version of its incarnation the recording shows
    created: bool  # ... and the answer of its create: every field was set by it
    managers: list[Manager] = field(default_factory=list)
    lost: list[Lost] = field(default_factory=list)

    @property
    def disagrees(self) -> bool:
        """Whether the write's field manager is not among the managers managedFields
        record for this version (when it records any)."""
        if self.writer is None or not self.managers:
            return False
        return self.writer.field_manager not in {m.manager for m in self.managers}

    def to_json(self) -> dict[str, Any]:
        return {
            "uid": self.uid,
            "resource_version": self.resource_version,
            "time": self.time,
            "first": self.first,
            "created": self.created,
            "writer": self.writer.to_json() if self.writer else None,
            "changes": [c.to_json() for c in self.changes],
            "managed_fields": [m.to_json() for m in self.managers],
            "no_longer_managed": [lost.to_json() for lost in self.lost],
            "disagrees": self.disagrees,
            "seen": [s.to_json() for s in self.sightings],
        }


@dataclass
class ObjectHistory:
    ref: ObjectRef
    kind: str
    versions: list[Version]  # incarnations in the order they were first seen

    def incarnations(self) -> list[list[Version]]:
        found: dict[str, list[Version]] = {}
        for version in self.versions:
            found.setdefault(version.uid, []).append(version)
        return list(found.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "object": str(self.ref),
            "kind": self.kind,
            "versions": [v.to_json() for v in self.versions],
        }


# -- naming an object ------------------------------------------------------------------------
def find(explainer: Explainer, name: str, namespace: str | None = None) -> ObjectRef:
    """The object `name` names (`TYPE/NAME`, `TYPE/NAMESPACE/NAME`, `TYPE NAME`), in
    `namespace` if given (else the only namespace that holds it, else `default`)."""
    analysis = explainer.analysis
    return _found(analysis.resources, list(analysis.history), name, namespace)


def _found(
    resources: Resources, held: list[ObjectRef], name: str, namespace: str | None
) -> ObjectRef:
    """`find`, among the objects `held`."""
    kind, parts = _split(name)
    types = resources.named(kind)
    if not types:  # a custom resource whose discovery the recording did not carry
        types = [
            ApiResource(r.group, "", r.resource, "", bool(r.namespace))
            for r in {ObjectRef(r.group, r.resource, "", "") for r in held}
            if kind.lower() in (r.resource, f"{r.resource}.{r.group}")
        ]
    if not types:
        raise UsageError(f"no resource type {kind!r} in the recording (nor built in)")
    if len(parts) == 2:
        namespace, parts = parts[0], parts[1:]
    wanted = {(t.group, t.resource) for t in types}
    same = [r for r in held if (r.group, r.resource) in wanted and r.name == parts[0]]
    if namespace is not None:
        same = [r for r in same if r.namespace in (namespace, "")]
    elif len({r.namespace for r in same}) > 1:
        same = [r for r in same if r.namespace in ("default", "")]
    if len(same) == 1 or (same and all(r == same[0] for r in same)):
        return same[0]
    wanted_name = f"{kind}/{parts[0]}" + (f" -n {namespace}" if namespace else "")
    raise UsageError(f"the recording holds no {wanted_name}{_closest(held, parts[0])}")


def _split(name: str) -> tuple[str, list[str]]:
    words = name.replace(" ", "/").split("/")
    words = [w for w in words if w]
    if len(words) not in (2, 3):
        raise UsageError(
            f"{name!r}: name an object as TYPE/NAME (with -n NAMESPACE), "
            "TYPE/NAMESPACE/NAME, or TYPE NAME"
        )
    return words[0], words[1:]


def _closest(held: list[ObjectRef], name: str) -> str:
    said = {_said(r): r for r in held}
    close = difflib.get_close_matches(name, [r.name for r in held], CLOSEST, 0.5)
    found = sorted(s for s, r in said.items() if r.name in close)[:CLOSEST]
    return f"; closest: {', '.join(found)}" if found else ""


def _said(ref: ObjectRef) -> str:
    resource = f"{ref.resource}.{ref.group}" if ref.group else ref.resource
    return f"{resource}/{ref.name}" + (f" -n {ref.namespace}" if ref.namespace else "")


# -- the history -----------------------------------------------------------------------------
def history_of(explainer: Explainer, ref: ObjectRef) -> ObjectHistory:
    """Every version of `ref` the recording shows, each with its changes, writer and why
    (the whole recording in memory: the TUI's; `history_streamed` reads it as a stream)."""
    analysis = explainer.analysis
    by_id = {e.id: e for e in analysis.exchanges}

    def said(exchange_id: str) -> str:
        return explainer.summaries.explain(explainer.chains.exchange(exchange_id)).summary

    def writer_of(seen: list[Observation], version: int | None, when: float) -> Writer | None:
        write = _write(seen, by_id) or _written(explainer, by_id, ref, version, when)
        return _writer(explainer, write, said) if write else None

    kind = analysis.kind_of(ref.group, ref.resource) or ref.resource
    key = _key(ref)
    stored = _stored(analysis, analysis.etcd_changes(key)) if key else []
    return _assembled(ref, kind, [*analysis.history.timeline(ref), *stored], writer_of)


def _key(ref: ObjectRef) -> str | None:
    """Where etcd holds `ref` (a custom resource under its group's prefix)."""
    builtin = Resources.builtin().get(ref.group, ref.resource) is not None
    return etcd_key(ref, builtin=builtin)


def _stored(analysis: Analysis, changes: list[EtcdChange]) -> list[Observation]:
    """etcd's own records of an object (the proxy's `--etcd`), as observations: a version
    a client not routed through the proxy wrote is there too."""
    found = []
    for change in changes:
        if change.deleted:
            continue
        value = analysis.decode_stored(change).value
        if isinstance(value, dict) and isinstance(value.get("metadata"), dict):
            seen = Observation.of(value, change.time, ETCD_RECORD, "", ETCD)
            seen.resource_version = change.revision  # etcd keeps none: its revision is it
            found.append(seen)
    return found


WriterOf = Callable[[list[Observation], int | None, float], "Writer | None"]


def _assembled(
    ref: ObjectRef, kind: str, observations: list[Observation], writer_of: WriterOf
) -> ObjectHistory:
    """The versions of `observations` (one object's), each with its writer."""
    versions: list[Version] = []
    previous: dict[str, Version] = {}
    for (uid, version), seen in _grouped(observations):
        obj = max(seen, key=lambda o: len(o.object)).object  # a whole object, not a partial
        before = previous.get(uid)
        first_seen = min(o.time for o in seen)
        writer = writer_of(seen, version, first_seen)
        made = Version(
            uid,
            version,
            first_seen,
            obj,
            [Sighting(o.source, o.exchange, o.component, o.time) for o in _by_time(seen)],
            writer,
            changes_between(before.object, obj) if before else [],
            before is None,
            before is None and writer is not None and writer.verb == "create",
            _managers(before.object if before else None, obj),
            _lost(before.object if before else None, obj),
        )
        versions.append(made)
        previous[uid] = made
    return ObjectHistory(ref, kind, versions)


# -- the history, from a stream of records -----------------------------------------------------
ETCD, ETCD_RECORD = "etcd", "record"  # a version etcd recorded: a sighting's component, source
RECENT = 600.0  # seconds a write's summary is held for the chains of later writes
HELD = "an earlier write (its summary no longer held)"


def history_streamed(
    records: Iterable[dict[str, Any]], name: str, namespace: str | None = None
) -> ObjectHistory:
    """`find` and `history_of` over a recording read as a stream (`explain/stream.py`),
    in memory bounded by the recording's objects and the named object's versions, not by
    its length: the command line's."""
    _, parts = _split(name)  # what the stream keeps: the objects of that name
    streamed = _Streamed(parts[-1])
    explained(records, streamed.line, _discard, streamed.begin)
    analysis = streamed.analysis
    assert analysis is not None
    ref = _found(analysis.resources, sorted(streamed.refs), name, namespace)
    found = analysis.kind_of(ref.group, ref.resource) or ref.resource
    observations = [*streamed.observations.get(ref, []), *streamed.etcd_observations(ref)]
    return _assembled(ref, found, observations, streamed.writer_of(ref))


def _discard(_: str) -> None:
    """What `explained` writes: nothing, the history is told at the end."""


class _Streamed:
    """What a stream of records leaves of the objects named `name`: their observations
    (one object per version: a repeat keeps only where it was seen), the writes of them,
    explained as they came, and the summaries of the last `RECENT` seconds' writes (what a
    later write's causal chain says)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.analysis: Analysis | None = None
        self.refs: set[ObjectRef] = set()  # every object seen: the closest names
        self.observations: dict[ObjectRef, list[Observation]] = {}
        self._held: dict[tuple[ObjectRef, str, int | None], int] = {}  # → its object's size
        self.writers: dict[str, Writer] = {}
        self.versions: dict[tuple[ObjectRef, int], str] = {}
        self.blind: dict[ObjectRef, list[tuple[float, str]]] = {}
        self.recent: dict[str, tuple[float, str]] = {}
        self._pruned = 0.0
        self.etcd: dict[str, list[EtcdChange]] = {}

    def begin(self, analysis: Analysis) -> None:
        self.analysis = analysis
        analysis.on_observation(self.observe)
        analysis.on_etcd(self.stored)

    def stored(self, change: EtcdChange) -> None:
        """An etcd record of an object of the name: decoded when the history is told."""
        if change.key.rsplit("/", 1)[-1] == self.name:
            self.etcd.setdefault(change.key, []).append(change)

    def etcd_observations(self, ref: ObjectRef) -> list[Observation]:
        assert self.analysis is not None
        key = _key(ref)
        return _stored(self.analysis, self.etcd.get(key, [])) if key else []

    def observe(self, exchange: Exchange, ref: ObjectRef, observation: Observation) -> None:
        self.refs.add(ref)
        if ref.name != self.name:
            return
        key = (ref, observation.uid, observation.resource_version)
        size = len(observation.object)
        if self._held.get(key, -1) >= size:  # a repeat: where it was seen is enough
            observation = Observation(
                observation.time,
                {},
                observation.source,
                observation.exchange,
                observation.component,
                observation.event,
                observation.resource_version,
                observation.uid,
            )
        else:
            self._held[key] = size
        self.observations.setdefault(ref, []).append(observation)

    def line(self, explainer: Explainer, exchange: Exchange) -> str:
        explainer.chains.add(exchange)
        if not _is_write(exchange):
            return ""
        self.recent[exchange.id] = (exchange.time, explainer.summaries.explain(exchange).summary)
        if exchange.time - self._pruned > RECENT / 10:
            self._pruned = exchange.time
            horizon = exchange.time - RECENT
            self.recent = {i: r for i, r in self.recent.items() if r[0] >= horizon}
        analysis = explainer.analysis
        obj = _answer(analysis, exchange)
        ref = analysis.ref(exchange, obj)
        if ref.name != self.name:
            return ""
        self.writers[exchange.id] = _writer(explainer, exchange, self._said)
        version = resource_version(obj)
        if version is None:
            self.blind.setdefault(ref, []).append((exchange.time, exchange.id))
        else:
            self.versions.setdefault((ref, version), exchange.id)
        return ""

    def _said(self, exchange_id: str) -> str:
        held = self.recent.get(exchange_id)
        return held[1] if held else HELD

    def writer_of(self, ref: ObjectRef) -> WriterOf:
        def writer_of(seen: list[Observation], version: int | None, when: float) -> Writer | None:
            for observation in seen:
                if observation.source in WRITES and observation.exchange in self.writers:
                    return self.writers[observation.exchange]
            found = self.versions.get((ref, version)) if version is not None else None
            if found is None:  # answered with a Status just before (a delete)
                before = [w for w in self.blind.get(ref, []) if 0 <= when - w[0] <= WINDOW]
                found = max(before)[1] if before else None
            return self.writers.get(found) if found else None

        return writer_of


def _is_write(exchange: Exchange) -> bool:
    info, status = exchange.info, exchange.status
    ok = status is not None and status < 300
    return info.is_resource_request and info.verb in WRITES and ok and not info.dry_run


def _answer(analysis: Analysis, exchange: Exchange) -> dict[str, Any] | None:
    """The object a write answered with (a Scale for the scale subresource), if any."""
    value = analysis.response_body(exchange).value
    if isinstance(value, dict) and isinstance(value.get("metadata"), dict):
        return value if value.get("kind") != "Status" else None
    return None


def _by_time(seen: list[Observation]) -> list[Observation]:
    return sorted(seen, key=lambda o: o.time)


def _grouped(
    observations: list[Observation],
) -> list[tuple[tuple[str, int | None], list[Observation]]]:
    """Observations by (uid, resourceVersion): incarnations in the order first seen, each
    one's versions by resourceVersion (one without a version — a delete's Status — last)."""
    groups: dict[tuple[str, int | None], list[Observation]] = {}
    order: dict[str, int] = {}
    uid = ""
    for observation in observations:  # one without a uid: of the incarnation seen last
        uid = observation.uid or uid
        order.setdefault(uid, len(order))
        groups.setdefault((uid, observation.resource_version), []).append(observation)
    return sorted(
        groups.items(),
        key=lambda item: (order[item[0][0]], item[0][1] is None, item[0][1] or 0),
    )


def _write(seen: list[Observation], by_id: dict[str, Exchange]) -> Exchange | None:
    """The write whose answer is this version."""
    for observation in seen:
        exchange = by_id.get(observation.exchange)
        if exchange is not None and observation.source in WRITES:
            return exchange
    return None


def _written(
    explainer: Explainer,
    by_id: dict[str, Exchange],
    ref: ObjectRef,
    version: int | None,
    seen: float,
) -> Exchange | None:
    """A write whose answer is not this version but carries its resourceVersion (a
    Scale), or answered with no object just before it was seen (a delete's Status)."""
    found = explainer.chains.written(ref, version, seen)
    return by_id.get(found) if found else None


def _writer(explainer: Explainer, exchange: Exchange, said: Callable[[str], str]) -> Writer:
    """Who sent the write `exchange`, and why: `said(id)` is the summary of an exchange of
    its causal chain."""
    analysis = explainer.analysis
    who = analysis.who(exchange)
    chain = list(explainer.chains.chain_ids(exchange))
    because = [said(i) for i in reversed(chain[:-1])]
    info = exchange.info
    return Writer(
        exchange,
        who.component,
        who.command,
        who.identity,
        info.verb,
        info.subresource,
        patch_type(exchange.request_header("content-type")) if info.verb == "patch" else None,
        info.options().get("fieldManager") or _default_manager(exchange),
        explainer.summaries.explain(exchange).summary,
        because,
        chain,
    )


def _default_manager(exchange: Exchange) -> str:
    """The field manager the API server records when a request names none: its
    User-Agent's program name (apiserver pkg/endpoints/handlers/rest.go,
    `prefixFromUserAgent`: up to the first '/')."""
    return exchange.user_agent.split("/", 1)[0]


def _managers(before: dict[str, Any] | None, after: dict[str, Any]) -> list[Manager]:
    """The managedFields entries of `after` that are new or whose time moved since
    `before`: those the API server recorded for this version's write (to the second: a
    manager's second write within the second it wrote last shows no entry)."""
    old = {_entry_key(e) for e in _entries(before)}
    return [Manager.of(e) for e in _entries(after) if _entry_key(e) not in old]


def _lost(before: dict[str, Any] | None, after: dict[str, Any]) -> list[Lost]:
    """The managers that manage fewer fields in `after` than in `before` (another took
    them over, or the fields are gone), and which."""
    if before is None:
        return []
    now = {_owner_key(e): _fieldset(e.get("fieldsV1")) for e in _entries(after)}
    found = []
    for entry in _entries(before):
        gone = _fieldset(entry.get("fieldsV1")) - now.get(_owner_key(entry), set())
        if gone:
            found.append(Lost(Manager.of(entry), tuple(sorted(gone))))
    return found


def _fieldset(fields: Any, prefix: str = "") -> set[str]:
    """The leaves of a managedFields `fieldsV1` set as paths (`spec.replicas`, a list item
    by its key as `[{"name":"nginx"}]`)."""
    if not isinstance(fields, dict):
        return set()
    found = set()
    for key, value in fields.items():
        if key == ".":
            found.add(prefix)
            continue
        kind, _, name = key.partition(":")
        path = (
            f"{prefix}.{name}"
            if kind == "f" and prefix
            else name
            if kind == "f"
            else f"{prefix}[{name}]"
        )
        leaves_ = _fieldset(value, path)
        found |= leaves_ or {path}
    return found


def _owner_key(entry: dict[str, Any]) -> tuple[Any, ...]:
    return (entry.get("manager"), entry.get("operation"), entry.get("subresource"))


def _entries(obj: dict[str, Any] | None) -> Iterator[dict[str, Any]]:
    for entry in metadata_of(obj).get("managedFields") or ():
        if isinstance(entry, dict):
            yield entry


def _entry_key(entry: dict[str, Any]) -> tuple[Any, ...]:
    return (*_owner_key(entry), entry.get("time"))


# -- one field -------------------------------------------------------------------------------
@dataclass(frozen=True)
class FieldStep:
    """A version in a field's story: its value there (`values`: path → value, for the
    first version of an incarnation) or how this version changed it (`changes`)."""

    version: Version
    values: dict[str, Any]
    changes: list[Changed]

    def to_json(self) -> dict[str, Any]:
        version = self.version
        return {
            "resource_version": version.resource_version,
            "uid": version.uid,
            "time": version.time,
            "first": version.first,
            "created": version.created,
            "values": self.values,
            "changes": [c.to_json() for c in self.changes],
            "writer": version.writer.to_json() if version.writer else None,
            "managed_fields": [m.to_json() for m in version.managers],
        }


def field_story(history: ObjectHistory, text: str) -> list[FieldStep]:
    """The versions that set, changed or removed the field at `text` (or anything inside
    it), and its value where each incarnation was first seen."""
    path = field_path(text)
    steps: list[FieldStep] = []
    held = False
    for version in history.versions:
        if version.first:
            values = {p: v for p, v in leaves(version.object).items() if under(p, path)}
            held = held or bool(values)
            if values:
                steps.append(FieldStep(version, values, []))
            continue
        changes = [c for c in version.changes if under(c.path, path)]
        held = held or bool(changes)
        if changes:
            steps.append(FieldStep(version, {}, changes))
    if not held:
        tops = sorted({k for v in history.versions for k in v.object})
        raise UsageError(
            f"no version of {history.kind} {_where(history.ref)} has a field {path}; "
            f"its top-level fields: {', '.join(tops)}"
        )
    return steps


def _where(ref: ObjectRef) -> str:
    return f"{ref.namespace}/{ref.name}" if ref.namespace else ref.name
