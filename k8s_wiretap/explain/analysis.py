"""The analysis of a recording: decode what is asked for (lazily, once), learn every
object's history, and replay every PATCH on the object as it was just before.

It is fed exchange by exchange — `feed(update)` with the assembler's updates while traffic
arrives, or `Analysis.of(recording)` over a whole file — and gives the same results either
way: updates are queued and worked off before any question is answered, an exchange's
response is decoded again once its `end` has arrived, and a watch's events are decoded as
they come. What the server serves (resource ↔ kind ↔ scope) is learned from the recording's
own discovery documents as they pass, on top of the built-in table (`kube.resources`).

Bodies and watch frames are decoded through a cache keyed by their bytes
(`decode/cache.py`): what repeats is decoded once (the API server sends one serialized
event to every watcher of it). Read as a stream (`explain/stream.py`), `forget(before)` drops the
exchanges before `before` that have ended, with what was decoded of them, and keeps of the
history only what later patches can start from (`History.forget`).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Container
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from k8s_wiretap.capture.assemble import Update
from k8s_wiretap.capture.exchange import Body, EtcdChange, Exchange
from k8s_wiretap.capture.reader import Recording
from k8s_wiretap.decode.body import EMPTY, Decoded, decode_body
from k8s_wiretap.decode.cache import DecodeCache
from k8s_wiretap.decode.watch import WatchEvent, exchange_events
from k8s_wiretap.explain.history import History, Observation
from k8s_wiretap.explain.openapi import OpenApiDocuments
from k8s_wiretap.explain.patches import (
    REFUSALS,
    PatchReplay,
    not_replayed,
    predecessor,
    replay_exchange,
    replay_refused,
)
from k8s_wiretap.explain.who import Who, who_in
from k8s_wiretap.kube.media import managed_fields_dropped, patch_type, response_media
from k8s_wiretap.kube.refs import ObjectRef, resource_version, uid_of
from k8s_wiretap.kube.release import Release, ReleaseError, ReleaseLike
from k8s_wiretap.kube.resources import Resources
from k8s_wiretap.kube.scale import scale_of
from k8s_wiretap.kube.verbs import STORES, WATCH
from k8s_wiretap.patch import PatchSchema

__all__ = ["Analysis", "PatchReplay", "insort_by_time"]

NOT_OBJECTS = frozenset(
    {
        "Status",
        "Table",
        "PartialObjectMetadata",
        "PartialObjectMetadataList",
        "APIResourceList",
        "APIGroupList",
        "APIGroup",
        "APIVersions",
    }
)
CHANGES = frozenset({"ADDED", "MODIFIED", "DELETED"})
_TIME = attrgetter("time")  # an exchange's (or an event's): a key at C speed, asked log n a sort
DECODED = DecodeCache()  # bodies and watch frames; `DECODED.limit = 0` turns it off

Listener = Callable[[Exchange, ObjectRef, Observation], None]


def _decode(body: Body | None, content_type: str, release: Release | None) -> Decoded:
    if body is None:
        return EMPTY
    key = (body.data, content_type, release, body.truncated)
    found: Decoded | None = DECODED.found(key)
    if found is not None:
        return found
    decoded = decode_body(body.data, content_type, truncated=body.truncated, release=release)
    return DECODED.keep(key, decoded)


def recorded_release(exchanges: list[Exchange]) -> Release | None:
    """The release of the first recorded `/version` answer (JSON) that names one, if any."""
    for exchange in exchanges:
        body = exchange.response_body
        if exchange.path.split("?")[0] != "/version" or exchange.status != 200 or not body:
            continue
        answer = decode_body(body.data, exchange.response_header("content-type")).value
        release = answered_release(answer)
        if release is not None:
            return release
    return None


def answered_release(answer: Any) -> Release | None:
    """The release a decoded `/version` answer names (its gitVersion, else its major and
    minor); None if it is not such an answer."""
    if not isinstance(answer, dict):
        return None
    try:
        return Release.from_version_info(answer)
    except ReleaseError:
        return None


def _typed_item(listing: dict[str, Any], item: dict[str, Any]) -> dict[str, Any]:
    """A list's item as the object it is: items of a typed list (a NodeList, say) carry no
    kind or apiVersion of their own; they are the list's, without "List"."""
    kind = str(listing.get("kind", ""))
    if "kind" in item or not kind.endswith("List"):
        return item
    return {"kind": kind.removesuffix("List"), "apiVersion": listing.get("apiVersion"), **item}


def _is_object(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("kind") not in NOT_OBJECTS
        and isinstance(value.get("metadata"), dict)
    )


@dataclass(slots=True)
class _Progress:
    """How much of one exchange the analysis has taken in."""

    events: int = 0
    ended: bool = False


class Analysis:
    """Decoding, object history and patch replay of one recording, live or from a file."""

    def __init__(self, resources: Resources | None = None, release: ReleaseLike = None) -> None:
        self.exchanges: list[Exchange] = []  # in time order
        # The server's release, whose protobuf schema decodes the bodies: given, or the
        # first /version answer's (the proxy asks at start; bodies decoded before it came
        # were read with the newest release's schema).
        self.release = Release.of(release)
        self.resources = resources or Resources.builtin()
        self._history = History()
        self._pending: dict[str, Exchange] = {}
        self._progress: dict[str, _Progress] = {}
        self._requests: dict[str, Decoded] = {}
        self._responses: dict[str, Decoded] = {}
        self._events: dict[str, list[WatchEvent]] = {}
        self._openapi = OpenApiDocuments(self.response_body)
        self._replays: dict[str, PatchReplay | None] = {}  # until the next update
        self._versions: dict[str, Release] = {}  # upstream server → its release
        self._etcd: dict[tuple[str, int], EtcdChange] = {}  # (key, revision) → what landed
        self._who: dict[str, Who] = {}
        self._listeners: list[Listener] = []
        self._etcd_listeners: list[Callable[[EtcdChange], object]] = []

    @classmethod
    def of(cls, recording: Recording) -> Analysis:
        """The analysis of a whole recording, decoded as the release it says it came from."""
        analysis = cls(release=recorded_release(recording.exchanges))
        for change in recording.etcd:
            analysis.add_etcd(change)
        for exchange in sorted(recording.exchanges, key=lambda e: e.time):
            analysis.add(exchange)
        return analysis

    # -- feeding ----------------------------------------------------------------------------
    def feed(self, update: Update) -> None:
        """Something happened to an exchange (cheap: the work waits for the next question)."""
        self.add(update.exchange)

    def add(self, exchange: Exchange) -> None:
        """Take in what is new on `exchange` (a new one, or one with new records)."""
        if exchange.id not in self._progress:
            self._progress[exchange.id] = _Progress()
            insort_by_time(self.exchanges, exchange)
        self._pending[exchange.id] = exchange

    def _catch_up(self) -> None:
        while self._pending:
            exchange_id = next(iter(self._pending))
            self._take_in(self._pending.pop(exchange_id))

    def _take_in(self, exchange: Exchange) -> None:
        self._replays.clear()  # what a replay started from may have changed
        progress = self._progress[exchange.id]
        if exchange.info.verb == WATCH or exchange.watch_events():
            self._observe_events(exchange, progress)
        if exchange.end is not None and not progress.ended:
            progress.ended = True
            self._responses.pop(exchange.id, None)  # decoded while open: the body had not come
            self._observe_response(exchange)

    # -- decoding, once per exchange --------------------------------------------------------
    def request_body(self, exchange: Exchange) -> Decoded:
        if exchange.id not in self._requests:
            self._requests[exchange.id] = _decode(
                exchange.request_body, exchange.request_header("content-type"), self.release
            )
        return self._requests[exchange.id]

    def response_body(self, exchange: Exchange) -> Decoded:
        decoded = self._responses.get(exchange.id)
        if decoded is None:
            content_type = response_media(
                exchange.response_header("content-type"), exchange.request_header("accept")
            )
            decoded = _decode(exchange.response_body, content_type, self.release)
            if exchange.end is not None:
                self._responses[exchange.id] = decoded
        return decoded

    def events(self, exchange: Exchange) -> list[WatchEvent]:
        """The exchange's decoded watch events so far."""
        decoded = self._events.setdefault(exchange.id, [])
        if len(decoded) < len(exchange.watch_events()):
            kind = self.resources.kind_of(exchange.info.group, exchange.info.resource)
            start = len(decoded)
            decoded += exchange_events(exchange, kind, start, self.release, DECODED)
        return decoded

    def add_etcd(self, change: EtcdChange) -> None:
        """Something etcd itself recorded (the proxy's `--etcd` watch)."""
        self._etcd[(change.key, change.revision)] = change
        for listener in self._etcd_listeners:
            listener(change)

    def on_etcd(self, listener: Callable[[EtcdChange], object]) -> None:
        """Call `listener(change)` for each change etcd recorded from now on."""
        self._etcd_listeners.append(listener)

    def etcd_changes(self, key: str) -> list[EtcdChange]:
        """Every change etcd recorded at `key` (and still held), by revision."""
        found = [c for (k, _), c in self._etcd.items() if k == key]
        return sorted(found, key=lambda c: c.revision)

    @property
    def etcd_recorded(self) -> bool:
        return bool(self._etcd)

    def stored(self, key: str, revision: int) -> tuple[EtcdChange, Decoded] | None:
        """What landed in etcd at `key` in `revision`, decoded, if etcd's view was recorded."""
        change = self._etcd.get((key, revision))
        return None if change is None else (change, self.decode_stored(change))

    def decode_stored(self, change: EtcdChange) -> Decoded:
        """What an etcd record holds, decoded (JSON, or protobuf as the API server stores it)."""
        if change.value is None:
            return EMPTY
        media = "application/json" if change.value.data[:1] == b"{" else ""
        return _decode(change.value, media, self.release)

    @property
    def server_version(self) -> str | None:
        """The API server's release (`v1.20.2`), from the latest `/version` answer recorded
        (the proxy asks once at start); None if the recording holds none."""
        release = self.server_release
        return None if release is None else release.git_version

    @property
    def server_release(self) -> Release | None:
        """The release of `server_version`, to compare (None if the recording holds none)."""
        self._catch_up()
        return next(reversed(self._versions.values()), None)

    def kind_of(self, group: str, resource: str) -> str | None:
        self._catch_up()
        return self.resources.kind_of(group, resource)

    def who(self, exchange: Exchange) -> Who:
        """Who sent `exchange`: its component, client, kubectl command, identity, and the
        evidence that decided (`explain/who.py`), among the exchanges taken in so far."""
        found = self._who.get(exchange.id)
        if found is None:
            found = who_in(self.exchanges, exchange)
            if not found.how.startswith("behaviour"):  # what comes later cannot change it
                self._who[exchange.id] = found
        return found

    def on_observation(self, listener: Listener) -> None:
        """Call `listener(exchange, ref, observation)` for each observation from now on."""
        self._listeners.append(listener)

    # -- history ----------------------------------------------------------------------------
    @property
    def history(self) -> History:
        self._catch_up()
        return self._history

    def ref(self, exchange: Exchange, obj: Any = None) -> ObjectRef:
        """Which object `exchange` (or `obj`, an object it carried) is about."""
        info = exchange.info
        return self.resources.ref(info.group, info.resource, info.namespace, info.name, obj)

    def _observe_events(self, exchange: Exchange, progress: _Progress) -> None:
        events = self.events(exchange)
        for index in range(progress.events, len(events)):
            event = events[index]
            if event.type in CHANGES and _is_object(event.object):
                when = event.time or exchange.time
                self._observe(exchange, event.object, WATCH, when, index)
        progress.events = len(events)

    def _observe_response(self, exchange: Exchange) -> None:
        info = exchange.info
        if exchange.status != 200 and not info.is_resource_request:
            return
        if not info.is_resource_request:
            self._learn(exchange)
            return
        if exchange.status is None or exchange.status >= 300 or info.verb == WATCH:
            return
        if info.dry_run:  # what the object would be: no version of it
            return
        if info.subresource not in ("", "status"):
            return
        when = exchange.response.time if exchange.response else exchange.time
        decoded = self.response_body(exchange).value
        if info.verb == "list" and isinstance(decoded, dict):
            for item in decoded.get("items") or []:
                if isinstance(item, dict) and isinstance(item.get("metadata"), dict):
                    self._observe(exchange, _typed_item(decoded, item), "list", when)
        elif (info.verb == "get" or info.verb in STORES) and _is_object(decoded):
            self._observe(exchange, decoded, info.verb, when)

    def _observe(
        self,
        exchange: Exchange,
        obj: dict[str, Any],
        source: str,
        when: float,
        event: int | None = None,
    ) -> None:
        observation = Observation.of(obj, when, source, exchange.id, exchange.component, event)
        if _without_managed_fields(exchange, obj):
            observation.managed_fields_dropped = True
        ref = self.ref(exchange, obj)
        self._history.add(ref, observation)
        for listener in self._listeners:
            listener(exchange, ref, observation)

    def _learn(self, exchange: Exchange) -> None:
        """Discovery documents and OpenAPI documents: what the server serves, and how."""
        if self._openapi.learn(exchange):
            return
        path = exchange.path.split("?")[0]
        if path in ("/api", "/apis") or path.startswith(("/api/", "/apis/")):
            self.resources.learn(self.response_body(exchange).value)
        elif exchange.path.split("?")[0] == "/version":
            release = answered_release(self.response_body(exchange).value)
            if release is not None:
                self._versions[exchange.request.server] = release
                self.release = self.release or release

    # -- patches ----------------------------------------------------------------------------
    def replay(self, exchange: Exchange) -> PatchReplay | None:
        """The replay of a PATCH exchange (None for anything else), computed once per state
        of the analysis: the JSON view, the apply fields and the story all ask for it."""
        self._catch_up()
        if exchange.id not in self._replays:
            self._replays[exchange.id] = self._replay(exchange)
        return self._replays[exchange.id]

    def _replay(self, exchange: Exchange) -> PatchReplay | None:
        kind = patch_type(exchange.request_header("content-type"))
        if exchange.info.verb != "patch" or kind is None:
            return None
        body = self.request_body(exchange)
        after = self.response_body(exchange).value
        if not body.ok:
            return not_replayed(kind, body.error, after, str(body.error))
        if (
            exchange.status in REFUSALS
            and isinstance(after, dict)
            and after.get("kind") == "Status"
        ):
            return self._replay_refused(exchange, kind, body.value, after)
        if exchange.status is None or exchange.status >= 300 or not isinstance(after, dict):
            return not_replayed(kind, body.value, after, "the server did not apply the patch")
        before, why_not = self._before(exchange, after)
        if before is None:
            return not_replayed(kind, body.value, after, why_not)
        schema = self.patch_schema(exchange.time, exchange.info.group, exchange.info.version)
        return replay_exchange(exchange, kind, body.value, before, after, schema, self.release)

    def _replay_refused(
        self, exchange: Exchange, kind: str, body: Any, status: dict[str, Any]
    ) -> PatchReplay:
        """A patch the server refused, replayed on the object as it was: refused alike?"""
        before, why_not = self._before(exchange, {})
        if before is None:
            return not_replayed(kind, body, status, why_not)
        schema = self.patch_schema(exchange.time, exchange.info.group, exchange.info.version)
        return replay_refused(exchange, kind, body, before, status, schema, self.release)

    def _before(self, exchange: Exchange, after: dict[str, Any]) -> tuple[Observation | None, str]:
        """The object as the server had it before the patch, or None and why not."""
        info, ref = exchange.info, self.ref(exchange, after)
        observation = self._history.before(ref, exchange.time, uid_of(after))
        if observation is None and exchange.status == 201:  # a server-side apply created it
            return Observation(exchange.time, {}, "nothing: the patch created it", ""), ""
        if observation is None:
            return None, "no earlier observation of the object in the recording"
        if (
            observation.managed_fields_dropped
            and patch_type(exchange.request_header("content-type")) == "apply"
        ):
            observation = self._with_managers(ref, observation, exchange.time)
            if observation is None:
                return None, DROPPED
        if self._history.stale(ref, observation, resource_version(after)):
            # a concurrent write went first: replay on the version just below the result
            observation = predecessor(self._history, ref, resource_version(after), uid_of(after))
            if observation is None:
                return None, "the last observation before the patch is stale (a write came between)"
        served = self.resources.get(info.group, info.resource)
        if info.subresource == "scale" and served is not None and served.scalable:
            scale = scale_of(observation.object, str(after.get("apiVersion", "autoscaling/v1")))
            source = f"{observation.source} (as its scale)"
            return Observation.of(
                scale, observation.time, source, observation.exchange, observation.component
            ), ""
        return observation, ""

    def _with_managers(
        self, ref: ObjectRef, seen: Observation, before: float
    ) -> Observation | None:
        """An observation of the same version as `seen`, made before `before`, that kept
        its managedFields (a server-side apply starts from its managers), or None."""
        if seen.resource_version is None:
            return None
        kept = self._history.at(ref, seen.resource_version)
        whole = (o for o in reversed(kept) if o.time < before and not o.managed_fields_dropped)
        return next(whole, None)

    def patch_schema(self, before: float, group: str = "", version: str = "v1") -> PatchSchema:
        """The patch metadata in force at `before` for objects served at `group`/`version`:
        the latest recorded `/openapi/v3` document of that group version, else the latest
        `/openapi/v2`, else the shipped table nearest to the server's release
        (`explain/openapi.py`). kubectl caches the documents it fetched, so a repeat apply
        often leaves none in the recording."""
        self._catch_up()
        group_version = f"{group}/{version}" if group else version
        return self._openapi.schema(before, group_version, self.release)

    # -- forgetting -------------------------------------------------------------------------
    def forget(self, before: float, keeping: Container[str] = (), *, deep: bool = True) -> None:
        """Drop the ended exchanges older than `before` (but those `keeping` names) and what
        was decoded of them; and, `deep`, etcd's records older than it and the history but
        what later patches can start from (sweeps that cost what is held, not what goes)."""
        self._catch_up()
        cut = bisect.bisect_left(self.exchanges, before, key=_TIME)
        old = self.exchanges[:cut]
        gone = [e for e in old if e.end is not None and e.id not in keeping]
        self.exchanges[:cut] = [e for e in old if e.end is None or e.id in keeping]
        for exchange in gone:
            self._progress.pop(exchange.id, None)
            self._requests.pop(exchange.id, None)
            self._responses.pop(exchange.id, None)
            self._events.pop(exchange.id, None)
            self._who.pop(exchange.id, None)
        self._replays.clear()
        if not deep:
            return
        self._etcd = {k: c for k, c in self._etcd.items() if c.time >= before}
        self._openapi.forget(before)
        self._history.forget(before)


DROPPED = (
    "the object was last seen without its managedFields (its client asked the server to drop"
    " them), which a server-side apply starts from"
)


def _without_managed_fields(exchange: Exchange, obj: dict[str, Any]) -> bool:
    """`obj` came without managedFields because `exchange`'s client asked for that."""
    meta = obj.get("metadata")
    has = isinstance(meta, dict) and "managedFields" in meta
    return not has and managed_fields_dropped(exchange.request_header("accept"))


def insort_by_time(exchanges: list[Exchange], exchange: Exchange) -> None:
    """Into `exchanges` (in time order), where its time puts it: at the end, nearly always
    (records come in time order), which costs one comparison instead of a bisection."""
    if not exchanges or exchanges[-1].time <= exchange.time:
        exchanges.append(exchange)
    else:
        bisect.insort(exchanges, exchange, key=_TIME)
