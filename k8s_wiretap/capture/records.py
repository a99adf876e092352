"""The records of a recording: every kind, each of its fields and what it means, declared once.

A recording is JSON Lines, one record per line: a `header`, then `request`, `response`,
`event`, `end`, `note` and `etcd` records as traffic happens. Each kind is a `TypedDict`
below; each field's annotation carries its meaning (`Annotated[type, "meaning"]`), and
docs/proxy.md's tables of the format are generated from them
(`scripts/generate_record_docs.py`; a test holds the two equal). Every writer — the
recorder, the importers' sink, the join, the cut and stop notes, the proxy's supervisor —
makes its records with the constructor of their kind (`request(...)`, `end(...)`, ...),
so a field has one name and one type wherever it is written; the constructors make a
plain dict (no conversion: the proxy writes one per message), the `record` field first
(the order of the rest: above the constructors). `assemble.Assembler` is the one reader
that turns records into exchanges.

Records of concurrent exchanges interleave; `id` ties them together. Times are Unix
seconds. A request body is streamed through the proxy: its `request` record is written
once the body is in (or the response starts, or the exchange ends), with the body's first
`max_body` bytes, so a request record may follow records of other exchanges that started
after it; its `time` is when the request began. A request the proxy refused (400, 408,
431: a malformed or oversized head, a head too slow) has the response the client got, a
Kubernetes Status, and an `end` whose `error` says why; bytes that were not HTTP and TLS
handshakes that failed are `note`s naming the peer.

An import that a signal cut ends with a note `"cut": SIGNAL` (`format.cut_note`; readers
say they read a cut recording, `cut_of`); a live recording that a signal stopped, as it
is meant to stop, ends with a note `"stopped": SIGNAL` (`format.stop_note`), after the
end of each exchange still open. An imported recording names its source in the header
(`imported`); a proxy's recording joined with an audit log (`import audit --join`) says
`joined`, and an exchange the API server answered through the proxy keeps the proxy's
records, its request and end records given the log's `audit` fields (without `absent`;
the request's with `"joined": true`); an exchange the proxy did not see is as the import
writes it, its request's `audit` with `"only": true`. A recording in parts (`proxy
--workers N`, while it runs) has a file per worker, each a recording of its own, merged
into the one file named when the proxy stops (`parts.py`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Required, TypedDict, Unpack, cast

__all__ = [
    "FORMAT",
    "KINDS",
    "PARTS",
    "VERSION",
    "Body",
    "Client",
    "Clock",
    "End",
    "Etcd",
    "Event",
    "Header",
    "Identity",
    "Kind",
    "Note",
    "Record",
    "Request",
    "Response",
    "clock",
    "cut_of",
    "end",
    "etcd",
    "event",
    "header",
    "note",
    "request",
    "response",
]

FORMAT = "k8s-wiretap-recording"
VERSION = 1  # a reader refuses a recording of another version

Kind = Literal["header", "request", "response", "event", "end", "note", "etcd", "clock"]
Headers = list[list[str]]


# -- what records hold --------------------------------------------------------------------
class Body(TypedDict, total=False):
    """A body, a watch event's frame, or what etcd stored (`format.body_record` makes it)."""

    text: Annotated[str, "the bytes, when they are UTF-8 and not protobuf"]
    base64: Annotated[str, "the bytes in base64, when they are not `text`"]
    size: Required[Annotated[int, "bytes of the whole original (after a `decoded`)"]]
    truncated: Annotated[
        bool, "true when the original was longer than `max_body`: the first bytes are here"
    ]
    redacted: Annotated[bool, "true when secrets in it were replaced ([below](#redaction))"]
    decoded: Annotated[str, 'the content-encoding removed from it (`"gzip"`, `"deflate"`)']


class Client(TypedDict, total=False):
    """The client as the proxy saw it (a request's `client`)."""

    address: Annotated[str, "`HOST:PORT` it connected from (an audit log's first source IP)"]
    tls: Annotated[bool, "whether it spoke TLS to the proxy"]
    alpn: Annotated[str, "the protocol it chose by ALPN (`h2`, `http/1.1`)"]
    certificate: Annotated[
        str | None, "the CN of the client certificate it presented, if any (null: it has none)"
    ]


class Identity(TypedDict, total=False):
    """Who the request went upstream as, as far as the proxy can tell (`identity.py`)."""

    credential: Required[
        Annotated[
            str,
            "`none`, `bearer token`, `basic`, `added by proxy` (the kubeconfig's, which the "
            "proxy added), or `audit log` in an [imported](importing.md) recording",
        ]
    ]
    user: Annotated[
        str,
        "a bearer JWT's unverified `sub` (a service account, say), basic auth's user, the "
        "kubeconfig identity the proxy added, or an audit log's authenticated user",
    ]


# -- the kinds ----------------------------------------------------------------------------
class HeaderFields(TypedDict, total=False):
    format: Required[Annotated[str, f"`{FORMAT}`"]]
    version: Required[Annotated[int, f"the format's version, {VERSION}: readers refuse another"]]
    created: Required[Annotated[str, "when the file was begun (ISO 8601, UTC)"]]
    tool: Required[Annotated[str, "what wrote it (`k8s-wiretap VERSION`)"]]
    redacted: Required[Annotated[bool, "whether secrets were redacted"]]
    max_body: Required[Annotated[int, "bytes of a body or watch event recorded at most"]]
    imported: Annotated[
        str,
        "what an import came from: `audit log`, `audit webhook`, `HAR file`, `mitmproxy "
        "flows` ([importing](importing.md))",
    ]
    joined: Annotated[str, "`audit log`: a proxy's recording joined with an audit log"]
    recording: Annotated[str, "in a recording in parts ([workers](#workers)): the parts' id"]
    part: Annotated[int, "in a recording in parts: this file's number (0: the file named)"]
    workers: Annotated[int, "in part 0 of a recording in parts: how many workers wrote it"]


class Header(HeaderFields, total=False):
    """The first line of every recording; it says what the rest is."""

    record: Required[Literal["header"]]


class RequestFields(TypedDict, total=False):
    id: Required[Annotated[str, "ties the records of one exchange together"]]
    time: Required[Annotated[float, "when the request began"]]
    listener: Annotated[
        str,
        "the proxy listener (route) the client used: `default`, or `admin`/`kubelet`/… in a "
        "`--via-proxy` lab (`imported` in an import)",
    ]
    client: Annotated[Client, "the client as the proxy saw it ([below](#client))"]
    server: Annotated[str, "the upstream API server"]
    identity: Annotated[Identity, "who it went upstream as ([below](#identity))"]
    method: Required[Annotated[str, "as on the wire"]]
    path: Required[Annotated[str, "path and query, as on the wire"]]
    http_version: Annotated[str, "as on the wire (`HTTP/1.1`, `HTTP/2.0`)"]
    headers: Required[
        Annotated[Headers, "as on the wire: `[name, value]` pairs, credentials redacted"]
    ]
    body: Annotated[Body, "its body, when it had one (a BODY)"]
    audit: Annotated[
        dict[str, Any],
        "from an audit log: what its Event said beyond the request line, and what the log "
        "lacks ([importing](importing.md#the-audit-field))",
    ]
    imported_as: Annotated[
        dict[str, str],
        "from a HAR file: the format a body was written in there, by side "
        "(`request`, `response`), when it was made JSON ([importing](importing.md))",
    ]


class Request(RequestFields, total=False):
    """A request as the client sent it: the first record of an exchange."""

    record: Required[Literal["request"]]


class ResponseFields(TypedDict, total=False):
    id: Required[Annotated[str, "the exchange's"]]
    time: Required[Annotated[float, "when the response's head arrived"]]
    status: Required[Annotated[int, "as on the wire"]]
    reason: Annotated[str, "as on the wire"]
    http_version: Annotated[str, "as on the wire"]
    headers: Required[
        Annotated[Headers, "as on the wire: `[name, value]` pairs, credentials redacted"]
    ]


class Response(ResponseFields, total=False):
    """The response's head; its body comes with the `end`."""

    record: Required[Literal["response"]]


class EventFields(TypedDict, total=False):
    id: Required[Annotated[str, "the exchange's"]]
    seq: Required[Annotated[int, "its place in the exchange's stream, from 0"]]
    time: Required[Annotated[float, "when it arrived"]]
    kind: Required[
        Annotated[
            str,
            "`watch`: a watch event (one JSON document or one protobuf `WatchEvent` frame, "
            "however the stream was chunked); `websocket`: a WebSocket message; `tcp`: a "
            "chunk of an upgraded (SPDY) connection",
        ]
    ]
    transport: Annotated[str, "what carried a message: `websocket` or `tcp`"]
    from_client: Annotated[bool, "a message the client sent (not the server)"]
    incomplete: Annotated[bool, "true for a partial frame at the stream's end"]
    data: Required[Annotated[Body, "what it carried (a BODY)"]]


class Event(EventFields, total=False):
    """One message of a stream: a watch event, a WebSocket message or an upgraded
    connection's chunk."""

    record: Required[Literal["event"]]


class EndFields(TypedDict, total=False):
    id: Required[Annotated[str, "the exchange's"]]
    time: Required[Annotated[float, "when it ended"]]
    audit: Annotated[
        dict[str, Any],
        "from an audit log: its stages, the final `responseStatus`, annotations, and what "
        "the log lacks of the response ([importing](importing.md#the-audit-field))",
    ]
    body: Annotated[Body, "the response body (not for a watch; a BODY)"]
    events: Annotated[int, "how many events a watch had"]
    error: Annotated[
        str, "why it ended short: client went away, stream reset, `recording stopped`, ..."
    ]


class End(EndFields, total=False):
    """How an exchange ended: its last record."""

    record: Required[Literal["end"]]


class NoteFields(TypedDict, total=False):
    time: Required[Annotated[float, "when it was written"]]
    level: Required[Annotated[str, "`info`, `warning` or `error`"]]
    message: Required[Annotated[str, "what happened, in one line"]]
    id: Annotated[str, "the exchange it is about, if one"]
    cut: Annotated[str, "the signal that cut an import short (its last record)"]
    stopped: Annotated[str, "the signal that stopped a live recording (its last record)"]


class Note(NoteFields, total=False):
    """What the recording itself says: a gap, a refused connection, a skipped part of an
    import's source, the signal that ended it."""

    record: Required[Literal["note"]]


class EtcdFields(TypedDict, total=False):
    time: Required[Annotated[float, "when the proxy saw the change"]]
    key: Required[Annotated[str, "where etcd stored it (`/registry/...`)"]]
    revision: Required[Annotated[int, "the change's etcd revision: the object's resourceVersion"]]
    deleted: Required[Annotated[bool, "whether the change deleted the key"]]
    value: Annotated[
        Body,
        "what etcd stored (protobuf for built-in kinds, JSON for custom resources; redacted "
        "like API bodies; a BODY)",
    ]


class Etcd(EtcdFields, total=False):
    """A change etcd itself recorded under `/registry/` (`proxy --etcd URL`: a watch
    through etcd's JSON gateway from the revision current at start)."""

    record: Required[Literal["etcd"]]


class ClockFields(TypedDict, total=False):
    time: Required[Annotated[float, "now"]]


class Clock(ClockFields, total=False):
    """Never in a file: what a reader of a growing recording passes on while the file is
    idle, so that what waits for time to pass is not held back (`explain/stream.py`)."""

    record: Required[Literal["clock"]]


Record = Header | Request | Response | Event | End | Note | Etcd  # what a file holds
KINDS: tuple[type, ...] = (Header, Request, Response, Event, End, Note, Etcd, Clock)
PARTS: tuple[type, ...] = (Body, Client, Identity)  # what records hold


# -- one constructor a kind ---------------------------------------------------------------
# `header` and `request` take their fields as keywords and keep them in the order given (an
# importer gives its request's fields in its own order). The others, written per message or
# per exchange, name their fields as parameters and write them in the declaration's order,
# leaving out what is None: a dict of keywords merged into the record costs three times
# what the record itself does, and the recorder makes one a watch event.
def header(**fields: Unpack[HeaderFields]) -> Header:
    return {"record": "header", **fields}


def request(**fields: Unpack[RequestFields]) -> Request:
    return {"record": "request", **fields}


def response(
    *,
    id: str,
    time: float,
    status: int,
    reason: str | None = None,
    http_version: str | None = None,
    headers: Headers,
) -> Response:
    if reason is not None and http_version is not None:  # the proxy's
        return {
            "record": "response",
            "id": id,
            "time": time,
            "status": status,
            "reason": reason,
            "http_version": http_version,
            "headers": headers,
        }
    if reason is None and http_version is None:  # an importer's
        return {"record": "response", "id": id, "time": time, "status": status, "headers": headers}
    record: dict[str, Any] = {"record": "response", "id": id, "time": time, "status": status}
    _given(record, reason=reason, http_version=http_version)
    record["headers"] = headers
    return cast(Response, record)


def event(
    *,
    id: str,
    seq: int,
    time: float,
    kind: str,
    transport: str | None = None,
    from_client: bool | None = None,
    incomplete: bool | None = None,
    data: Body,
) -> Event:
    if incomplete is None:
        if transport is None and from_client is None:  # a watch event
            return {
                "record": "event",
                "id": id,
                "seq": seq,
                "time": time,
                "kind": kind,
                "data": data,
            }
        if transport is not None and from_client is not None:  # a message
            return {
                "record": "event",
                "id": id,
                "seq": seq,
                "time": time,
                "kind": kind,
                "transport": transport,
                "from_client": from_client,
                "data": data,
            }
    record: dict[str, Any] = {"record": "event", "id": id, "seq": seq, "time": time, "kind": kind}
    _given(record, transport=transport, from_client=from_client, incomplete=incomplete)
    record["data"] = data
    return cast(Event, record)


def end(
    *,
    id: str,
    time: float,
    audit: dict[str, Any] | None = None,
    body: Body | None = None,
    events: int | None = None,
    error: str | None = None,
) -> End:
    record: End = {"record": "end", "id": id, "time": time}
    if audit is not None:
        record["audit"] = audit
    if body is not None:
        record["body"] = body
    if events is not None:
        record["events"] = events
    if error is not None:
        record["error"] = error
    return record


def note(
    *,
    time: float,
    level: str,
    message: str,
    id: str | None = None,
    cut: str | None = None,
    stopped: str | None = None,
) -> Note:
    record: Note = {"record": "note", "time": time, "level": level, "message": message}
    if id is not None:
        record["id"] = id
    if cut is not None:
        record["cut"] = cut
    if stopped is not None:
        record["stopped"] = stopped
    return record


def etcd(*, time: float, key: str, revision: int, deleted: bool, value: Body | None = None) -> Etcd:
    record: Etcd = {
        "record": "etcd",
        "time": time,
        "key": key,
        "revision": revision,
        "deleted": deleted,
    }
    if value is not None:
        record["value"] = value
    return record


def clock(*, time: float) -> Clock:
    return {"record": "clock", "time": time}


def _given(record: dict[str, Any], **fields: object) -> None:
    """Add to `record` the `fields` that are not None, in their order."""
    for name, value in fields.items():
        if value is not None:
            record[name] = value


def cut_of(record: dict[str, Any]) -> str | None:
    """What a note that a signal cut the recording says (None: `record` is no such note)."""
    if record.get("record") == "note" and isinstance(record.get("cut"), str):
        return str(record.get("message") or f"recording cut by {record['cut']}")
    return None
