"""HAR 1.2 files (browser devtools, HAR tooling, `k8s-wiretap export --har`) as a recording
(docs/importing.md).

A HAR file is one JSON document: it is read whole (`json.load`), then each entry of
`log.entries` becomes one exchange, written through the sink (redacted as the proxy
redacts). An entry that is not what HAR says an entry is (no `request.method`, no absolute
http(s) `request.url` with a host, no `startedDateTime`, a `response.status` that is no
integer, a body that is not base64 where it says so, a string holding a lone surrogate such
as `"\\ud800"`: valid JSON, but no Unicode text, so it could not be written) is skipped
and told to the sink as `FILE:entry N` (N counts from 1) with the reason; reading goes
on. A file that is no JSON, or JSON nested too deeply to read, is refused before anything
is written; so is one larger than `Limits.max_file`, or of more JSON values than
`Limits.max_values` (counted before it is parsed: what parsing makes of a file, not its
size, is the memory it takes).

What an exchange takes from an entry: the request at `startedDateTime`; the response's head
`blocked + dns + connect + send + wait` milliseconds later (the `timings` that are not -1),
its end `time` milliseconds after the start; the URL's scheme, host and port as the server
(a user and password in the URL are dropped: never recorded), its path and query as the
path; the headers as they are; the bodies from `postData.text` and
`content.text` (base64 where `encoding` says so). A status of 0 is an exchange without an
answer. The identity is what the Authorization header says (as the proxy reads it, before
redacting it).

A watch (`watch=true`, or a watch path) answered 2xx has its response body split into events by the
framer of its Content-Type, as the proxy frames a stream; each event is timed at the
exchange's end unless the entry says better.

What `export --har` adds in `_k8sWiretap` is read back: the exchange's id (an id that is
already taken gets `-N`, N the entry's number, then `-N-2`, ... until it is unused: two
entries are never one exchange), listener, client
and identity (the HAR headers are redacted, so these say what they no longer can), why it
ended without an answer (`error`), and each watch event's time. A body the export decoded
to JSON (`_k8sWiretap.text: "json"` beside it) is imported as JSON: its Content-Type header
becomes `application/json` (a watch's: the JSON watch stream it is; a patch keeps its patch
type, an apply CBOR's becomes `application/apply-patch+yaml`), so it decodes as what it is;
the original encoding stays named in the record's `imported_as` field (`{"request": F,
"response": F}`).

The HAR headers of `export --har` are the recording's, redacted; the sink redacts again
(as the proxy would: nothing passes as "already redacted"), so a placeholder of the
original becomes another placeholder: equal values stay equal, no value comes back.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

from k8s_wiretap.capture.identity import client_identity
from k8s_wiretap.importers.limits import DEFAULT, Limits, values
from k8s_wiretap.importers.seen import Seen
from k8s_wiretap.importers.sink import SKIP_NOTES, Sink, time_error
from k8s_wiretap.kube.media import patch_type
from k8s_wiretap.kube.requestinfo import parse_request
from k8s_wiretap.wire.framing import framer_for
from k8s_wiretap.wire.media import is_json, media_type

__all__ = ["FIELD", "Flow", "Malformed", "entry_flow", "har_reader", "import_flows", "write_flow"]

FIELD = "_k8sWiretap"
Headers = list[tuple[str, str]]


class Malformed(ValueError):
    """An entry or flow that cannot be made an exchange; its message says why."""


@dataclass
class Flow:
    """One exchange as a source gives it, checked before anything of it is written."""

    id: str
    start: float
    method: str
    url: str
    headers: Headers
    body: bytes | None = None
    http_version: str = "HTTP/1.1"
    status: int = 0  # 0: no answer
    reason: str = ""
    response_version: str = "HTTP/1.1"
    response_headers: Headers = field(default_factory=list)
    response_time: float | None = None
    response_body: bytes | None = None
    end: float | None = None
    event_times: list[float] = field(default_factory=list)  # a watch's, when the source has them
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # listener, client, identity, ...
    notes: list[str] = field(default_factory=list)  # what the exchange's notes say of it


def _header(headers: Headers, name: str) -> str:
    return next((value for key, value in headers if key.lower() == name), "")


def _as_json_media(content_type: str) -> str:
    """The Content-Type of a body that was sent as `content_type` and is JSON now: a patch
    keeps its patch type (an apply's JSON is its YAML: JSON is YAML), anything else is
    `application/json`."""
    media = media_type(content_type)
    if patch_type(media) == "apply":
        return "application/apply-patch+yaml"
    if patch_type(media) is not None or is_json(media):
        return content_type
    return "application/json"


def _frames(flow: Flow) -> list[bytes]:
    framer = framer_for(_header(flow.response_headers, "content-type"))
    data = flow.response_body or b""
    return [frame for frame in [*framer.feed(data), *framer.flush()] if frame.strip()]


def _server(url: str) -> str:
    """`scheme://host[:port]` of `url`: never the user and password it may hold; ValueError
    when it has no host or its port is no port."""
    parts = urlsplit(url)
    host, port = parts.hostname, parts.port  # .port raises ValueError
    if not host:
        raise ValueError("no host")
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")


def write_flow(flow: Flow, sink: Sink) -> None:
    """One checked exchange, through the sink: request, response, events or body, end."""
    parts = urlsplit(flow.url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    fields: dict[str, Any] = {
        "server": _server(flow.url),
        "http_version": flow.http_version,
        "listener": "imported",
        "identity": client_identity(_header(flow.headers, "authorization") or None, None),
        **flow.extra,
    }
    sink.request(flow.id, flow.start, flow.method, path, flow.headers, flow.body, **fields)
    end = flow.end if flow.end is not None else flow.response_time or flow.start
    if not flow.status:
        sink.end(flow.id, end, error=flow.error or "the source has no response")
        return
    head = flow.response_time if flow.response_time is not None else flow.start
    version = flow.response_version
    sink.response(
        flow.id, head, flow.status, flow.response_headers, reason=flow.reason, http_version=version
    )
    if parse_request(flow.method, path).verb != "watch" or not 200 <= flow.status < 300:
        sink.end(flow.id, end, flow.response_body, error=flow.error)
        return
    frames = _frames(flow)
    times = flow.event_times if len(flow.event_times) == len(frames) else []
    for index, frame in enumerate(frames):
        sink.event(flow.id, times[index] if times else end, frame)
    sink.end(flow.id, end, events=len(frames), error=flow.error)


# -- HAR -------------------------------------------------------------------------------------


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Malformed(f"{what} is not an object")
    return value


def _headers(value: Any, what: str) -> Headers:
    if value is None:
        return []
    if not isinstance(value, list):
        raise Malformed(f"{what} is not a list")
    headers: Headers = []
    for header in value:
        if not isinstance(header, dict) or not isinstance(header.get("name"), str):
            raise Malformed(f"{what} has a header without a name")
        headers.append((header["name"], str(header.get("value", ""))))
    return headers


def _time(value: Any) -> float:
    if not isinstance(value, str):
        raise Malformed("startedDateTime is missing")
    try:
        when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as error:
        raise Malformed(f"startedDateTime {value!r} is no ISO 8601 time") from error
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.timestamp()


def _number(value: Any) -> float | None:
    """`value` as a finite float; None when it is none (not a number, a bool, NaN, an
    infinity, an integer too big for a float such as 1 and 400 zeros)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        number = float(value)  # OverflowError: an int past a float's range
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _ms(value: Any) -> float:
    """A duration in milliseconds, 0 when it is not given (no finite positive number)."""
    number = _number(value)
    return number if number is not None and number > 0 else 0.0


def _body(holder: Any, what: str) -> tuple[bytes | None, dict[str, Any]]:
    """A body's bytes (None: no body) and what `export --har` said of it."""
    if holder is not None and not isinstance(holder, dict):
        raise Malformed(f"{what} is not an object")
    if not holder or holder.get("text") is None:
        return None, {}
    text = holder["text"]
    said = holder.get(FIELD)
    facts: dict[str, Any] = said if isinstance(said, dict) else {}
    if not isinstance(text, str):
        raise Malformed(f"{what}.text is not a string")
    if holder.get("encoding") == "base64":
        try:
            return base64.b64decode(text, validate=True), facts
        except (binascii.Error, ValueError) as error:
            raise Malformed(f"{what}.text is not base64: {error}") from error
    return text.encode("utf-8"), facts  # no lone surrogate: `_no_surrogates`


def _as_json(headers: Headers, facts: dict[str, Any]) -> Headers:
    """The headers of a body `export --har` decoded to JSON (a watch's too: a JSON watch
    stream is plain `application/json`): its Content-Type says JSON (`_as_json_media`)."""
    if facts.get("text") != "json":
        return headers
    return [
        (name, _as_json_media(value) if name.lower() == "content-type" else value)
        for name, value in headers
    ]


def _custom(entry: dict[str, Any]) -> dict[str, Any]:
    custom = entry.get(FIELD)
    return custom if isinstance(custom, dict) else {}


def _extra(
    custom: dict[str, Any], request: dict[str, Any], content: dict[str, Any]
) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    for name, kind in (("listener", str), ("client", dict), ("identity", dict)):
        if isinstance(custom.get(name), kind):
            extra[name] = custom[name]
    formats = {
        side: str(holder[FIELD].get("format", ""))
        for side, holder in (("request", request.get("postData")), ("response", content))
        if isinstance(holder, dict)
        and isinstance(holder.get(FIELD), dict)
        and holder[FIELD].get("text") == "json"
    }
    if formats:
        extra["imported_as"] = formats
    return extra


def _event_times(custom: dict[str, Any]) -> list[float]:
    events = custom.get("events")
    if not isinstance(events, list):
        return []
    times = [_number(e.get("time")) if isinstance(e, dict) else None for e in events]
    return [] if None in times else cast(list[float], times)


def _no_surrogates(entry: Any, root: str = "the entry") -> None:
    """Malformed when a string of `entry` (a key or a value) holds a lone surrogate: JSON
    may say `"\\ud800"`, but it is no Unicode text, and a recording is UTF-8. Walked with a
    stack of its own: the depth of an entry is no limit. `root`: what `entry` is called."""
    stack: list[tuple[str, Any]] = [(root, entry)]
    while stack:
        where, value = stack.pop()
        items: Iterable[tuple[Any, Any]] = ()
        if isinstance(value, dict):
            items = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        elif isinstance(value, str):
            _checked_text(value, where)
        for key, item in items:
            if isinstance(key, str):
                _checked_text(key, f"a key of {where}")
            stack.append((f"{where}[{key!r}]" if where != root else repr(key), item))


def _texts(flow: Flow) -> None:
    """Malformed when a text of `flow` holds a lone surrogate (mitmproxy decodes a method,
    URL or HTTP version that is no UTF-8 with `surrogateescape`): a recording is UTF-8."""
    named = [
        ("the method", flow.method),
        ("the URL", flow.url),
        ("the HTTP version", flow.http_version),
        ("the reason", flow.reason),
        ("the response's HTTP version", flow.response_version),
        ("the error", flow.error or ""),
    ]
    for side, headers in (("request", flow.headers), ("response", flow.response_headers)):
        named += [(f"a {side} header", text) for pair in headers for text in pair]
    for where, text in named:
        _checked_text(text, where)
    _no_surrogates(flow.extra, "the exchange's fields")


def _scheme(url: Any) -> str | None:
    """The scheme of `url`; None when it is no string or no URL (`[` without its `]`)."""
    try:
        return urlsplit(url).scheme if isinstance(url, str) else None
    except ValueError:
        return None


def _said_url(url: Any) -> str:
    """What a message may say of a URL that is not taken: its scheme, never more (a URL
    may hold a user and password, its path or query a token), or what it is instead."""
    if not isinstance(url, str):
        return f"(a JSON {type(url).__name__})"
    scheme = _scheme(url)
    return f"(scheme {scheme!r})" if scheme else "(no scheme)"


def _times(flow: Flow) -> None:
    """Malformed when a time of `flow` can be no record's (`sink.time_error`: NaN, an
    infinity, a year no date holds): explain and export make dates of them."""
    named = [("the start", flow.start), ("the response's time", flow.response_time)]
    named += [("the end", flow.end), *(("a watch event's time", t) for t in flow.event_times)]
    for what, when in named:
        error = time_error(when) if when is not None or what == "the start" else None
        if error is not None:
            raise Malformed(f"{what} is {error}")


def _checked_text(text: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        lone = text[error.start : error.end].encode("unicode_escape").decode()
        raise Malformed(f"{where} holds a lone surrogate ({lone}): no Unicode text") from error


def entry_flow(entry: Any, number: int) -> Flow:
    """The exchange of one HAR entry (`number`: its place, from 1); Malformed if it has none."""
    entry = _object(entry, "the entry")
    _no_surrogates(entry)
    request = _object(entry.get("request"), "request")
    response = _object(entry.get("response", {}), "response")
    method, url = request.get("method"), request.get("url")
    if not isinstance(method, str) or not method:
        raise Malformed("request.method is missing")
    if not isinstance(url, str) or _scheme(url) not in ("http", "https"):
        raise Malformed(f"request.url {_said_url(url)} is no absolute http(s) URL")
    try:
        _server(url)
    except ValueError as bad:  # its text may quote the URL's port: not said
        raise Malformed(
            f"request.url {_said_url(url)} has no host, or a port that is none"
        ) from bad
    status = response.get("status", 0)
    if not isinstance(status, int) or isinstance(status, bool) or not 0 <= status <= 999:
        raise Malformed(f"response.status {status!r} is no HTTP status")
    start = _time(entry.get("startedDateTime"))
    timings = entry.get("timings") if isinstance(entry.get("timings"), dict) else {}
    head = sum(_ms(timings.get(k)) for k in ("blocked", "dns", "connect", "send", "wait"))
    custom = _custom(entry)
    body, body_facts = _body(request.get("postData"), "request.postData")
    said_content = response.get("content")
    content: dict[str, Any] = said_content if isinstance(said_content, dict) else {}
    response_body, content_facts = _body(content, "response.content")
    said_id = custom.get("id")
    exchange_id = said_id if isinstance(said_id, str) and said_id else f"har-{number}"
    error = custom.get("error") if isinstance(custom.get("error"), str) else None
    return Flow(
        id=exchange_id,
        start=start,
        method=method,
        url=url,
        headers=_as_json(_headers(request.get("headers"), "request.headers"), body_facts),
        body=body,
        http_version=str(request.get("httpVersion") or "HTTP/1.1"),
        status=status,
        reason=str(response.get("statusText") or ""),
        response_version=str(response.get("httpVersion") or "HTTP/1.1"),
        response_headers=_as_json(
            _headers(response.get("headers"), "response.headers"), content_facts
        ),
        response_time=start + head / 1000,
        response_body=response_body,
        end=start + max(_ms(entry.get("time")), head) / 1000,
        event_times=_event_times(custom),
        error=error,
        extra=_extra(custom, request, content),
    )


def _document(path: Path, bounds: Limits) -> bytes:
    """The file's bytes, when they are within `bounds` (its size, then its JSON values:
    what parsing makes of them); Malformed, before the file is read, when it is larger."""
    size = path.stat().st_size
    if size > bounds.max_file:
        raise Malformed(
            f"{path}: a HAR file of {size:,} bytes, more than {bounds.max_file:,} "
            "(--max-file): not read"
        )
    data = path.read_bytes()
    if len(data) > bounds.max_values and values(data) > bounds.max_values:
        raise Malformed(
            f"{path}: a HAR file ({len(data):,} bytes) of more than {bounds.max_values:,} JSON "
            "values (by its commas and brackets, --max-values): not read"
        )
    return data


def _entries(path: Path, bounds: Limits) -> list[Any]:
    try:
        data = _document(path, bounds)
    except OSError as error:
        raise Malformed(f"{path}: not a HAR file: {error}") from error
    try:
        document = json.loads(data)
    except ValueError as error:  # UnicodeDecodeError and JSONDecodeError too
        raise Malformed(f"{path}: not a HAR file: {error}") from error
    except RecursionError as error:
        raise Malformed(f"{path}: not a HAR file: JSON nested too deeply to read") from error
    log = document.get("log") if isinstance(document, dict) else None
    entries = log.get("entries") if isinstance(log, dict) else None
    if not isinstance(entries, list):
        raise Malformed(f"{path}: not a HAR file: no log.entries")
    return entries


def _unused(id: str, number: int, seen: Seen) -> str:
    """`id`, or when it is taken `id-number`, then `id-number-2`, ...: the first one
    unused (two exchanges, never one)."""
    if id not in seen:
        return id
    unique, tries = f"{id}-{number}", 1
    while unique in seen:
        tries += 1
        unique = f"{id}-{number}-{tries}"
    return unique


def import_flows(flows: Iterable[tuple[str, Any]], sink: Sink, make: Any) -> int:
    """Each (where, item) made a Flow by `make(item, number)` and written; one that
    cannot be is skipped and told to the sink; what a flow's `notes` say is noted (the
    first SKIP_NOTES, then a count). Returns how many were read."""
    count, seen, noted = 0, Seen(), 0  # seen: the last 100,000 exactly, then a Bloom filter
    for count, (where, item) in enumerate(flows, 1):
        try:
            flow = make(item, count)
            _texts(flow)
            _times(flow)
        except Malformed as error:
            sink.skip(where, str(error))
            continue
        flow.id = _unused(flow.id, count, seen)
        seen.add(flow.id)
        write_flow(flow, sink)
        for note in flow.notes:
            noted += 1
            if noted <= SKIP_NOTES:
                sink.note(note, id=flow.id)
    if noted > SKIP_NOTES:
        sink.note(f"{noted:,} notes of exchanges, {noted - SKIP_NOTES:,} not noted")
    return count


def har_reader(path: Path, bounds: Limits = DEFAULT) -> Callable[[Sink], int]:
    """What writes the entries of the HAR file at `path` to a sink (and says how many it
    read); the file is read and checked first: Malformed when it is no HAR file at all, or
    beyond `bounds`."""
    entries = _entries(path, bounds)
    numbered = [(f"{path}:entry {n}", entry) for n, entry in enumerate(entries, 1)]
    return lambda sink: import_flows(numbered, sink, entry_flow)
