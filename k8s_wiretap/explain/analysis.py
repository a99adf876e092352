"""One pass over a recording: decode what is asked for (lazily, once), learn every object's
history, and replay every PATCH on the object as it was just before.

The replay is our proof that we understand each patch: the local result must agree with the
object the server returned on everything the patch sets or removes (`k8s_wiretap.patch`'s
`compare`). `matches_server` is None when there is nothing to replay on — no earlier
observation of the object, or one that is provably stale (a write happened in between).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from k8s_wiretap.capture.exchange import Body, Exchange
from k8s_wiretap.capture.reader import Recording
from k8s_wiretap.decode.body import Decoded, decode_body
from k8s_wiretap.decode.diff import diff
from k8s_wiretap.decode.kinds import discovered_kinds, kind_of
from k8s_wiretap.decode.objects import (
    SCALABLE,
    History,
    ObjectKey,
    Observation,
    resource_version,
    scale_of,
)
from k8s_wiretap.decode.watch import WatchEvent, exchange_events
from k8s_wiretap.kube.media import patch_type, response_media
from k8s_wiretap.patch import PatchSchema

__all__ = ["Analysis", "PatchReplay"]

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
WRITES = frozenset({"create", "update", "patch"})


@dataclass(frozen=True)
class PatchReplay:
    type: str
    body: Any
    before: dict[str, Any] | None
    after: Any
    local: dict[str, Any] | None
    matches_server: bool | None
    mismatches: list[str]
    before_from: Observation | None = None
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "type": self.type,
            "body": self.body,
            "before": self.before,
            "after": self.after,
            "diff": diff(self.before, self.after) if self.before is not None else None,
            "matches_server": self.matches_server,
            "mismatches": self.mismatches,
        }
        if self.before_from is not None:
            record["before_from"] = {
                "exchange": self.before_from.exchange,
                "source": self.before_from.source,
                "time": self.before_from.time,
            }
        if self.note:
            record["note"] = self.note
        return record


def _decode(body: Body | None, content_type: str) -> Decoded:
    if body is None:
        return Decoded("empty")
    return decode_body(body.data, content_type, truncated=body.truncated)


def _key(exchange: Exchange, obj: dict[str, Any] | None = None) -> ObjectKey:
    info = exchange.info
    meta = (obj or {}).get("metadata") or {}
    return (
        info.group,
        info.resource,
        str(meta.get("namespace", info.namespace)),
        str(meta.get("name", info.name)),
    )


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


class Analysis:
    """Decoding and object history of one recording."""

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self.exchanges = sorted(recording.exchanges, key=lambda e: e.time)
        self._history: History | None = None
        self._requests: dict[str, Decoded] = {}
        self._responses: dict[str, Decoded] = {}
        self._events: dict[str, list[WatchEvent]] = {}
        self._schemas: dict[str, PatchSchema] = {}
        self._discovered: dict[tuple[str, str], str] | None = None
        self._openapi: list[tuple[float, Exchange]] | None = None

    # -- decoding, once per exchange --------------------------------------------------------
    def request_body(self, exchange: Exchange) -> Decoded:
        if exchange.id not in self._requests:
            self._requests[exchange.id] = _decode(
                exchange.request_body, exchange.request_header("content-type")
            )
        return self._requests[exchange.id]

    def response_body(self, exchange: Exchange) -> Decoded:
        if exchange.id not in self._responses:
            content_type = response_media(
                exchange.response_header("content-type"), exchange.request_header("accept")
            )
            self._responses[exchange.id] = _decode(exchange.response_body, content_type)
        return self._responses[exchange.id]

    def events(self, exchange: Exchange) -> list[WatchEvent]:
        if exchange.id not in self._events:
            kind = self.kind_of(exchange.info.group, exchange.info.resource)
            self._events[exchange.id] = exchange_events(exchange, kind)
        return self._events[exchange.id]

    def kind_of(self, group: str, resource: str) -> str | None:
        """The kind `resource` holds, from the recording's discovery documents first."""
        if self._discovered is None:
            self._discovered = {}
            for exchange in self.exchanges:
                if (
                    exchange.status == 200
                    and not exchange.info.is_resource_request
                    and exchange.path.startswith(("/api/", "/apis/"))
                ):
                    self._discovered.update(discovered_kinds(self.response_body(exchange).value))
        return kind_of(group, resource, self._discovered)

    # -- history ----------------------------------------------------------------------------
    @property
    def history(self) -> History:
        if self._history is None:
            self._history = History()
            for exchange in self.exchanges:
                self._observe(exchange)
        return self._history

    def _observe(self, exchange: Exchange) -> None:
        info = exchange.info
        if not info.is_resource_request or exchange.status is None:
            return
        if info.verb == "watch":
            for event in self.events(exchange):
                if event.type in ("ADDED", "MODIFIED", "DELETED") and _is_object(event.object):
                    self._add(exchange, event.object, "watch", event.time or exchange.time)
            return
        if exchange.status >= 300 or info.subresource not in ("", "status"):
            return
        when = float(exchange.response["time"]) if exchange.response else exchange.time
        decoded = self.response_body(exchange).value
        if info.verb == "list" and isinstance(decoded, dict):
            for item in decoded.get("items") or []:
                if isinstance(item, dict) and isinstance(item.get("metadata"), dict):
                    self._add(exchange, _typed_item(decoded, item), "list", when)
        elif (info.verb == "get" or info.verb in WRITES) and _is_object(decoded):
            self._add(exchange, decoded, info.verb, when)

    def _add(self, exchange: Exchange, obj: dict[str, Any], source: str, when: float) -> None:
        assert self._history is not None
        self._history.add(_key(exchange, obj), Observation(when, obj, source, exchange.id))

    # -- patches ----------------------------------------------------------------------------
    def replay(self, exchange: Exchange) -> PatchReplay | None:
        """The replay of a PATCH exchange (None for anything else)."""
        kind = patch_type(exchange.request_header("content-type"))
        if exchange.info.verb != "patch" or kind is None:
            return None
        body = self.request_body(exchange)
        after = self.response_body(exchange).value
        if not body.ok:
            return PatchReplay(kind, body.error, None, after, None, None, [], note=body.error)
        if exchange.status is None or exchange.status >= 300 or not isinstance(after, dict):
            return PatchReplay(
                kind,
                body.value,
                None,
                after,
                None,
                None,
                [],
                note="the server did not apply the patch",
            )
        before, why_not = self._before(exchange, after)
        if before is None:
            return PatchReplay(kind, body.value, None, after, None, None, [], note=why_not)
        from k8s_wiretap.explain.patches import replay_patch

        return replay_patch(self, exchange, kind, body.value, before, after)

    def _before(
        self, exchange: Exchange, after: dict[str, Any]
    ) -> tuple[Observation | None, str | None]:
        """The object as the server had it before the patch, or None and why not."""
        info, key = exchange.info, _key(exchange)
        observation = self.history.before(key, exchange.time)
        if observation is None and exchange.status == 201:  # a server-side apply created it
            return Observation(exchange.time, {}, "nothing: the patch created it", ""), None
        if observation is None:
            return None, "no earlier observation of the object in the recording"
        if self.history.stale(key, observation, resource_version(after)):
            return None, "the last observation before the patch is stale (a write came between)"
        if info.subresource == "scale" and (info.group, info.resource) in SCALABLE:
            api_version = str(after.get("apiVersion", "autoscaling/v1"))
            scale = scale_of(observation.object, api_version)
            source = f"{observation.source} (as its scale)"
            return Observation(observation.time, scale, source, observation.exchange), None
        return observation, None

    def openapi_documents(self) -> list[tuple[float, Exchange]]:
        """The recording's successful `/openapi/v2` fetches, in time order."""
        if self._openapi is None:
            self._openapi = [
                (e.time, e)
                for e in self.exchanges
                if e.path.startswith("/openapi/v2") and e.status == 200
            ]
        return self._openapi

    def schema_from(self, exchange_id: str, document: dict[str, Any]) -> PatchSchema:
        """The patch schema of a recorded OpenAPI document, built once."""
        if exchange_id not in self._schemas:
            self._schemas[exchange_id] = PatchSchema.from_openapi(document)
        return self._schemas[exchange_id]
