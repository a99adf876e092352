"""exec, attach and port-forward streams: which protocol they were upgraded to, and the
messages of a `channel.k8s.io` WebSocket, decoded.

kubectl (1.30 and later for exec and attach, 1.31 for port-forward; KEP-4006) first asks
for a WebSocket: a GET with `Upgrade: websocket` and the subprotocols it speaks in
`Sec-WebSocket-Protocol` — `v5.channel.k8s.io` for exec and attach,
`SPDY/3.1+portforward.k8s.io` for port-forward — and falls back to a SPDY POST
(`Upgrade: SPDY/3.1`, `X-Stream-Protocol-Version`) only when the upgrade is refused. The
API server answers 101 with the subprotocol it picked, then (gates
TranslateStreamCloseWebsocketRequests and PortForwardWebsockets) translates the stream to
SPDY towards the kubelet (apiserver pkg/util/proxy/streamtranslator.go, streamtunnel.go).

A `channel.k8s.io` message is one stream's bytes behind one byte naming the stream
(apimachinery pkg/util/remotecommand/constants.go): 0 stdin, 1 stdout, 2 stderr, 3 error
(from v4 on, a meta/v1 Status: Success, or Failure with the exit code or the reason the
command could not run), 4 resize (`{"Width": .., "Height": ..}`), and in v5 255 close (its
one byte the stream the client closed: stdin's end). The `base64.` variants send the
stream's digit and the bytes base64-encoded, as text. A port-forward's
`SPDY/3.1+portforward.k8s.io` messages are SPDY frames carried whole (tunnelled).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

from k8s_wiretap.capture.exchange import Exchange

__all__ = [
    "STREAMS",
    "ChannelMessage",
    "StreamProtocol",
    "decode_channel_message",
    "stream_messages",
    "stream_protocol",
]

STREAMS = {0: "stdin", 1: "stdout", 2: "stderr", 3: "error", 4: "resize", 255: "close"}
CHANNEL = "channel.k8s.io"
TUNNELLED = "SPDY/3.1+"


@dataclass(frozen=True, slots=True)
class StreamProtocol:
    """How an exec, attach or port-forward was upgraded: `transport` "websocket" or
    "spdy", the subprotocols the client offered, and the one the server chose ("" when it
    chose none: the upgrade was refused)."""

    transport: str
    offered: tuple[str, ...]
    chosen: str

    @property
    def tunnelled(self) -> bool:
        """SPDY carried inside a WebSocket (kubectl port-forward's)."""
        return self.chosen.startswith(TUNNELLED)

    def said(self) -> str:
        """In words: "a WebSocket (v5.channel.k8s.io)", "SPDY (v4.channel.k8s.io)"."""
        name = "a WebSocket" if self.transport == "websocket" else "SPDY"
        protocol = self.chosen or ", ".join(self.offered)
        return f"{name} ({protocol})" if protocol else name

    def to_json(self) -> dict[str, Any]:
        return {"transport": self.transport, "offered": list(self.offered), "chosen": self.chosen}


@dataclass(frozen=True, slots=True)
class ChannelMessage:
    """One message of a `channel.k8s.io` WebSocket: the stream it belongs to, its bytes,
    and for the error and resize streams their JSON (a Status, a terminal size)."""

    stream: str
    data: bytes
    from_client: bool
    document: Any = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {"stream": self.stream, "from_client": self.from_client}
        if self.document is not None:
            record["document"] = self.document
        elif self.stream == "close":
            record["closes"] = STREAMS.get(self.data[0], str(self.data[0])) if self.data else ""
        else:
            record["text"] = self.data.decode("utf-8", "replace")
        if self.error:
            record["error"] = self.error
        return record


def stream_protocol(exchange: Exchange) -> StreamProtocol | None:
    """The upgrade of an exec, attach or port-forward exchange; None for any other."""
    if not exchange.info.streaming:
        return None
    upgraded = exchange.status == 101
    if exchange.request_header("upgrade").lower() == "websocket":
        offered = _listed(exchange.request_header("sec-websocket-protocol"))
        chosen = exchange.response_header("sec-websocket-protocol") if upgraded else ""
        return StreamProtocol("websocket", offered, chosen.strip())
    offered = tuple(
        value.strip()
        for key, value in exchange.request.headers
        if key.lower() == "x-stream-protocol-version"
    )
    chosen = exchange.response_header("x-stream-protocol-version") if upgraded else ""
    return StreamProtocol("spdy", offered, chosen.strip())


def _listed(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def decode_channel_message(data: bytes, protocol: str, from_client: bool) -> ChannelMessage:
    """One WebSocket message of a `channel.k8s.io` stream (`protocol` the chosen
    subprotocol); never raises: a message it cannot read says why in `error`."""
    if not data:
        return ChannelMessage("", b"", from_client, error="an empty message names no stream")
    if "base64." in protocol:
        digit, payload = data[:1], data[1:]
        try:
            number = int(digit.decode("ascii"))
            data = bytes([number]) + base64.b64decode(payload, validate=True)
        except (ValueError, UnicodeDecodeError) as error:
            return ChannelMessage("", data, from_client, error=f"not base64 channel data: {error}")
    stream = STREAMS.get(data[0], f"channel {data[0]}")
    payload = data[1:]
    if stream in ("error", "resize") and payload:
        try:
            return ChannelMessage(stream, payload, from_client, json.loads(payload))
        except ValueError as error:
            return ChannelMessage(stream, payload, from_client, error=f"not JSON: {error}")
    return ChannelMessage(stream, payload, from_client)


def stream_messages(exchange: Exchange) -> list[ChannelMessage]:
    """The decoded messages of an exec or attach WebSocket, in order ([] for anything else,
    a port-forward's tunnelled SPDY frames included)."""
    protocol = stream_protocol(exchange)
    if protocol is None or protocol.transport != "websocket" or CHANNEL not in protocol.chosen:
        return []
    return [
        decode_channel_message(event.data.data, protocol.chosen, event.from_client)
        for event in exchange.events
        if event.kind == "websocket"
    ]
