"""How an h2 client's stream ends when the API server goes away in the middle of its response.

A dying API server closes its connections: a client connected directly reads the end of
the connection, and client-go takes the end of a watch that way as the watch's end (an
`io.ErrUnexpectedEOF`, logged only at -v=1): `kubectl get -w` prints nothing and exits.
mitmproxy 12.3.1's `Http2Connection._handle_event` (layers/http/_http2.py) instead resets
the client's stream with INTERNAL_ERROR once the response has started, which client-go
reports as an error: `stream error: stream ID 3; INTERNAL_ERROR`.

`install()` patches `Http2Server._handle_event` so that a `ResponseProtocolError` of the
upstream's side (`GENERIC_SERVER_ERROR`: the upstream connection closed or broke) on a
stream whose response headers went out ends the stream with END_STREAM, as the end of the
connection ends it for a direct client. Every other error, and one before the response
started (a 502 Status), is mitmproxy's as before. The recording still says what happened:
the exchange's `end` carries the error (the `error` hook runs before the stream ends).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from mitmproxy.proxy import commands, events
from mitmproxy.proxy.layers.http import _http2
from mitmproxy.proxy.layers.http._events import ErrorCode, ResponseProtocolError

__all__ = ["install"]

Commands = Generator[commands.Command, Any, None]
_original: dict[str, Any] = {}


def _lost_upstream(self: _http2.Http2Server, event: events.Event) -> bool:
    """A loss of the upstream after this stream's response started."""
    if not isinstance(event, ResponseProtocolError):
        return False
    if event.code is not ErrorCode.GENERIC_SERVER_ERROR or not self.is_open_for_us(event.stream_id):
        return False
    return bool(self.h2_conn.streams[event.stream_id].state_machine.headers_sent)


def handle_event(self: _http2.Http2Server, event: events.Event) -> Commands:
    """mitmproxy's; a stream whose upstream went away mid-response ends (see the module)."""
    if _lost_upstream(self, event):
        assert isinstance(event, ResponseProtocolError)
        self.h2_conn.end_stream(event.stream_id)
        yield commands.SendData(self.conn, self.h2_conn.data_to_send())
        return
    yield from _original["_handle_event"](self, event)


def install() -> None:
    """Patch mitmproxy (once per process)."""
    if _original:
        return
    _original["_handle_event"] = _http2.Http2Server._handle_event
    _http2.Http2Server._handle_event = handle_event  # type: ignore[method-assign]
