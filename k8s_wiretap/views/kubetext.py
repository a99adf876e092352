"""One Kubernetes message body as text: the JSON the API server would send, redacted.

What mitmproxy's contentview (views/contentview.py) shows, kept free of mitmproxy so it reads
like any other view: a `Message` says what the view knows of a body (its exchange's request
line, its Content-Type, the response status), `render` turns the body into text.

- A body (protobuf `k8s\\0` envelope, CBOR, JSON, YAML, gnostic OpenAPI) is redacted as a
  recording's is (capture/redact.py), decoded (decode/body.py) and printed as indented JSON;
  text (logs) as it is.
- A watch stream (`;stream=watch`, `application/cbor-seq`, or a JSON watch) is cut into its
  events (wire/framing.py), each redacted and decoded (decode/watch.py) and printed as one
  line of compact JSON, `{"type":...,"object":...}`: the API server's JSON watch.
- A WebSocket message of a watch is one such event.

What cannot be read is one line saying so, `undecodable: <reason> [<hex preview>]`, never an
exception; nothing here raises on a body, however malformed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from k8s_wiretap.capture.redact import Redactor
from k8s_wiretap.decode.body import decode_body, undecodable
from k8s_wiretap.decode.watch import WatchEvent, decode_frame
from k8s_wiretap.kube.media import (
    CBOR_SEQ,
    PATCH_TYPES,
    PROTOBUF,
    is_cbor,
    is_watch_stream,
    media_type,
    response_media,
)
from k8s_wiretap.kube.requestinfo import API_PREFIXES, RequestInfo, parse_request
from k8s_wiretap.wire.envelope import MAGIC
from k8s_wiretap.wire.framing import framer_for

__all__ = ["Message", "is_kubernetes", "render"]

# The first path segment of what an API server serves with Kubernetes bodies: the API groups
# (/api, /apis), /version, /openapi/v2 and /openapi/v3 (apiserver pkg/server/routes).
API_ROOTS = API_PREFIXES | {"version", "openapi"}
KUBERNETES_MEDIA = frozenset({PROTOBUF, CBOR_SEQ, *PATCH_TYPES})


@dataclass(frozen=True)
class Message:
    """A body's context: the request it belongs to (or answers), its own Content-Type, and
    for a response its status. `websocket_text` is set for a WebSocket message (True when it
    was a text message); `from_client` for a WebSocket message the client sent."""

    method: str
    target: str  # the request's path and query
    content_type: str = ""  # the whole header, parameters included
    accept: str = ""  # the request's Accept: a response's real media type may depend on it
    status: int | None = None  # None: the request's own body
    websocket_text: bool | None = None
    from_client: bool = False

    @property
    def info(self) -> RequestInfo:
        return parse_request(self.method, self.target)

    @property
    def on_api_path(self) -> bool:
        """The path is one an API server serves (`/api/...`, `/apis/...`, `/version`, ...)."""
        first = self.target.split("?", 1)[0].lstrip("/").split("/", 1)[0]
        return first in API_ROOTS

    @property
    def watch_event(self) -> bool:
        """A WebSocket message the API server sent on a watch: one event."""
        return self.websocket_text is not None and not self.from_client and self._watching

    @property
    def watch_stream(self) -> bool:
        """A response whose body is a stream of watch events."""
        if self.websocket_text is not None or self.status != 200:
            return False
        return is_watch_stream(self.content_type) or self._watching

    @property
    def _watching(self) -> bool:
        return self.info.verb == "watch"


def is_kubernetes(message: Message, data: bytes) -> bool:
    """Whether `data` is a Kubernetes body: a `k8s\\0` envelope, a Kubernetes media type
    (protobuf, CBOR, a patch, a watch stream), a body on an API server's path, or an event of
    a WebSocket watch."""
    if message.websocket_text is not None:
        return message.watch_event
    media = media_type(message.content_type)
    return (
        data[:4] == MAGIC
        or media in KUBERNETES_MEDIA
        or is_cbor(media)
        or is_watch_stream(message.content_type)
        or message.on_api_path
    )


def render(message: Message, data: bytes, redactor: Redactor) -> str:
    """`data` as text (see the module docstring); never raises."""
    try:
        if not data:
            return ""
        if message.watch_event:
            content_type = "application/json" if message.websocket_text else ""
            return _event_line(_event(message.info, data, content_type, redactor))
        if message.watch_stream:
            return _stream(message, data, redactor)
        return _body(message, data, redactor)
    except Exception as error:  # a bug here must show as such, not take mitmproxy's view down
        return undecodable(f"{type(error).__name__}: {error}", data)


def _body(message: Message, data: bytes, redactor: Redactor) -> str:
    content_type = message.content_type
    if message.status is not None:
        content_type = response_media(content_type, message.accept)
    redacted, _ = redactor.body(message.info, content_type, data)
    decoded = decode_body(redacted, content_type)
    if not decoded.ok:
        return str(decoded.error)
    if decoded.format == "text":
        return str(decoded.value)
    return _json(decoded.value, indent=2)


def _stream(message: Message, data: bytes, redactor: Redactor) -> str:
    framer = framer_for(message.content_type)
    frames = [*framer.feed(data), *framer.flush()]
    info = message.info
    return "\n".join(
        _event_line(_event(info, frame, message.content_type, redactor)) for frame in frames
    )


def _event(info: RequestInfo, frame: bytes, content_type: str, redactor: Redactor) -> WatchEvent:
    redacted, _ = redactor.watch_frame(info, frame, content_type)
    return decode_frame(redacted, content_type)


def _event_line(event: WatchEvent) -> str:
    if event.error:
        return event.error
    return _json({"type": event.type, "object": event.object}, separators=(",", ":"))


def _json(value: Any, **layout: Any) -> str:
    return json.dumps(value, ensure_ascii=False, **layout)
