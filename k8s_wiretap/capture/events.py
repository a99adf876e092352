"""What the proxy hands to the recorder: small, cheap snapshots of traffic as it passes.

The proxy's hooks run in its event loop and must stay fast, so they only copy references
into these objects and put them on a queue; everything else (decoding headers, redaction,
JSON, framing watch streams, writing) happens in the recorder's thread.
"""

from __future__ import annotations

from dataclasses import dataclass

from k8s_wiretap.capture.records import Client

__all__ = [
    "Chunk",
    "End",
    "Message",
    "Note",
    "ProxyEvent",
    "RequestBody",
    "RequestSeen",
    "ResponseSeen",
    "Stored",
]

Headers = list[tuple[bytes, bytes]]


@dataclass(slots=True)
class RequestSeen:
    """A request as the proxy got it. A request that broke before its body was in (or that
    the proxy rejected) is seen only at its error, with what was known: no body. A request
    whose body is streamed is seen before its body (`body_follows`): `RequestBody` events
    bring it."""

    id: str
    time: float
    listener: str
    client: Client
    server: str
    method: str
    target: str  # path and query, as sent
    http_version: str
    headers: Headers
    body: bytes | None  # None: none, or it never arrived whole
    injected: str | None  # which credential the proxy added, if any
    body_follows: bool = False  # the body comes as RequestBody events


@dataclass(slots=True)
class RequestBody:
    """Bytes of a streamed request body as they were forwarded: `data` is their first bytes
    (at most what the recording keeps), `size` how many passed; `end` when the body is in."""

    id: str
    time: float
    data: bytes
    size: int
    end: bool = False


@dataclass(slots=True)
class ResponseSeen:
    id: str
    time: float
    status: int
    reason: str
    http_version: str
    headers: Headers


@dataclass(slots=True)
class Chunk:
    """Bytes of a streamed response body, as they were forwarded."""

    id: str
    time: float
    data: bytes


@dataclass(slots=True)
class Message:
    """A WebSocket message or a chunk of an upgraded (SPDY) connection."""

    id: str
    time: float
    kind: str  # "websocket" or "tcp"
    from_client: bool
    data: bytes
    text: bool


@dataclass(slots=True)
class End:
    id: str
    time: float
    error: str | None = None
    body: bytes | None = None  # for responses that were not streamed (set by an addon)


@dataclass(slots=True)
class Note:
    time: float
    level: str
    message: str
    id: str | None = None


@dataclass(slots=True)
class Stored:
    """What etcd itself holds after a change: one event of a watch on the API server's
    etcd prefix (`k8s_wiretap/proxy/etcd.py`)."""

    time: float
    key: str
    revision: int  # the change's etcd revision: the object's new resourceVersion
    deleted: bool
    value: bytes  # the stored bytes (protobuf for built-in kinds, JSON for custom ones)


ProxyEvent = RequestSeen | RequestBody | ResponseSeen | Chunk | Message | End | Note | Stored
