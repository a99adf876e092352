"""mitmproxy's flow files (`mitmdump -w FILE`, mitmproxy's "save") as a recording
(docs/importing.md).

The file is read as mitmproxy's own reader (`mitmproxy.io.FlowReader`) reads it, one flow at
a time (bounded memory): each tnetstring loaded, migrated from older mitmproxy versions
(`compat.migrate_flow`) and made a flow (`Flow.from_state`). Each HTTP flow
becomes one exchange, written through the sink (redacted as the proxy redacts):

- the request at `request.timestamp_start`, its method, URL (the server is its scheme and
  host, the path its path and query), HTTP version, headers and body (content-encoding
  removed, as the proxy records it);
- the response's head at `response.timestamp_start`, its status, reason, headers and body,
  the end at `response.timestamp_end`; a flow without a response ends with its error
  (`flow.error`) or "the source has no response";
- a watch's body (what mitmproxy kept of a stream it buffered: a watch that ended) split
  into events by the framer of its Content-Type, each timed at the response's end: a flow
  file does not time them. A streamed body (`stream_large_bodies`) is not in the file and
  is missing from the exchange too;
- the client's address, TLS and ALPN as the proxy records a client's, the identity from
  the Authorization header as the proxy reads it.

A flow that is not HTTP (TCP, UDP, DNS), or that mitmproxy cannot make a flow of (a state
it cannot migrate, a field missing: whatever mitmproxy raises), is skipped as `FILE:flow N`
with the reason (the error's type, and the field a KeyError missed: mitmproxy's other texts
may quote the flow's contents), and reading goes on: the tnetstring around it was whole.
So is a flow whose method, URL, HTTP version or header is no UTF-8 (mitmproxy gives it
with lone surrogates, which a UTF-8 recording cannot hold). A file that stops being
readable part way (cut short, overwritten: no tnetstring where one should start) ends
the import there, the point and the reason told as a skip; what came before is kept. A
file that is no flow file at all, or whose first flow says it is longer than the file, is
refused before anything is written.

Memory follows the bounds (`importers.limits`), not the file: a flow is read whole, so one
whose length prefix says more than `max_flow` bytes is skipped unread (`999999999999:`
is never allocated), and the file ends there when it is shorter than that. A body with a
content-encoding (gzip, deflate, br) is inflated a piece at a time up to the sink's
`max_body`, never further: one that would inflate past it, or that is not of its encoding,
is kept as it came (encoded, its Content-Encoding still saying so), and a note with the
exchange's id says why.
"""

from __future__ import annotations

import functools
import itertools
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import brotli  # type: ignore[import-untyped]  # mitmproxy's, for br bodies
from mitmproxy import flow, http
from mitmproxy.io import compat, tnetstring

from k8s_wiretap.capture.recorder import DEFAULT_MAX_BODY
from k8s_wiretap.importers.har import Flow, Malformed, import_flows
from k8s_wiretap.importers.limits import DEFAULT, Limits
from k8s_wiretap.importers.sink import Sink

__all__ = ["flow_of", "inflated", "mitm_reader"]

PIECE = 1 << 20  # bytes inflated at a time
PREFIX = 12  # digits of a tnetstring's length, at most (mitmproxy's reader refuses more)


def _headers(headers: http.Headers) -> list[tuple[str, str]]:
    return [(k.decode("utf-8", "replace"), v.decode("utf-8", "replace")) for k, v in headers.fields]


def _client(connection: Any) -> dict[str, Any]:
    peer = connection.peername
    address = f"{peer[0]}:{peer[1]}" if peer else ""
    client: dict[str, Any] = {"address": address, "tls": bool(connection.tls_established)}
    if connection.alpn:
        client["alpn"] = connection.alpn.decode("ascii", "replace")
    return client


def _zlib(data: bytes, wbits: int, limit: int) -> bytes | None:
    """`data` inflated by zlib (`wbits`: gzip's, zlib's or raw deflate's; gzip's members
    one after another), a piece at a time; None past `limit` bytes; zlib.error when it is
    none of them, or cut short."""
    parts, total = [], 0
    while data:
        inflater = zlib.decompressobj(wbits)
        while not inflater.eof:
            part = inflater.decompress(data, PIECE)
            data = inflater.unconsumed_tail
            parts.append(part)
            total += len(part)
            if total > limit:
                return None
            if not part and not data and not inflater.eof:
                raise zlib.error("cut short")
        data = inflater.unused_data if wbits > zlib.MAX_WBITS else b""
    return b"".join(parts)


def _brotli(data: bytes, limit: int) -> bytes | None:
    """`data` inflated by brotli, a piece at a time; None past `limit` bytes."""
    inflater = brotli.Decompressor()
    parts, total = [], 0
    part = inflater.process(data, output_buffer_limit=PIECE)
    while part:
        parts.append(part)
        total += len(part)
        if total > limit:
            return None
        part = b"" if inflater.is_finished() else inflater.process(b"", output_buffer_limit=PIECE)
    if not inflater.is_finished():
        raise brotli.error("cut short")
    return b"".join(parts)


def inflated(data: bytes, encoding: str, limit: int) -> tuple[bytes, str]:
    """`data` without its content-encoding (`encoding`: gzip, deflate, br), at most `limit`
    bytes, and "": or `data` as it came and why it is (past `limit`, not of the encoding,
    an encoding not removed)."""
    name = encoding.strip().lower()
    try:
        if name in ("", "identity", "none") or not data:  # an empty body: nothing to remove
            return data, ""
        if name in ("gzip", "x-gzip"):
            out = _zlib(data, 16 + zlib.MAX_WBITS, limit)
        elif name == "deflate":
            try:
                out = _zlib(data, zlib.MAX_WBITS, limit)
            except zlib.error:
                out = _zlib(data, -zlib.MAX_WBITS, limit)
        elif name == "br":
            out = _brotli(data, limit)
        else:
            return data, f"its content-encoding ({name[:40]!r}) is not removed: kept as it came"
    except (zlib.error, brotli.error):
        return data, f"it is not {name} as its Content-Encoding says: kept as it came"
    if out is None:
        return data, (
            f"it inflates ({name}) past {limit:,} bytes (--max-body): kept as it came, "
            "encoded, not inflated further"
        )
    return out, ""


def _body(message: http.Message, side: str, limit: int, notes: list[str]) -> bytes:
    """The message's body, its content-encoding removed within `limit` (`inflated`); why
    not, in `notes`."""
    raw = message.raw_content or b""
    body, why = inflated(raw, message.headers.get("content-encoding", ""), limit)
    if why:
        notes.append(f"the {side} body ({len(raw):,} bytes): {why}")
    return body


def flow_of(item: flow.Flow, number: int, max_body: int = DEFAULT_MAX_BODY) -> Flow:
    """The exchange of one mitmproxy flow (bodies inflated up to `max_body`); Malformed if
    it is not an HTTP flow."""
    if not isinstance(item, http.HTTPFlow):
        raise Malformed(f"a {item.type} flow, not HTTP")
    request, response = item.request, item.response
    notes: list[str] = []
    found = Flow(
        id=item.id,
        start=request.timestamp_start,
        method=request.method,
        url=request.url,
        headers=_headers(request.headers),
        body=_body(request, "request", max_body, notes) or None,
        http_version=request.http_version,
        error=item.error.msg if item.error else None,
        extra={"client": _client(item.client_conn)},
        notes=notes,
    )
    if response is not None:
        found.status = response.status_code
        found.reason = response.reason
        found.response_version = response.http_version
        found.response_headers = _headers(response.headers)
        found.response_time = response.timestamp_start
        found.response_body = _body(response, "response", max_body, notes)
        found.end = response.timestamp_end or response.timestamp_start
    return found


def _state_flow(state: Any, number: int, max_body: int = DEFAULT_MAX_BODY) -> Flow:
    """The exchange of one flow's saved state (`FlowReader.stream`'s steps); Malformed when
    mitmproxy cannot make a flow of it or it is not HTTP."""
    if not isinstance(state, dict):
        raise Malformed(f"not a flow: a {type(state).__name__}")
    try:
        item = flow.Flow.from_state(compat.migrate_flow(state))
    except Exception as error:  # mitmproxy raises what it meets: KeyError, TypeError, ...
        raise Malformed(f"not a flow mitmproxy can read: {_said(error)}") from error
    return flow_of(item, number, max_body)


def _said(error: Exception) -> str:
    """What a skip says of mitmproxy's error: its type, and for a KeyError the field it
    missed. Other texts are not said: mitmproxy quotes the values it refuses, and the whole
    state of a part (`Invalid state for ...: (state={...})`: an error's message, a
    WebSocket's messages), which may hold a credential."""
    if isinstance(error, KeyError):
        return f"KeyError: {error}"
    return f"{type(error).__name__} (mitmproxy's text, which may quote the flow, not said)"


def _unreadable(error: Exception) -> str:
    """A tnetstring error without what it quotes (`not a tnetstring: missing or invalid
    length prefix: b'...'`: where the file is broken, a piece of a body may be read as a
    length or a literal): its first two parts."""
    return ": ".join(str(error).split(": ")[:2])


def _length(file: IO[bytes]) -> tuple[int, int] | None:
    """The length the next tnetstring's prefix says and the prefix's own (its digits and
    `:`), without reading it; None when there is no such prefix (the reader says why)."""
    head = bytes(file.peek(PREFIX + 1)[: PREFIX + 1])  # type: ignore[attr-defined]
    digits, colon, _ = head.partition(b":")
    if not colon or not digits.isdigit():
        return None
    return int(digits), len(digits) + 1


def _too_long(file: IO[bytes], size: int, bounds: Limits) -> tuple[str, bool] | None:
    """When the next flow is longer than `bounds.max_flow`: why it is skipped, and whether
    the file ends there (it says more than is left); the flow is read past, never held."""
    said = _length(file)
    if said is None or said[0] <= bounds.max_flow:
        return None
    length, prefix = said
    left = size - file.tell() - prefix - 1  # the tnetstring's type ends it
    if length > left:
        cut = f"a flow of {length:,} bytes, and {max(left, 0):,} are left (cut short?)"
        return f"unreadable, the rest of the file too: {cut}", True
    file.seek(prefix + length + 1, 1)
    return (
        f"a flow of {length:,} bytes, more than {bounds.max_flow:,} (--max-flow): not read",
        False,
    )


def _flows(path: Path, sink: Sink, bounds: Limits) -> Iterator[tuple[str, Any]]:
    """The flows' states of the file, numbered; a flow over `bounds.max_flow` skipped
    unread; where the file stops being readable, a skip, and no more."""
    size = path.stat().st_size
    with path.open("rb") as file:
        for number in itertools.count(1):
            where = f"{path}:flow {number}"
            skipped = _too_long(file, size, bounds)
            if skipped is not None:
                sink.skip(where, skipped[0])
                if skipped[1]:
                    return
                continue
            try:
                state = tnetstring.load(file)
            except (ValueError, TypeError, IndexError, RecursionError) as error:
                if str(error) != "not a tnetstring: empty file":  # the end
                    sink.skip(where, f"unreadable, the rest of the file too: {_unreadable(error)}")
                return
            yield where, state


def _checked(path: Path) -> None:
    """Refuse what is no flow file (a flow file is tnetstrings: a length, then `:`), or one
    whose first flow says it is longer than the file."""
    try:
        with path.open("rb") as file:
            start = file.read(PREFIX + 2)
            size = path.stat().st_size
    except OSError as error:
        raise Malformed(f"{path}: {error.strerror}") from error
    length, colon, _ = start.partition(b":")
    if start and not (colon and length.isdigit()):
        raise Malformed(f"{path}: not a mitmproxy flow file")
    if start and int(length) + len(length) + 2 > size:
        raise Malformed(
            f"{path}: not a whole mitmproxy flow file: its first flow says it is "
            f"{int(length):,} bytes long, and the file is {size:,} bytes"
        )


def mitm_reader(path: Path, bounds: Limits = DEFAULT) -> Callable[[Sink], int]:
    """What writes the flows of the file at `path` to a sink, within `bounds` and the
    sink's `max_body` (and says how many it read); Malformed, before anything is written,
    when the file is no flow file."""
    _checked(path)

    def write(sink: Sink) -> int:
        make = functools.partial(_state_flow, max_body=sink.max_body)
        return import_flows(_flows(path, sink, bounds), sink, make)

    return write
