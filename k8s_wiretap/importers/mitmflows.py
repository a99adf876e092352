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
file that is no flow file at all is refused before anything is written.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from mitmproxy import flow, http
from mitmproxy.io import compat, tnetstring

from k8s_wiretap.importers.har import Flow, Malformed, import_flows
from k8s_wiretap.importers.sink import Sink

__all__ = ["flow_of", "mitm_reader"]


def _headers(headers: http.Headers) -> list[tuple[str, str]]:
    return [(k.decode("utf-8", "replace"), v.decode("utf-8", "replace")) for k, v in headers.fields]


def _client(connection: Any) -> dict[str, Any]:
    peer = connection.peername
    address = f"{peer[0]}:{peer[1]}" if peer else ""
    client: dict[str, Any] = {"address": address, "tls": bool(connection.tls_established)}
    if connection.alpn:
        client["alpn"] = connection.alpn.decode("ascii", "replace")
    return client


def flow_of(item: flow.Flow, number: int) -> Flow:
    """The exchange of one mitmproxy flow; Malformed if it is not an HTTP flow."""
    if not isinstance(item, http.HTTPFlow):
        raise Malformed(f"a {item.type} flow, not HTTP")
    request, response = item.request, item.response
    found = Flow(
        id=item.id,
        start=request.timestamp_start,
        method=request.method,
        url=request.url,
        headers=_headers(request.headers),
        body=request.get_content(strict=False) or None,
        http_version=request.http_version,
        error=item.error.msg if item.error else None,
        extra={"client": _client(item.client_conn)},
    )
    if response is not None:
        found.status = response.status_code
        found.reason = response.reason
        found.response_version = response.http_version
        found.response_headers = _headers(response.headers)
        found.response_time = response.timestamp_start
        found.response_body = response.get_content(strict=False)
        found.end = response.timestamp_end or response.timestamp_start
    return found


def _state_flow(state: Any, number: int) -> Flow:
    """The exchange of one flow's saved state (`FlowReader.stream`'s steps); Malformed when
    mitmproxy cannot make a flow of it or it is not HTTP."""
    if not isinstance(state, dict):
        raise Malformed(f"not a flow: a {type(state).__name__}")
    try:
        item = flow.Flow.from_state(compat.migrate_flow(state))
    except Exception as error:  # mitmproxy raises what it meets: KeyError, TypeError, ...
        raise Malformed(f"not a flow mitmproxy can read: {_said(error)}") from error
    return flow_of(item, number)


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


def _flows(path: Path, sink: Sink) -> Iterator[tuple[str, Any]]:
    """The flows' states of the file, numbered; where it stops being readable, a skip, and
    no more."""
    with path.open("rb") as file:
        for number in itertools.count(1):
            try:
                state = tnetstring.load(file)
            except (ValueError, TypeError, IndexError, RecursionError) as error:
                if str(error) != "not a tnetstring: empty file":  # the end
                    reason = f"unreadable, the rest of the file too: {_unreadable(error)}"
                    sink.skip(f"{path}:flow {number}", reason)
                return
            yield f"{path}:flow {number}", state


def _checked(path: Path) -> None:
    """Refuse what is no flow file (a flow file is tnetstrings: a length, then `:`)."""
    try:
        with path.open("rb") as file:
            start = file.read(16)
    except OSError as error:
        raise Malformed(f"{path}: {error.strerror}") from error
    length, colon, _ = start.partition(b":")
    if start and not (colon and length.isdigit()):
        raise Malformed(f"{path}: not a mitmproxy flow file")


def mitm_reader(path: Path) -> Callable[[Sink], int]:
    """What writes the flows of the file at `path` to a sink (and says how many it read);
    Malformed, before anything is written, when the file is no flow file."""
    _checked(path)
    return lambda sink: import_flows(_flows(path, sink), sink, _state_flow)
