"""The recorder: turns proxy events into recording records, off the proxy's event loop.

One thread consumes the proxy's events, keeps a little state per exchange (its resolved
request, the watch framer, the body so far), redacts, and hands finished records to its
outputs (the recording file, the console printer). It works in bursts (see `_run`) and
flushes after each, so a record reaches the file within about BATCH_DELAY (20 ms) plus the
burst's work, well inside the 100 ms a `kill -9` may lose.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from k8s_wiretap.capture.events import (
    Chunk,
    End,
    Message,
    Note,
    ProxyEvent,
    RequestSeen,
    ResponseSeen,
    Stored,
)
from k8s_wiretap.capture.format import body_record
from k8s_wiretap.capture.identity import client_identity
from k8s_wiretap.capture.redact import Redactor
from k8s_wiretap.kube.media import PROTOBUF
from k8s_wiretap.kube.requestinfo import RequestInfo, parse_request
from k8s_wiretap.wire.framing import Framer, framer_for
from k8s_wiretap.wire.inflate import Inflater

__all__ = ["DEFAULT_MAX_BODY", "Output", "Recorder"]

DEFAULT_MAX_BODY = 16 * 1024 * 1024
BATCH_DELAY = 0.02
_STOP = object()


class Output(Protocol):
    def write(self, record: dict[str, Any]) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


@dataclass
class _InFlight:
    """What the recorder keeps of an exchange while it is open (not `capture.Exchange`)."""

    info: RequestInfo
    watch: bool = False
    framer: Framer | None = None
    decoder: Inflater | None = None  # for a content-encoded watch
    encoding: str = ""
    content_type: str = ""
    chunks: list[bytes] = field(default_factory=list)
    kept: int = 0
    size: int = 0
    seq: int = 0


def _headers(raw: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in raw]


def _header(headers: list[tuple[str, str]], name: str) -> str:
    return next((v for k, v in headers if k.lower() == name), "")


def _secret_info(key: str) -> RequestInfo:
    """How the redactor should see an etcd value: a Secret's key as a GET of that Secret,
    anything else as a GET of a harmless resource (redaction still finds Secrets by kind)."""
    parts = key.split("/")  # ["", "registry", "secrets", NAMESPACE, NAME]
    if len(parts) == 5 and parts[2] == "secrets":
        return parse_request("GET", f"/api/v1/namespaces/{parts[3]}/secrets/{parts[4]}")
    return parse_request("GET", "/api/v1/namespaces/etcd/configmaps/value")


def _decoder(encoding: str) -> Any:
    if encoding == "gzip":
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    return None


class Recorder:
    """Consumes `ProxyEvent`s from any thread (`put`), writes records to `outputs`."""

    def __init__(
        self,
        outputs: Sequence[Output],
        *,
        redactor: Redactor | None = None,
        max_body: int = DEFAULT_MAX_BODY,
    ) -> None:
        self.outputs = list(outputs)
        self.redactor = redactor
        self.max_body = max_body
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._exchanges: dict[str, _InFlight] = {}
        self._thread = threading.Thread(target=self._run, name="wiretap-recorder", daemon=True)

    # -- any thread -----------------------------------------------------------------------
    def put(self, event: ProxyEvent) -> None:
        self._queue.put(event)

    @property
    def started(self) -> bool:
        return self._thread.ident is not None

    def start(self) -> Recorder:
        self._thread.start()
        return self

    def close(self) -> None:
        """Write what is queued, end exchanges still open, close the outputs."""
        if self._thread.is_alive():
            self._queue.put(_STOP)
            self._thread.join()
        for output in self.outputs:
            output.close()

    # -- recorder thread ------------------------------------------------------------------
    def _run(self) -> None:
        """Work in batches: wake on the first event, let the burst it starts gather for
        BATCH_DELAY, then record all of it and flush once. One wake-up and one write per
        burst instead of per event keeps this thread from taking the GIL from the proxy's
        event loop at every event; records still reach the file within ~BATCH_DELAY."""
        while True:
            batch = [self._queue.get()]
            time.sleep(BATCH_DELAY)
            with contextlib.suppress(queue.Empty):
                while True:
                    batch.append(self._queue.get_nowait())
            for item in batch:
                if item is _STOP:
                    self._end_open_exchanges()
                    self._flush()
                    return
                self.handle(item)  # type: ignore[arg-type]
            self._flush()

    def _flush(self) -> None:
        for output in self.outputs:
            output.flush()

    def _emit(self, record: dict[str, Any]) -> None:
        for output in self.outputs:
            output.write(record)

    def handle(self, event: ProxyEvent) -> None:
        """Turn one event into records (public for tests that feed events synchronously)."""
        try:
            self._dispatch(event)
        except Exception as error:  # a recorder bug must never lose the rest of the traffic
            self._emit(
                {
                    "record": "note",
                    "time": time.time(),
                    "level": "error",
                    "id": getattr(event, "id", None),
                    "message": f"recorder failed on {type(event).__name__}: {error!r}",
                }
            )

    def _dispatch(self, event: ProxyEvent) -> None:
        if isinstance(event, RequestSeen):
            self._request(event)
        elif isinstance(event, ResponseSeen):
            self._response(event)
        elif isinstance(event, Chunk):
            self._chunk(event)
        elif isinstance(event, Message):
            self._message(event)
        elif isinstance(event, End):
            self._end(event)
        elif isinstance(event, Stored):
            self._stored(event)
        elif isinstance(event, Note):
            record = {
                "record": "note",
                "time": event.time,
                "level": event.level,
                "message": event.message,
            }
            if event.id:
                record["id"] = event.id
            self._emit(record)

    def _stored(self, event: Stored) -> None:
        """An etcd change, its value redacted as the API server's own bodies are: a
        Secret's values are secret in etcd too."""
        record: dict[str, Any] = {
            "record": "etcd",
            "time": event.time,
            "key": event.key,
            "revision": event.revision,
            "deleted": event.deleted,
        }
        if not event.deleted:
            info = _secret_info(event.key)
            content_type = "application/json" if event.value[:1] == b"{" else PROTOBUF
            record["value"] = self._body(info, content_type, event.value, len(event.value))
        self._emit(record)

    def _body(
        self,
        info: RequestInfo,
        content_type: str,
        data: bytes,
        size: int,
        decoded: str | None = None,
    ) -> dict[str, Any]:
        """A BODY of `data` (the first bytes of `size`), redacted when needed."""
        truncated = size > len(data)
        redacted = False
        if self.redactor is not None:
            data, redacted = self.redactor.body(info, content_type, data)
        return body_record(data, size=size, truncated=truncated, redacted=redacted, decoded=decoded)

    def _request(self, event: RequestSeen) -> None:
        headers = _headers(event.headers)
        info = parse_request(event.method, event.target)
        self._exchanges[event.id] = _InFlight(info)
        record: dict[str, Any] = {
            "record": "request",
            "id": event.id,
            "time": event.time,
            "listener": event.listener,
            "client": event.client,
            "server": event.server,
            "identity": client_identity(_header(headers, "authorization") or None, event.injected),
            "method": event.method,
            "path": event.target,
            "http_version": event.http_version,
            "headers": [list(h) for h in self._redact_headers(headers)],
        }
        if event.body:
            data = event.body[: self.max_body]
            record["body"] = self._body(
                info, _header(headers, "content-type"), data, len(event.body)
            )
        self._emit(record)

    def _redact_headers(self, headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
        return self.redactor.headers(headers) if self.redactor else headers

    def _response(self, event: ResponseSeen) -> None:
        headers = _headers(event.headers)
        state = self._exchanges.get(event.id)
        if state is not None:
            state.encoding = _header(headers, "content-encoding").lower()
            state.content_type = _header(headers, "content-type")
            state.watch = state.info.verb == "watch" and event.status == 200
            if state.watch:
                state.framer = framer_for(_header(headers, "content-type"))
                if state.encoding in ("gzip", "deflate"):
                    state.decoder = Inflater(state.encoding)
        self._emit(
            {
                "record": "response",
                "id": event.id,
                "time": event.time,
                "status": event.status,
                "reason": event.reason,
                "http_version": event.http_version,
                "headers": [list(h) for h in self._redact_headers(headers)],
            }
        )

    def _chunk(self, event: Chunk) -> None:
        state = self._exchanges.get(event.id)
        if state is None:
            return
        if state.watch and state.framer is not None:
            data = state.decoder.feed(event.data) if state.decoder else event.data
            for frame in state.framer.feed(data):
                self._event(event.id, state, event.time, "watch", frame, state.content_type)
            return
        state.size += len(event.data)
        room = self.max_body - state.kept
        if room > 0:
            state.chunks.append(event.data[:room])
            state.kept += min(room, len(event.data))

    def _event(
        self,
        exchange: str,
        state: _InFlight,
        when: float,
        kind: str,
        frame: bytes,
        content_type: str,
        **extra: Any,
    ) -> None:
        data = frame[: self.max_body]
        redacted = False
        if self.redactor is not None:
            data, redacted = self.redactor.watch_frame(state.info, data, content_type)
        record: dict[str, Any] = {
            "record": "event",
            "id": exchange,
            "seq": state.seq,
            "time": when,
            "kind": kind,
            **extra,
        }
        record["data"] = body_record(
            data, size=len(frame), truncated=len(frame) > self.max_body, redacted=redacted
        )
        state.seq += 1
        self._emit(record)

    def _message(self, event: Message) -> None:
        state = self._exchanges.get(event.id)
        if state is None:
            state = self._exchanges[event.id] = _InFlight(parse_request("GET", "/"))
        kind = "watch" if state.info.verb == "watch" and not event.from_client else event.kind
        self._event(
            event.id,
            state,
            event.time,
            kind,
            event.data,
            "application/json" if event.text else "",
            transport=event.kind,
            from_client=event.from_client,
        )

    def _end(self, event: End) -> None:
        state = self._exchanges.pop(event.id, None)
        record: dict[str, Any] = {"record": "end", "id": event.id, "time": event.time}
        if state is not None:
            if state.framer is not None:
                tail = state.framer.flush()
                for frame in tail:
                    self._event(
                        event.id,
                        state,
                        event.time,
                        "watch",
                        frame,
                        state.content_type,
                        incomplete=True,
                    )
                record["events"] = state.seq
            elif state.chunks or event.body:
                record["body"] = self._response_body(state, event.body)
        if event.error:
            record["error"] = event.error
        self._emit(record)

    def _response_body(self, state: _InFlight, body: bytes | None) -> dict[str, Any]:
        data = b"".join(state.chunks) if state.chunks else (body or b"")
        size = state.size or len(data)
        decoder = _decoder(state.encoding)
        if decoder is None or size > len(data):  # a truncated stream cannot be inflated
            return self._body(state.info, state.content_type, data, size)
        try:
            inflated = decoder.decompress(data, self.max_body)
        except zlib.error:
            return self._body(state.info, state.content_type, data, size)  # as it came
        whole = len(inflated)
        while decoder.unconsumed_tail:  # count what does not fit, without keeping it
            whole += len(decoder.decompress(decoder.unconsumed_tail, 1 << 20))
        return self._body(state.info, state.content_type, inflated, whole, state.encoding)

    def _end_open_exchanges(self) -> None:
        for exchange in list(self._exchanges):
            self._end(End(exchange, time.time(), error="recording stopped"))
