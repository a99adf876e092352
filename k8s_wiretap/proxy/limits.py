"""Bounds and strictness the API server has and mitmproxy 12.3.1's HTTP/1 server lacks.

The proxy answers in place of the API server; what the API server refuses must not cost the
proxy memory or pass upstream. kube-apiserver's `http.Server` (k8s.io/apiserver
`SecureServingInfo.Serve`) sets `MaxHeaderBytes: 1 << 20` and `ReadHeaderTimeout: 32 *
time.Second`; mitmproxy's `Http1Server.read_headers` has neither ("FIXME: protect against
header size DoS") and takes HTTP versions and header bytes the API server refuses. `install()`
patches, in mitmproxy 12.3.1's `mitmproxy.proxy.layers.http`:

- `_http1.Http1Server.read_headers`: a request head (request line and headers) larger than
  `MAX_HEAD` is answered 431, one not complete within `Limits.header_timeout` seconds of its
  first byte 408 (a `RequestWakeup`, handled in the patched `Http1Server._handle_event`); a
  request whose head and body are not both in within `Limits.request_timeout` of the head's
  first byte 408 too (the whole-request deadline: a client sending a byte a second is cut
  at it), its upstream request cut; a
  head with an HTTP version other than 1.0 and 1.1, an invalid header name, or a control
  character (NUL included) in a header value 400. The head is then parsed by mitmproxy's own
  `read_request_head`, whose errors are answered 400 as before.
- `_http1.Http1Server.read_body`: a body that breaks (a bad chunk size) is answered 400
  before the connection closes (mitmproxy only closes it).
- `HttpStream.send_response` and `_http1.Http1Server.send`: a response that is done while
  its request's body still comes (the API server answers 413 to a body over its 3 MiB and
  closes its side) ends the exchange and closes the client's connection, as Go's server
  does; the rest of the body is read and dropped, not sent to a closed upstream connection.
  mitmproxy waited for the body's end before it ended the response, and stopped reading the
  client once the upstream connection no longer took the body: the client, still sending,
  waited forever or, when the upstream reset came first, got no answer at all.
- `_http1.make_error_response`: every error mitmproxy answers itself (400, 502, ...) is a
  Kubernetes `Status` (`status.py`), not its HTML page.
- `HttpStream.start_request_stream` and `HttpStream.state_stream_request_body`: a request
  whose body is streamed (`flow.request.stream`, set by the wiretap addon so that bodies are
  never held whole) gets its `request` hook before anything goes upstream, with no body,
  and not again after the body: mitmproxy runs it only after the body went upstream, too
  late for upstream.py to choose credentials, rewrite Host or refuse. If a `request` hook
  answers (a 403, a 503), the body is read and dropped and the answer follows it.

Each refusal closes the connection: its write side at once, all of it LINGER seconds later;
meanwhile what the client still sends is read and dropped, so that the refusal is not lost
to a reset while the client is still writing (what Go's `closeWriteAndWait` does). A refusal
of a head whose request line could be read goes through mitmproxy as a request with a
protocol error (so the addons record it), and its reply is kept for the addon (`reply_for`);
one without (bytes that are not HTTP) is handed to `Limits.refused`, for a note. h2 (by
ALPN) is mitmproxy's h2 stack, whose own limits hold, with the whole-request deadline per
stream (h2deadline.py); the connections themselves are bounded by guard.py.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from types import MethodType
from typing import Any

from h11._receivebuffer import ReceiveBuffer
from mitmproxy import http
from mitmproxy.connection import ConnectionState
from mitmproxy.net.http import http1
from mitmproxy.proxy import commands, events
from mitmproxy.proxy.layers import http as http_layer
from mitmproxy.proxy.layers.http import _http1
from mitmproxy.proxy.layers.http._base import HttpEvent, ReceiveHttp
from mitmproxy.proxy.layers.http._events import (
    ErrorCode,
    RequestData,
    RequestEndOfMessage,
    RequestHeaders,
    RequestProtocolError,
    ResponseEndOfMessage,
)
from mitmproxy.proxy.layers.http._hooks import HttpRequestHook, HttpResponseHeadersHook
from mitmproxy.utils import human

from k8s_wiretap.proxy.status import status_response

__all__ = [
    "HEADER_TIMEOUT",
    "LIMITS",
    "MAX_HEAD",
    "REQUEST_TIMEOUT",
    "Limits",
    "install",
    "refused_stream",
    "reply_for",
    "spoke",
]

MAX_HEAD = 1 << 20  # kube-apiserver's MaxHeaderBytes (Go's DefaultMaxHeaderBytes)
HEADER_TIMEOUT = 32  # kube-apiserver's ReadHeaderTimeout, "just shy of requestTimeoutUpperBound"
REQUEST_TIMEOUT = 60  # kube-apiserver's --request-timeout default (1m0s)
VERSIONS = (b"HTTP/1.0", b"HTTP/1.1")
LINGER = 2.0  # seconds a refused connection is still read (and dropped) before it closes
EARLY = "wiretap_early_request_hook"  # flow metadata: the request hook ran before streaming
TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
CONTROL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")  # in a header value (HTAB is allowed)

Commands = Generator[commands.Command, Any, None]


@dataclass
class Limits:
    max_head: int = MAX_HEAD
    header_timeout: float = HEADER_TIMEOUT
    request_timeout: float = REQUEST_TIMEOUT  # head and body, from the head's first byte
    refused: Callable[[str, int, str], None] | None = None  # (peer, status, message)
    noted: Callable[[str], None] | None = None  # a warning for the recording (guard.py)


LIMITS = Limits()
_replies: dict[str, tuple[int, str]] = {}  # client connection id → the refusal it was sent
_spoken: set[str] = set()  # client connections that sent a byte of HTTP/1 (`spoke`)


def spoke(client_id: str, *, forget: bool = False) -> bool:
    """Whether the client connection sent a byte of an HTTP/1 request (a plain connection
    that did is under the request deadlines, not the handshake deadline: guard.py);
    `forget` once it closed."""
    if forget:
        _spoken.discard(client_id)
        return False
    return client_id in _spoken


_stream_replies: dict[int, tuple[int, str]] = {}  # id() of an h2 request → its refusal


def reply_for(client_id: str, request: http.Request | None = None) -> tuple[int, str] | None:
    """The status and message the proxy refused the client connection's request with (an
    h2 stream's: by its `request`, see `refused_stream`)."""
    if request is not None and id(request) in _stream_replies:
        return _stream_replies.pop(id(request))
    return _replies.pop(client_id, None)


def refused_stream(request: http.Request, status: int, message: str) -> None:
    """An h2 stream's request was answered `status` by the proxy (h2deadline.py)."""
    _stream_replies[id(request)] = (status, message)


class _Refused(ValueError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def error_response(status_code: int, message: str = "") -> bytes:
    """What mitmproxy's `make_error_response` gives, as a Kubernetes Status."""
    response = status_response(status_code, message, close=True)
    return bytes(http1.assemble_response(response))


# -- the request head -----------------------------------------------------------------------
def _check_head(lines: list[bytes]) -> None:
    """Refuse what the API server's Go HTTP server refuses, before mitmproxy parses it."""
    parts = lines[0].split(b" ")
    if len(parts) != 3 or not TOKEN.fullmatch(parts[0]) or CONTROL.search(parts[1]):
        raise _Refused(400, f"malformed request line {_show(lines[0])}")
    if parts[2] not in VERSIONS:
        raise _Refused(400, f"HTTP version {_show(parts[2])} is not supported")
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if line[:1] in (b" ", b"\t"):
            raise _Refused(400, f"obsolete line folding in header line {_show(line)}")
        if not colon or not TOKEN.fullmatch(name):
            raise _Refused(400, f"invalid header name {_show(name)}")
        if CONTROL.search(value):
            raise _Refused(400, f"control character in the value of header {_show(name)}")


def _show(data: bytes, limit: int = 100) -> str:
    text = data[:limit].decode("ascii", "backslashreplace")
    return repr(text + ("..." if len(data) > limit else ""))


def _known_request(lines: list[bytes]) -> http.Request | None:
    """The request as far as a refused head tells it, for the recording; None if its request
    line is not one."""
    parts = lines[0].split(b" ") if lines else []
    if len(parts) != 3 or not TOKEN.fullmatch(parts[0]) or not parts[2].startswith(b"HTTP/"):
        return None
    target = parts[1].decode("ascii", "backslashreplace").encode()
    fields = [(n, v.strip()) for n, c, v in (line.partition(b":") for line in lines[1:]) if c]
    return http.Request(
        "", 0, parts[0], b"", b"", target, parts[2], http.Headers(fields), None, None,
        time.time(), None,
    )  # fmt: skip


def _first_lines(data: bytes) -> list[bytes]:
    """The complete lines at the start of a head that never ended (for `_known_request`)."""
    lines = data[:65536].split(b"\n")[:-1]
    return [line.rstrip(b"\r") for line in lines]


def _refuse(
    self: _http1.Http1Server, status: int, message: str, known: http.Request | None
) -> Commands:
    """Answer with a Status and close; pass what is known of the request on to be recorded."""
    message = f"k8s-wiretap: {message}"
    self._wiretap_deadline = None  # type: ignore[attr-defined]
    yield commands.SendData(self.conn, error_response(status, message))
    yield from _linger(self)
    if known is not None:
        _replies[self.conn.id] = (status, message)
        yield ReceiveHttp(RequestHeaders(self.stream_id, known, True))
        error = RequestProtocolError(self.stream_id, message, ErrorCode.GENERIC_CLIENT_ERROR)
        yield ReceiveHttp(error)
        return
    peer = human.format_address(self.conn.peername)
    yield commands.Log(f"{peer}: {message}")
    if LIMITS.refused is not None:
        LIMITS.refused(peer, status, message)


def _begin(self: _http1.Http1Server) -> None:
    """The request's first byte is in: its whole-request clock starts."""
    if not self.buf:
        return
    _spoken.add(self.conn.id)
    if getattr(self, "_wiretap_started", None) is None:
        self._wiretap_started = time.monotonic()  # type: ignore[attr-defined]


def _head_timeout() -> float:
    return min(LIMITS.header_timeout, LIMITS.request_timeout)


def _start_clock(self: _http1.Http1Server) -> Commands:
    if getattr(self, "_wiretap_deadline", None) is None:
        self._wiretap_deadline = time.monotonic() + _head_timeout()  # type: ignore[attr-defined]
        wakeup = commands.RequestWakeup(_head_timeout())
        self._wiretap_wakeup = wakeup  # type: ignore[attr-defined]
        yield wakeup


def _start_body_clock(self: _http1.Http1Server) -> Commands:
    """The head is in and a body follows: the whole request's deadline (from the head's
    first byte) now holds for the body."""
    started = getattr(self, "_wiretap_started", None) or time.monotonic()
    self._wiretap_started = None  # type: ignore[attr-defined]  # the next request's clock
    wakeup = commands.RequestWakeup(max(0.0, started + LIMITS.request_timeout - time.monotonic()))
    self._wiretap_body_wakeup = wakeup  # type: ignore[attr-defined]
    yield wakeup


def read_headers(self: _http1.Http1Server, event: events.ConnectionEvent) -> Commands:
    """mitmproxy's `Http1Server.read_headers`, bounded and strict (see the module)."""
    if not isinstance(event, events.DataReceived):
        yield from _original["read_headers"](self, event)
        return
    _begin(self)
    lines = self.buf.maybe_extract_lines()
    while lines == []:  # blank lines before a request line are skipped
        lines = self.buf.maybe_extract_lines()
    if lines is None:
        if len(self.buf) > LIMITS.max_head:
            known = _known_request(_first_lines(bytes(self.buf)))
            yield from _refuse(self, 431, _too_large(), known)
        elif len(self.buf):
            yield from _start_clock(self)
        return
    head = [bytes(line) for line in lines]
    yield from _read_head(self, head, event)


def send(self: _http1.Http1Server, event: HttpEvent) -> Commands:
    """mitmproxy's `Http1Server.send`; a response done before its request's body closes the
    connection (see the module)."""
    yield from _original["send"](self, event)
    if isinstance(event, ResponseEndOfMessage) and self.request and not self.request_done:
        yield from _linger(self)


def _linger(self: _http1.Http1Server) -> Commands:
    """Close the write side now, all of it LINGER seconds later; read and drop meanwhile."""
    self.state = self.done
    self.buf = ReceiveBuffer()
    yield commands.CloseTcpConnection(self.conn, half_close=True)
    self._wiretap_linger = commands.RequestWakeup(LINGER)  # type: ignore[attr-defined]
    yield self._wiretap_linger  # type: ignore[attr-defined]


def _too_large() -> str:
    return f"the request head is larger than {human.pretty_size(LIMITS.max_head)}"


def _read_head(self: _http1.Http1Server, head: list[bytes], event: events.DataReceived) -> Commands:
    try:
        if sum(len(line) + 2 for line in head) > LIMITS.max_head:
            raise _Refused(431, _too_large())
        _check_head(head)
        self.request = http1.read_request_head(head)
        expected_body_size = http1.expected_http_body_size(self.request)
    except ValueError as error:
        status = error.status if isinstance(error, _Refused) else 400
        yield from _refuse(self, status, str(error), _known_request(head))
        return
    self._wiretap_deadline = None  # type: ignore[attr-defined]
    if expected_body_size == 0:
        self._wiretap_started = None  # type: ignore[attr-defined]
    else:
        yield from _start_body_clock(self)
    yield ReceiveHttp(RequestHeaders(self.stream_id, self.request, expected_body_size == 0))
    self.body_reader = _http1.make_body_reader(expected_body_size)
    self.state = self.read_body
    yield from self.state(event)


def ours_linger(self: _http1.Http1Server, event: events.Wakeup) -> bool:
    return event.command is getattr(self, "_wiretap_linger", None)


def handle_event(self: _http1.Http1Server, event: events.Event) -> Commands:
    """The header timeout's wake-up; and nothing more is read from a refused connection."""
    if isinstance(event, events.Wakeup):
        ours = event.command is getattr(self, "_wiretap_wakeup", None)
        waiting = getattr(self, "_wiretap_deadline", None) is not None
        body = event.command is getattr(self, "_wiretap_body_wakeup", None)
        if ours and waiting and self.state == self.read_headers:
            known = _known_request(_first_lines(bytes(self.buf)))
            yield from _refuse(self, 408, _late_head(), known)
        elif body and self.state == self.read_body:
            yield from _cut_body(self)
        elif ours_linger(self, event) and self.conn.state is not ConnectionState.CLOSED:
            yield commands.CloseConnection(self.conn)
        return
    if isinstance(event, events.DataReceived) and self.state == self.done:
        return
    yield from _original["_handle_event"](self, event)


def _late_head() -> str:
    if LIMITS.header_timeout <= LIMITS.request_timeout:
        return f"the request head did not arrive within {LIMITS.header_timeout:g} s"
    return late_request()


def late_request() -> str:
    return f"the request did not arrive within {LIMITS.request_timeout:g} s"


def _cut_body(self: _http1.Http1Server) -> Commands:
    """The whole-request deadline passed while the body still came: answer 408 if no
    response started (else only close), drop the rest, and end the exchange as a client
    error (its upstream connection is closed: the body there is cut)."""
    message = f"k8s-wiretap: {late_request()}"
    if self.response is None:
        _replies[self.conn.id] = (408, message)
        yield commands.SendData(self.conn, error_response(408, message))
    yield from _linger(self)
    error = RequestProtocolError(self.stream_id, message, ErrorCode.GENERIC_CLIENT_ERROR)
    yield ReceiveHttp(error)


def read_body(self: _http1.Http1Server, event: events.Event) -> Commands:
    """mitmproxy's `read_body`; a body that breaks is answered 400 before the close."""
    held: commands.Command | None = None  # a close, until we know whether a body broke
    for command in _original["read_body"](self, event):
        answer = isinstance(event, events.DataReceived) and self.response is None
        if isinstance(command, commands.CloseConnection) and answer and held is None:
            held = command
            continue
        if held is not None and _broken_body(command):
            assert isinstance(command, ReceiveHttp)
            message = f"k8s-wiretap: {command.event.message}"  # type: ignore[attr-defined]
            _replies[self.conn.id] = (400, message)
            yield commands.SendData(self.conn, error_response(400, message))
        if held is not None:
            yield held
            held = None
        yield command
    if held is not None:
        yield held


def _broken_body(command: commands.Command) -> bool:
    if not isinstance(command, ReceiveHttp):
        return False
    event = command.event
    return isinstance(event, RequestProtocolError) and event.message.startswith("HTTP/1 protocol")


# -- streamed request bodies ----------------------------------------------------------------
def start_request_stream(self: http_layer.HttpStream) -> Commands:
    """The `request` hook before the streamed request goes upstream (see the module)."""
    if not self.flow.metadata.get(EARLY):
        self.flow.metadata[EARLY] = True
        yield HttpRequestHook(self.flow)
        if (yield from self.check_killed(True)):
            return
        if self.flow.response is not None:  # an addon answered: drop the body, then answer
            self.client_state = MethodType(_drop_request_body, self)
            return
    yield from _original["start_request_stream"](self)


def _drop_request_body(self: http_layer.HttpStream, event: events.Event) -> Commands:
    stream = self.flow.request.stream
    if isinstance(event, RequestData) and callable(stream):
        stream(event.data)
    elif isinstance(event, RequestEndOfMessage):
        if callable(stream):
            stream(b"")
        assert self.flow.response is not None
        self.flow.request.timestamp_end = self.flow.response.timestamp_start = time.time()
        self.client_state = self.state_done
        yield HttpResponseHeadersHook(self.flow)
        if (yield from self.check_killed(True)):
            return
        yield from self.send_response()


def send_response(self: http_layer.HttpStream, already_streamed: bool = False) -> Commands:
    """mitmproxy's; a response done while the request's body still streams ends the
    exchange (the rest of the body is not forwarded; `Http1Server.send` closes)."""
    yield from _original["send_response"](self, already_streamed)
    streaming = self.client_state == self.state_stream_request_body
    if streaming and self.server_state == self.state_done:
        self.client_state = self.state_done
        yield from self.flow_done()


def state_stream_request_body(self: http_layer.HttpStream, event: events.Event) -> Commands:
    """mitmproxy's, without the second `request` hook when the first one ran early."""
    inner = _original["state_stream_request_body"](self, event)
    if not self.flow.metadata.get(EARLY):
        yield from inner
        return
    reply = None
    while True:
        try:
            command = inner.send(reply)
        except StopIteration:
            return
        reply = None if isinstance(command, HttpRequestHook) else (yield command)


_original: dict[str, Any] = {}
_PATCHES: list[tuple[type, str, Any]] = [
    (_http1.Http1Server, "read_headers", read_headers),
    (_http1.Http1Server, "_handle_event", handle_event),
    (_http1.Http1Server, "read_body", read_body),
    (_http1.Http1Server, "send", send),
    (http_layer.HttpStream, "start_request_stream", start_request_stream),
    (http_layer.HttpStream, "send_response", send_response),
    (http_layer.HttpStream, "state_stream_request_body", state_stream_request_body),
]


def install() -> None:
    """Patch mitmproxy (once per process; see the module docstring for what and why)."""
    if _original:
        return
    for owner, name, patch in _PATCHES:
        _original[name] = getattr(owner, name)
        setattr(owner, name, patch)
    _original["make_error_response"] = _http1.make_error_response
    _http1.make_error_response = error_response
