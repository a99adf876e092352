"""The whole-request deadline (`Limits.request_timeout`) for requests over h2.

Over HTTP/1 the deadline is `limits.py`'s (a connection carries one request at a time).
Over h2 one connection carries many streams, and mitmproxy 12.3.1's `Http2Server` (layers/
http/_http2.py) has no deadline on any of them: a client could open a stream and send its
body a byte at a time for as long as the connection lives. `install()` patches
`Http2Server._handle_event`: each request whose body follows its headers gets a wake-up at
the deadline, counted from its headers; if the client has not ended the request by then,
the stream gets a 408 Kubernetes `Status` (if no response started on it) and RST_STREAM
NO_ERROR (stop sending), its upstream request is cut, and the exchange is recorded with
that answer and its reason, as over HTTP/1. Other streams of the connection go on.

A request's headers over h2 are one HEADERS frame (and CONTINUATIONs) that hyper-h2 takes
whole; a connection that drips a frame is one that has not finished a request, under the
connection limits (guard.py) and mitmproxy's h2 stack's own.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import h2.errors
import h2.stream
from mitmproxy import http
from mitmproxy.proxy import commands, events
from mitmproxy.proxy.layers.http import _http2
from mitmproxy.proxy.layers.http._base import ReceiveHttp
from mitmproxy.proxy.layers.http._events import (
    ErrorCode,
    RequestEndOfMessage,
    RequestHeaders,
    RequestProtocolError,
)

from k8s_wiretap.proxy import limits
from k8s_wiretap.proxy.status import status_body

__all__ = ["install"]

Commands = Generator[commands.Command, Any, None]
_original: dict[str, Any] = {}
RECEIVING = (h2.stream.StreamState.OPEN, h2.stream.StreamState.HALF_CLOSED_LOCAL)
_Clock = tuple[int, http.Request | None]


def _clocks(self: _http2.Http2Server) -> dict[commands.RequestWakeup, _Clock]:
    """The connection's pending deadlines: wake-up → its stream and (until the request
    ends: nothing more is held of a request that came whole) the request."""
    clocks = getattr(self, "_wiretap_clocks", None)
    if clocks is None:
        clocks = self._wiretap_clocks = {}  # type: ignore[attr-defined]
    return clocks


def _by_stream(self: _http2.Http2Server) -> dict[int, commands.RequestWakeup]:
    """The pending deadline of each stream whose request is still arriving."""
    streams = getattr(self, "_wiretap_streams", None)
    if streams is None:
        streams = self._wiretap_streams = {}  # type: ignore[attr-defined]
    return streams


def handle_event(self: _http2.Http2Server, event: events.Event) -> Commands:
    """mitmproxy's, with a deadline on each request (see the module)."""
    if isinstance(event, events.Wakeup) and event.command in _clocks(self):
        stream_id, request = _clocks(self).pop(event.command)
        _by_stream(self).pop(stream_id, None)
        if request is not None:
            yield from _deadline(self, stream_id, request)
        return
    for command in _original["_handle_event"](self, event):
        yield command
        received = command.event if isinstance(command, ReceiveHttp) else None
        if isinstance(received, RequestHeaders) and not received.end_stream:
            wakeup = commands.RequestWakeup(limits.LIMITS.request_timeout)
            _clocks(self)[wakeup] = (received.stream_id, received.request)
            _by_stream(self)[received.stream_id] = wakeup
            yield wakeup
        elif isinstance(received, RequestEndOfMessage | RequestProtocolError):
            pending = _by_stream(self).pop(received.stream_id, None)
            if pending is not None:  # its wake-up still comes, and finds nothing to do
                _clocks(self)[pending] = (received.stream_id, None)


def _deadline(self: _http2.Http2Server, stream_id: int, request: http.Request) -> Commands:
    stream = self.h2_conn.streams.get(stream_id)
    if stream is None or stream.state_machine.state not in RECEIVING:
        return  # the request ended (or the stream did)
    message = f"k8s-wiretap: {limits.late_request()}"
    if not stream.state_machine.headers_sent:
        limits.refused_stream(request, 408, message)
        headers = [(b":status", b"408"), (b"content-type", b"application/json")]
        self.h2_conn.send_headers(stream_id, headers)
        self.h2_conn.send_data(stream_id, status_body(408, message), end_stream=True)
    self.h2_conn.reset_stream(stream_id, h2.errors.ErrorCodes.NO_ERROR)
    self.streams.pop(stream_id, None)
    yield commands.SendData(self.conn, self.h2_conn.data_to_send())
    error = RequestProtocolError(stream_id, message, ErrorCode.GENERIC_CLIENT_ERROR)
    yield ReceiveHttp(error)


def install() -> None:
    """Patch mitmproxy (once per process; after `upstream_loss.install`, which it wraps)."""
    if _original:
        return
    _original["_handle_event"] = _http2.Http2Server._handle_event
    _http2.Http2Server._handle_event = handle_event  # type: ignore[method-assign]
