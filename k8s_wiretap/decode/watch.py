"""Watch events, decoded: type, the object, who it is, its resourceVersion, when it came.

A JSON watch stream carries `{"type": ..., "object": ...}` documents; a protobuf one carries
meta/v1 WatchEvent frames whose object is a full `k8s\\0` envelope. `kubectl get -w` asks for
Table output, so its events carry a meta.k8s.io/v1 Table with one row whose `object` is the
resource's partial metadata. ERROR events carry a Status: 410 Expired tells an informer to
relist. BOOKMARK events carry only a resourceVersion.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from k8s_wiretap.capture.exchange import Exchange, StreamEvent
from k8s_wiretap.decode.body import undecodable
from k8s_wiretap.kube.media import media_type
from k8s_wiretap.wire.framing import framer_for

__all__ = ["WatchEvent", "decode_frame", "decode_stream", "exchange_events"]


@dataclass(frozen=True)
class WatchEvent:
    type: str
    object: Any
    time: float | None = None
    error: str | None = None
    resource_kind: str | None = None  # the watched resource's kind, when the request tells

    @property
    def partial(self) -> bool:
        """A Table row or PartialObjectMetadata: metadata, not the object itself."""
        obj = self.object if isinstance(self.object, dict) else {}
        return obj.get("kind") in ("Table", "PartialObjectMetadata")

    @property
    def _meta(self) -> dict[str, Any]:
        obj = self.object if isinstance(self.object, dict) else {}
        if obj.get("kind") == "Table" and obj.get("rows"):
            obj = obj["rows"][0].get("object") or {}
        meta = obj.get("metadata")
        return meta if isinstance(meta, dict) else {}

    @property
    def kind(self) -> str:
        if self.partial and self.resource_kind:
            return self.resource_kind
        obj = self.object if isinstance(self.object, dict) else {}
        if obj.get("kind") == "Table" and obj.get("rows"):
            return str((obj["rows"][0].get("object") or {}).get("kind", "Table"))
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
    def expired(self) -> bool:
        """The 410 "too old resource version" an informer answers by relisting."""
        status = self.object if isinstance(self.object, dict) else {}
        return self.type == "ERROR" and status.get("code") == 410

    def summary(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "type": self.type,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "resource_version": self.resource_version,
            "time": self.time,
        }
        if self.expired:
            record["expired"] = True
        if self.error:
            record["error"] = self.error
        return record


def decode_frame(
    frame: bytes, content_type: str, when: float | None = None, release: str | None = None
) -> WatchEvent:
    """One event frame of a stream of `content_type`; never raises."""
    try:
        media = media_type(content_type)
        if media.endswith("json") or (not media and frame[:1] == b"{"):
            document = json.loads(frame)
        else:
            from k8s_wiretap.decode.protobuf import decode_watch_event

            document = decode_watch_event(frame, release=release)
        return WatchEvent(str(document.get("type", "")), document.get("object"), when)
    except Exception as error:  # undecodable frames are reported, never lost
        return WatchEvent("", None, when, undecodable(f"{type(error).__name__}: {error}", frame))


def exchange_events(
    exchange: Exchange,
    resource_kind: str | None = None,
    start: int = 0,
    release: str | None = None,
) -> list[WatchEvent]:
    """The decoded watch events of a recorded exchange (HTTP stream or WebSocket), from
    its `start`-th on (a live exchange's events are decoded as they arrive), protobuf with
    `release`'s schema."""
    content_type = exchange.response_header("content-type")
    if exchange.status == 101:
        content_type = "application/json"  # the API server's WebSocket watch sends JSON text
    events = exchange.watch_events()
    return [_event(event, content_type, resource_kind, release) for event in events[start:]]


def _event(
    event: StreamEvent, content_type: str, resource_kind: str | None, release: str | None
) -> WatchEvent:
    if event.data.truncated:
        error = undecodable("truncated by the recording's size cap", event.data.data)
        return WatchEvent("", None, event.time, error, resource_kind)
    decoded = decode_frame(event.data.data, content_type, event.time, release)
    return dataclasses.replace(decoded, resource_kind=resource_kind)


def decode_stream(
    data: bytes, content_type: str, release: str | None = None
) -> Iterator[WatchEvent]:
    """Every event of a whole watch stream (what `k8s-wiretap decode` gets for one)."""
    framer = framer_for(content_type)
    for frame in [*framer.feed(data), *framer.flush()]:
        yield decode_frame(frame, content_type, release=release)
