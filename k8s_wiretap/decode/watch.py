"""Watch events, decoded: type, the object, who it is, its resourceVersion, when it came.

A JSON watch stream carries `{"type": ..., "object": ...}` documents; a protobuf one carries
meta/v1 WatchEvent frames whose object is a full `k8s\\0` envelope; a CBOR one
(`application/cbor-seq`) one self-described CBOR data item per event, its object another.
`kubectl get -w` asks for Table output, so its events carry a meta.k8s.io/v1 Table with one
row whose `object` is the resource's partial metadata. ERROR events carry a Status: 410
Expired tells an informer to relist. BOOKMARK events carry only a resourceVersion.

A watch list (`watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&
allowWatchBookmarks=true`, how every informer of a 1.34+ lab starts instead of LIST then
WATCH) sends the current state first, as ADDED events, then a BOOKMARK annotated
`k8s.io/initial-events-end: "true"`, then changes (apiserver storage/cacher). Each event of
such a stream has a `phase`: "initial", "initial-end" (that bookmark) or "change"; events of
other watches have none.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from k8s_wiretap.capture.exchange import Exchange, StreamEvent
from k8s_wiretap.decode.body import loads_json, undecodable
from k8s_wiretap.decode.cache import WATCH_FRAME, DecodeCache
from k8s_wiretap.decode.protobuf import decode_watch_event
from k8s_wiretap.kube.media import is_cbor, media_type
from k8s_wiretap.kube.release import ReleaseLike
from k8s_wiretap.kube.requestinfo import RequestInfo
from k8s_wiretap.wire.cborseq import self_described
from k8s_wiretap.wire.framing import framer_for

__all__ = [
    "INITIAL_EVENTS_END",
    "WatchEvent",
    "decode_frame",
    "decode_stream",
    "exchange_events",
    "is_watch_list",
]

# The annotation on the bookmark that ends a watch list's initial events
# (apimachinery apis/meta/v1 types.go InitialEventsAnnotationKey).
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
INITIAL, INITIAL_END, CHANGE = "initial", "initial-end", "change"


@dataclass(slots=True)
class WatchEvent:
    """One decoded event. Slotted, not frozen (a frozen `__init__` costs four times as much,
    and a recording makes two a watch event), but never changed once made: decoded frames
    are shared through the decode cache; `dataclasses.replace` makes another."""

    type: str
    object: Any
    time: float | None = None
    error: str | None = None
    resource_kind: str | None = None  # the watched resource's kind, when the request tells
    phase: str | None = None  # of a watch list: "initial", "initial-end" or "change"

    @property
    def partial(self) -> bool:
        """A Table row or PartialObjectMetadata: metadata, not the object itself."""
        obj = self.object if isinstance(self.object, dict) else {}
        return obj.get("kind") in ("Table", "PartialObjectMetadata")

    @property
    def _meta(self) -> dict[str, Any]:
        obj = self.object if isinstance(self.object, dict) else {}
        row = _first_row(obj)
        if row is not None:
            obj = row
        meta = obj.get("metadata")
        return meta if isinstance(meta, dict) else {}

    @property
    def kind(self) -> str:
        if self.partial and self.resource_kind:
            return self.resource_kind
        obj = self.object if isinstance(self.object, dict) else {}
        row = _first_row(obj)
        if row is not None:
            return str(row.get("kind", "Table"))
        return str(obj.get("kind", ""))

    @property
    def namespace(self) -> str:
        return str(self._meta.get("namespace", ""))

    @property
    def name(self) -> str:
        return str(self._meta.get("name", ""))

    @property
    def resource_version(self) -> str:
        return str(self._meta.get("resourceVersion", ""))

    @property
    def ends_initial_events(self) -> bool:
        """The BOOKMARK that ends a watch list's initial events."""
        annotations = self._meta.get("annotations")
        marked = isinstance(annotations, dict) and annotations.get(INITIAL_EVENTS_END) == "true"
        return self.type == "BOOKMARK" and marked

    @property
    def expired(self) -> bool:
        """The 410 "too old resource version" an informer answers by relisting."""
        status = self.object if isinstance(self.object, dict) else {}
        return self.type == "ERROR" and status.get("code") == 410

    def summary(self) -> dict[str, Any]:
        meta = self._meta  # once, not once a field: every event of every watch is summed up
        record: dict[str, Any] = {
            "type": self.type,
            "kind": self.kind,
            "namespace": str(meta.get("namespace", "")),
            "name": str(meta.get("name", "")),
            "resource_version": str(meta.get("resourceVersion", "")),
            "time": self.time,
        }
        if self.phase:
            record["phase"] = self.phase
        if self.expired:
            record["expired"] = True
        if self.error:
            record["error"] = self.error
        return record


def _first_row(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The object of a Table's first row ({} when the row has none); None if `obj` is no
    Table with rows, or its rows are not what a Table's are."""
    rows = obj.get("rows") if obj.get("kind") == "Table" else None
    if not rows or not isinstance(rows, list) or not isinstance(rows[0], dict):
        return None
    row = rows[0].get("object")
    return row if isinstance(row, dict) else {}


def decode_frame(
    frame: bytes, content_type: str, when: float | None = None, release: ReleaseLike = None
) -> WatchEvent:
    """One event frame of a stream of `content_type`; never raises."""
    try:
        media = media_type(content_type)
        if media.endswith("json") or (not media and frame[:1] == b"{"):
            document = loads_json(frame)
            if not isinstance(document, dict) or not isinstance(document.get("type"), str):
                raise ValueError("a watch event is an object with a string type")
        elif is_cbor(media) or (not media and self_described(frame)):
            from k8s_wiretap.decode.cbor import decode_cbor_watch_event

            document = decode_cbor_watch_event(frame, release=release)
        else:
            document = decode_watch_event(frame, release=release)
        return WatchEvent(str(document.get("type", "")), document.get("object"), when)
    except Exception as error:  # undecodable frames are reported, never lost
        return WatchEvent("", None, when, undecodable(f"{type(error).__name__}: {error}", frame))


def exchange_events(
    exchange: Exchange,
    resource_kind: str | None = None,
    start: int = 0,
    release: ReleaseLike = None,
    cache: DecodeCache | None = None,
) -> list[WatchEvent]:
    """The decoded watch events of a recorded exchange (HTTP stream or WebSocket), from
    its `start`-th on (a live exchange's events are decoded as they arrive), protobuf with
    `release`'s schema. With a `cache`, a frame seen before is not decoded again: its type,
    object and error are shared, its time, resource kind and phase are this exchange's."""
    content_type = exchange.response_header("content-type")
    if exchange.status == 101:
        content_type = "application/json"  # the API server's WebSocket watch sends JSON text
    events = exchange.watch_events()
    fresh = events[start:]
    decoded = [_decoded(event, content_type, release, cache) for event in fresh]
    if is_watch_list(exchange.info):
        phases = _phases(decoded, _initial_end_before(exchange.id, events, start))
    else:
        phases = [None] * len(decoded)
    return [
        WatchEvent(found.type, found.object, event.time, found.error, resource_kind, phase)
        for event, found, phase in zip(fresh, decoded, phases, strict=True)
    ]


def _decoded(
    event: StreamEvent, content_type: str, release: ReleaseLike, cache: DecodeCache | None
) -> WatchEvent:
    """The event of one recorded frame, without its time: from the cache if seen before."""
    data = event.data.data
    if event.data.truncated:
        return WatchEvent(
            "", None, None, undecodable("truncated by the recording's size cap", data)
        )
    if cache is None:
        return decode_frame(data, content_type, release=release)
    key = (data, content_type, release, WATCH_FRAME)
    return cache.get(key, lambda: decode_frame(data, content_type, release=release))


def decode_stream(
    data: bytes, content_type: str, release: ReleaseLike = None, watch_list: bool | None = None
) -> Iterator[WatchEvent]:
    """Every event of a whole watch stream (what `k8s-wiretap decode` gets for one).
    `watch_list`: whether the request was a watch list; None: if the stream has the bookmark
    that ends initial events, it was."""
    framer = framer_for(content_type)
    frames = [*framer.feed(data), *framer.flush()]
    events = [decode_frame(frame, content_type, release=release) for frame in frames]
    if watch_list is None:
        watch_list = any(event.ends_initial_events for event in events)
    yield from _phased(events, False) if watch_list else events


def is_watch_list(info: RequestInfo) -> bool:
    """A watch that starts with the current state: `sendInitialEvents=true` on a watch."""
    return info.verb == "watch" and (info.param("sendInitialEvents") or "").lower() == "true"


def _phased(events: Sequence[WatchEvent], ended: bool) -> list[WatchEvent]:
    """Each event of a watch list with its phase; `ended`: the initial events ended before."""
    phases = _phases(events, ended)
    return [
        dataclasses.replace(event, phase=phase) for event, phase in zip(events, phases, strict=True)
    ]


def _phases(events: Sequence[WatchEvent], ended: bool) -> list[str | None]:
    """The phase of each event of a watch list (see the module docstring)."""
    phases: list[str | None] = []
    for event in events:
        if ended:
            phase = CHANGE
        elif event.ends_initial_events:
            phase, ended = INITIAL_END, True
        else:
            phase = INITIAL
        phases.append(phase)
    return phases


# Where each live watch list's initial events ended, as far as its events were looked at:
# exchange id → (events scanned, index of the end bookmark or None). Bounded: oldest go first.
_ENDS: OrderedDict[str, tuple[int, int | None]] = OrderedDict()
_ENDS_KEPT = 4096
_END_MARK = INITIAL_EVENTS_END.encode()
_BOOKMARK_SIZE = 16 * 1024  # a bookmark is one object's metadata and empty fields


def _initial_end_before(exchange: str, events: Sequence[StreamEvent], start: int) -> bool:
    """Whether one of `events[:start]` (raw frames, already decoded by the caller) is the
    bookmark ending the initial events. The annotation's name is plain bytes in JSON,
    protobuf and CBOR alike, and only a small frame can be a bookmark."""
    scanned, found = _ENDS.pop(exchange, (0, None))
    if found is None and scanned > start:
        scanned = 0  # the caller went back: look again from the start
    index = scanned
    while found is None and index < start:
        data = events[index].data.data
        if len(data) <= _BOOKMARK_SIZE and _END_MARK in data and b"BOOKMARK" in data:
            found = index
        index += 1
    _ENDS[exchange] = (max(index, scanned), found)
    while len(_ENDS) > _ENDS_KEPT:
        _ENDS.popitem(last=False)
    return found is not None and found < start
