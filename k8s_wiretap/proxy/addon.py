"""The wiretap addon: turns mitmproxy flows into the project's proxy events, nothing more.

Loadable by plain mitmproxy (`mitmdump -s "$(k8s-wiretap addon --path)" --set
wiretap_record=FILE`) and used by `k8s-wiretap proxy`. Every body, request and response, is
streamed through a tee that hands each chunk on as it passes (`flow.request.stream`,
`flow.response.stream`): watches and `logs -f` reach the client at once, and no body is held
whole in the proxy (of a request body, the recorder gets at most `wiretap_max_body` bytes and
the count of the rest). Framing, redaction and writing happen in the recorder's thread, never
on this event loop.

Loading the addon installs `limits.py` (the request head's size limit and read timeout,
the whole-request deadline, strict HTTP/1 parsing, Kubernetes `Status` error pages, the
`request` hook before a streamed body), `h2deadline.py` (the deadline per h2 stream) and
`upstream_loss.py` (an h2 stream whose upstream died ends, not reset): what the proxy
refuses is recorded as an exchange with the response the client got, or, for bytes that
were not HTTP, a TLS handshake that failed and a connection `guard.py` closed, as a note.

`wiretap_record` refuses an existing file unless `wiretap_overwrite` is set (an OptionsError
at start-up), and the file is created only in the `running` hook, once mitmproxy listens: a
mitmdump that fails to start leaves an existing recording as it was.

mitmproxy closes connections idle for `tcp_timeout` seconds (its option since 12.2.1; before,
a constant of 600 s); a quiet watch lives longer than that when direct (the API server ends it
after 30-60 minutes). So, when loaded, the addon raises mitmproxy's default to one day, unless
`tcp_timeout` was set already (`--set tcp_timeout=N` before `-s`, or a config file): that
choice stands. `k8s-wiretap proxy --idle-timeout` sets `tcp_timeout` itself.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from mitmproxy import connection, ctx, exceptions, http, tcp, tls
from mitmproxy.addonmanager import Loader
from mitmproxy.net.http import status_codes
from mitmproxy.utils import human

from k8s_wiretap.capture.events import (
    Chunk,
    End,
    Message,
    Note,
    RequestBody,
    RequestSeen,
    ResponseSeen,
)
from k8s_wiretap.capture.outputs import FileOutput, recording_problem
from k8s_wiretap.capture.recorder import DEFAULT_MAX_BODY, Output, Recorder
from k8s_wiretap.capture.records import Client
from k8s_wiretap.capture.redact import Redactor
from k8s_wiretap.proxy import backpressure, guard, h2deadline, limits, upstream_loss
from k8s_wiretap.proxy.status import status_body
from k8s_wiretap.proxy.upstream import INJECTED

__all__ = ["Wiretap"]

DEFAULT_IDLE_TIMEOUT = 24 * 3600
RECORDED = "wiretap_request_recorded"  # flow metadata: its request record was written
OVERWRITE_HINT = "set wiretap_overwrite to replace it"


class Wiretap:
    def __init__(
        self,
        recorder: Recorder | None = None,
        listeners: dict[str, str] | None = None,
        console: Callable[[], Output] | None = None,
    ) -> None:
        """`console` makes the output behind the `wiretap_console` option (a view's: the
        proxy layer only produces records)."""
        self.recorder = recorder
        self.console = console
        self.listeners = listeners or {}
        self._upgraded: dict[str, str] = {}  # client connection id → HTTP exchange id
        self._request_tees: dict[str, _RequestTee] = {}  # flow id → its request body's tee
        self._record_pending = False  # the recorder from options still needs its file

    def load(self, loader: Loader) -> None:
        limits.install()
        upstream_loss.install()
        h2deadline.install()
        backpressure.install()
        limits.LIMITS.refused = self._refused
        limits.LIMITS.noted = self._noted
        options = loader.master.options
        if not options.has_changed("tcp_timeout"):  # mitmproxy's 600 s would cut quiet watches
            options.update(tcp_timeout=DEFAULT_IDLE_TIMEOUT)
        loader.add_option("wiretap_record", str, "", "Write a k8s-wiretap recording here.")
        loader.add_option(
            "wiretap_overwrite", bool, False, "Replace an existing wiretap_record file."
        )
        loader.add_option(
            "wiretap_redact", bool, True, "Redact credentials and Secret values in the recording."
        )
        loader.add_option(
            "wiretap_max_body",
            str,
            str(DEFAULT_MAX_BODY),
            "Largest body or watch event recorded whole (e.g. 16m).",
        )
        loader.add_option("wiretap_console", bool, False, "Print a line per exchange.")
        loader.add_option(
            "wiretap_header_timeout",
            int,
            limits.HEADER_TIMEOUT,
            "Seconds a request head may take to arrive, from its first byte (then 408).",
        )

    def configure(self, updated: set[str]) -> None:
        if "tcp_timeout" in updated and ctx.options.tcp_timeout <= 0:
            # mitmproxy takes it, and then closes every connection as soon as it opens
            raise exceptions.OptionsError("tcp_timeout must be positive")
        if "wiretap_header_timeout" in updated:
            if ctx.options.wiretap_header_timeout <= 0:
                raise exceptions.OptionsError("wiretap_header_timeout must be positive")
            limits.LIMITS.header_timeout = ctx.options.wiretap_header_timeout
        if "wiretap_max_body" in updated:
            try:
                size = human.parse_size(ctx.options.wiretap_max_body)
            except ValueError as error:
                raise exceptions.OptionsError(f"wiretap_max_body: {error}") from error
            if size is None or size < 1:  # as `--max-body`: 0 would drop every body
                raise exceptions.OptionsError("wiretap_max_body: must be 1 byte or more")
        if self.recorder is None and ctx.options.wiretap_record:
            problem = recording_problem(
                self._record_path(), overwrite=ctx.options.wiretap_overwrite, hint=OVERWRITE_HINT
            )
            if problem:
                raise exceptions.OptionsError(f"wiretap_record: {problem}")
        if self.recorder is None and (ctx.options.wiretap_record or ctx.options.wiretap_console):
            self.recorder = self._recorder_from_options()

    @staticmethod
    def _record_path() -> Path:
        return Path(ctx.options.wiretap_record).expanduser()

    def _recorder_from_options(self) -> Recorder:
        """The recorder for the `wiretap_*` options; its file comes in `running`."""
        max_body = human.parse_size(ctx.options.wiretap_max_body) or DEFAULT_MAX_BODY
        redact = ctx.options.wiretap_redact
        outputs: list[Output] = []
        if ctx.options.wiretap_console and self.console is not None:
            outputs.append(self.console())
        self._record_pending = bool(ctx.options.wiretap_record)
        return Recorder(outputs, redactor=Redactor() if redact else None, max_body=max_body)

    def running(self) -> None:
        if self.recorder is None:
            return
        if self._record_pending:  # mitmproxy listens: now the file may be created
            self._record_pending = False
            path = self._record_path()
            try:
                output = FileOutput(
                    path,
                    redacted=self.recorder.redactor is not None,
                    max_body=self.recorder.max_body,
                    overwrite=ctx.options.wiretap_overwrite,
                )
            except OSError as error:
                exists = isinstance(error, FileExistsError)
                reason = f"exists ({OVERWRITE_HINT})" if exists else error.strerror
                logging.error(f"wiretap_record: {path}: {reason}")
                ctx.master.shutdown()
                return
            self.recorder.outputs.insert(0, output)
        if not self.recorder.started:
            self.recorder.start()

    def done(self) -> None:
        if self.recorder is not None:
            self.recorder.close()

    # -- HTTP -----------------------------------------------------------------------------
    def requestheaders(self, flow: http.HTTPFlow) -> None:
        """Stream the body (if any): forwarded as it comes, never held whole."""
        if self.recorder is None:
            flow.request.stream = True
            return
        tee = self._request_tees[flow.id] = _RequestTee(
            self.recorder.put, flow.id, self.recorder.max_body
        )
        flow.request.stream = tee

    def _flush_request_body(self, flow: http.HTTPFlow, *, done: bool = False) -> None:
        """What the request body's tee gathered goes to the recorder (before the response
        or the end it must precede)."""
        tee = self._request_tees.pop(flow.id, None) if done else self._request_tees.get(flow.id)
        if tee is not None:
            tee.flush()

    def request(self, flow: http.HTTPFlow) -> None:
        """The request is in (mitmproxy's `request` hook): record it. For a streamed body,
        the hook comes before the body (`limits`), which follows as RequestBody events."""
        if self.recorder is not None and not flow.metadata.get(RECORDED):
            self._record_request(flow)

    def _record_request(self, flow: http.HTTPFlow) -> None:
        assert self.recorder is not None
        flow.metadata[RECORDED] = True
        client = flow.client_conn
        request = flow.request
        self.recorder.put(
            RequestSeen(
                id=flow.id,
                time=request.timestamp_start,
                listener=self.listeners.get(client.proxy_mode.full_spec, "default"),
                client=_client(client),
                server=f"{request.scheme}://{request.host}:{request.port}",
                method=request.method,
                target=request.path,
                http_version=request.http_version,
                headers=list(request.headers.fields),
                body=request.raw_content,
                injected=flow.metadata.get(INJECTED),
                body_follows=request.raw_content is None and bool(flow.metadata.get(limits.EARLY)),
            )
        )

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        if self.recorder is None or flow.response is None:
            return
        response = flow.response
        self._flush_request_body(flow)
        self.recorder.put(
            ResponseSeen(
                flow.id,
                response.timestamp_start or time.time(),
                response.status_code,
                response.reason,
                response.http_version,
                list(response.headers.fields),
            )
        )
        if response.status_code != 101:
            response.stream = self._tee(flow.id)

    def _tee(self, exchange: str) -> Callable[[bytes], bytes]:
        put, now = self.recorder.put if self.recorder else (lambda _: None), time.time

        def tee(data: bytes) -> bytes:
            if data:
                put(Chunk(exchange, now(), data))
            return data

        return tee

    def response(self, flow: http.HTTPFlow) -> None:
        self._request_tees.pop(flow.id, None)
        if self.recorder is None or flow.response is None:
            return
        if flow.response.status_code == 101:
            if flow.websocket is None:  # SPDY and other raw upgrades continue as TCP
                self._upgraded[flow.client_conn.id] = flow.id
            return
        # Streamed bodies went through the tee and have no content here; a response an addon
        # made (a 403, a 503) was never streamed and carries its content.
        body = flow.response.raw_content
        self.recorder.put(End(flow.id, flow.response.timestamp_end or time.time(), body=body))

    def error(self, flow: http.HTTPFlow) -> None:
        """The exchange failed. A request the proxy rejected or that broke before its body
        was in (a bad Content-Length, a cut-off body, a bad chunk) never reached the `request`
        hook, only `requestheaders`: it is recorded here, as far as it is known (no body),
        so that its end has an exchange to end; with the Status the proxy answered, if it
        refused the request (`limits`), and that refusal's reason as the error."""
        if self.recorder is None:
            return
        if not flow.metadata.get(RECORDED) and flow.request is not None:
            self._record_request(flow)
        self._flush_request_body(flow, done=True)
        reply = limits.reply_for(flow.client_conn.id, flow.request)
        message = reply[1] if reply else flow.error.msg if flow.error else "unknown error"
        body = None
        if reply is not None and flow.response is None:  # what the proxy answered instead
            status, body = reply[0], status_body(*reply)
            headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
            reason = status_codes.RESPONSES.get(status, "")
            self.recorder.put(
                ResponseSeen(flow.id, time.time(), status, reason, "HTTP/1.1", headers)
            )
        self.recorder.put(End(flow.id, time.time(), error=message, body=body))

    def _refused(self, peer: str, status: int, message: str) -> None:
        """Bytes that were not an HTTP request, refused (`limits`): a note says so."""
        if self.recorder is not None:
            text = f"refused {peer} with {status}: {message}"
            self.recorder.put(Note(time.time(), "warning", text))

    def _noted(self, text: str) -> None:
        """A connection the proxy refused or closed before any request (`guard`)."""
        if self.recorder is not None:
            self.recorder.put(Note(time.time(), "warning", text))

    def client_disconnected(self, client: connection.Client) -> None:
        limits.reply_for(client.id)  # a refusal whose exchange never reached `error`

    def tls_failed_client(self, data: tls.TlsData) -> None:
        """A client's TLS handshake failed (bytes that are not TLS, a client that does not
        trust the proxy's CA): there is no exchange, a note says who and why (the guard's,
        when it closed the connection at the handshake deadline)."""
        if self.recorder is not None and not guard.closed_late(data.context.client):
            peer = human.format_address(data.context.client.peername)
            error = (data.conn.error or "unknown error")[:300]  # it may quote the bytes in hex
            self.recorder.put(
                Note(time.time(), "warning", f"TLS handshake with {peer} failed: {error}")
            )

    # -- upgraded connections -------------------------------------------------------------
    def websocket_message(self, flow: http.HTTPFlow) -> None:
        if self.recorder is None or flow.websocket is None:
            return
        message = flow.websocket.messages[-1]
        self.recorder.put(
            Message(
                flow.id,
                message.timestamp,
                "websocket",
                message.from_client,
                message.content,
                message.is_text,
            )
        )
        del flow.websocket.messages[:-1]  # recorded: do not keep a long watch in memory

    def websocket_end(self, flow: http.HTTPFlow) -> None:
        if self.recorder is not None:
            ws = flow.websocket
            reason = f"websocket closed ({ws.close_code})" if ws and ws.close_code != 1000 else None
            self.recorder.put(End(flow.id, time.time(), error=reason))

    def tcp_message(self, flow: tcp.TCPFlow) -> None:
        exchange = self._upgraded.get(flow.client_conn.id)
        if self.recorder is None or exchange is None:
            return
        message = flow.messages[-1]
        self.recorder.put(
            Message(exchange, message.timestamp, "tcp", message.from_client, message.content, False)
        )
        del flow.messages[:-1]

    def tcp_end(self, flow: tcp.TCPFlow) -> None:
        exchange = self._upgraded.pop(flow.client_conn.id, None)
        if self.recorder is not None and exchange is not None:
            error = flow.error.msg if flow.error else None
            self.recorder.put(End(exchange, time.time(), error=error))

    tcp_error = tcp_end


COALESCE = 64 * 1024  # bytes of a request body gathered before they go to the recorder
SIZE_EVERY = 1 << 20  # past `max_body`: the count of bytes goes to the recorder once a MiB


class _RequestTee:
    """A request body's way past the recorder: its first `room` bytes, gathered into
    pieces of up to COALESCE, and the count of the rest, once a MiB. One event per read
    would let a client that sends a body in one-byte chunks (6 bytes each on the wire)
    fill the recorder's queue with events 85 times the body's size; the empty call at the
    body's end (mitmproxy's) says it is in."""

    def __init__(self, put: Callable[[RequestBody], None], exchange: str, room: int) -> None:
        self.put, self.exchange, self.room = put, exchange, room
        self.kept = bytearray()
        self.size = 0  # bytes passed since the last event

    def __call__(self, data: bytes) -> bytes:
        if self.room > 0 and data:
            piece = data[: self.room]
            self.room -= len(piece)
            self.kept += piece
        self.size += len(data)
        full = len(self.kept) >= COALESCE or (self.room <= 0 and bool(self.kept))
        if not data:
            self.flush(end=True)
        elif full or self.size >= SIZE_EVERY:
            self.flush()
        return data

    def flush(self, *, end: bool = False) -> None:
        if self.kept or self.size or end:
            self.put(RequestBody(self.exchange, time.time(), bytes(self.kept), self.size, end=end))
            self.kept.clear()
            self.size = 0


def _client(client: connection.Client) -> Client:
    host, port = client.peername[:2] if client.peername else ("?", 0)
    info: Client = {"address": f"{host}:{port}", "tls": client.tls}
    if client.alpn:
        info["alpn"] = client.alpn.decode(errors="replace")
    if client.certificate_list:
        info["certificate"] = client.certificate_list[0].cn
    return info
