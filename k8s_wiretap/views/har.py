"""A recording as a HAR 1.2 file (`k8s-wiretap export RECORDING --har OUT`).

One entry per exchange, in time order, as `explain --format json` orders and decodes them
(`views/json.py`'s `exchange_record`: the same decoded bodies and watch events):

- `startedDateTime` is when the request began (to the microsecond); `timings.wait` runs to
  the response's head, `timings.receive` from there to the exchange's end (a watch: its
  last event or its close); `send` is 0 (the proxy records a request when it is whole);
  `time` is their sum.
- `request.headers` and `response.headers` are the recorded ones (redacted as the recording
  is: a recording the proxy redacted exports redacted, nothing is added back).
- Bodies (`request.postData.text`, `response.content.text`) are the JSON the server would
  send: a JSON, YAML (an apply's) or text body as recorded, a protobuf, CBOR or gnostic
  OpenAPI body decoded to JSON (ASCII only, `\\u` escapes: a reader that guesses the charset from
  the Content-Type reads it right). `mimeType` stays the recorded Content-Type; the custom field
  `_k8sWiretap` beside the text says what the text is: `{"format": F, "text": "json" |
  "as recorded" | "base64"}` (F as `explain --format json`'s `request_format`), with
  `truncated`, `redacted` and `error` (an undecodable body: its recorded bytes, base64,
  `encoding: "base64"`) when they apply.
- A watch's `response.content.text` (unless it was answered with a body, a failure's
  Status) is its events as a JSON watch stream sends them, one
  `{"type": ..., "object": ...}` a line (an undecodable event: `{}`), and the entry's
  `_k8sWiretap.events` has one summary per line, in order: `{type, kind, namespace, name,
  resource_version, time, phase?, expired?, error?}` (`explain --format json`'s `events`).
- The entry's `_k8sWiretap` also has the exchange's `id`, `component`, what the proxy saw
  of the client (`listener`, `client`: {address, tls, alpn?, certificate?}, `identity`:
  {credential, user?}, as in a recording's request record), and `error` (why an exchange
  ended without an answer). An exchange with no response has `status` 0.
- `log._k8sWiretap` has the recording's `redacted` and `tool` (its header's).

The file is written as the recording is read (`explain/stream.py`): bounded memory.
"""

from __future__ import annotations

import base64
import datetime as dt
import itertools
import json
from collections.abc import Iterable
from typing import Any, BinaryIO
from urllib.parse import parse_qsl, urlsplit

import orjson

from k8s_wiretap import __version__
from k8s_wiretap.capture.assemble import Assembler
from k8s_wiretap.capture.exchange import Body, Exchange, Request, Response
from k8s_wiretap.decode.body import Decoded
from k8s_wiretap.explain.explainer import Explainer
from k8s_wiretap.explain.stream import explained
from k8s_wiretap.views.json import dumps, exchange_record
from k8s_wiretap.wire.media import is_cbor

__all__ = ["FIELD", "write_har"]

FIELD = "_k8sWiretap"  # the custom field (HAR 1.2: custom fields start with "_")
AS_RECORDED = ("json", "yaml", "text", "empty")  # formats whose recorded bytes are already the text


def _iso(when: float) -> str:
    return dt.datetime.fromtimestamp(when, dt.UTC).isoformat(timespec="microseconds")


def _ms(start: float, end: float | None) -> float:
    return round(max(0.0, (end - start) * 1000), 3) if end is not None else 0.0


def _headers(headed: Request | Response | None) -> list[dict[str, str]]:
    if headed is None:
        return []
    return [{"name": name, "value": value} for name, value in headed.headers]


def _text(decoded: Decoded, body: Body | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The HAR text of one body (`text`, `encoding`) and what it is (the custom field)."""
    facts: dict[str, Any] = {"format": decoded.format}
    if body is not None and body.truncated:
        facts["truncated"] = True
    if body is not None and body.redacted:
        facts["redacted"] = True
    data = body.data if body is not None else b""
    if not decoded.ok:
        facts.update(text="base64", error=decoded.error)
        return {"text": base64.b64encode(data).decode(), "encoding": "base64"}, facts
    if decoded.format in AS_RECORDED:
        facts["text"] = "as recorded"
        return {"text": data.decode("utf-8", "replace")}, facts
    facts["text"] = "json"
    return {"text": _ascii_json(decoded.value)}, facts


def _ascii_json(value: Any) -> str:
    """`value` as compact JSON, ASCII only: a reader that guesses the text's charset from
    a protobuf or CBOR Content-Type (mitmproxy takes latin-1) reads the same text."""
    return json.dumps(value, separators=(",", ":"), check_circular=False)


def _watch_format(content_type: str) -> str:
    if "protobuf" in content_type:
        return "protobuf"
    return "cbor" if is_cbor(content_type) else "json"


def _watch_content(explainer: Explainer, exchange: Exchange) -> dict[str, Any]:
    events = explainer.analysis.events(exchange)
    text = "".join(
        _ascii_json({} if event.error else {"type": event.type, "object": event.object}) + "\n"
        for event in events
    )
    content_type = exchange.response_header("content-type")
    size = sum(event.data.size for event in exchange.watch_events())
    facts = {"format": _watch_format(content_type), "text": "json"}
    return {"size": size, "mimeType": content_type, "text": text, FIELD: facts}


def _post_data(explainer: Explainer, exchange: Exchange) -> dict[str, Any] | None:
    body = exchange.request_body
    if body is None or not body.data:
        return None
    text, facts = _text(explainer.analysis.request_body(exchange), body)
    mime = exchange.request_header("content-type")
    return {"mimeType": mime, "params": [], **text, FIELD: facts}


def _content(explainer: Explainer, exchange: Exchange, watch: bool) -> dict[str, Any]:
    if watch:
        return _watch_content(explainer, exchange)
    body = exchange.response_body
    mime = exchange.response_header("content-type")
    if body is None or not body.data:
        return {"size": 0, "mimeType": mime}
    text, facts = _text(explainer.analysis.response_body(exchange), body)
    return {"size": body.size, "mimeType": mime, **text, FIELD: facts}


def _timings(exchange: Exchange) -> dict[str, float]:
    start = exchange.time
    head = exchange.response.time if exchange.response else None
    ends = [exchange.end.time] if exchange.end else []
    ends += [event.time for event in exchange.events]
    end = max(ends, default=head)
    wait = _ms(start, head if head is not None else end)
    receive = _ms(head, end) if head is not None else 0.0
    return {"blocked": -1, "dns": -1, "connect": -1, "send": 0, "wait": wait, "receive": receive}


def _url(exchange: Exchange) -> str:
    server = exchange.request.server or f"https://{exchange.request_header('host') or 'unknown'}"
    return server.rstrip("/") + exchange.path


def _connection(exchange: Exchange) -> dict[str, Any]:
    """What the proxy saw of the client (which the HAR headers, redacted, no longer say):
    the listener, the client's connection, the identity it went upstream as."""
    request = exchange.request
    client, identity = request.client, request.identity
    seen: dict[str, Any] = {"address": client.address, "tls": client.tls}
    seen.update(
        {k: v for k, v in (("alpn", client.alpn), ("certificate", client.certificate)) if v}
    )
    who = {"credential": identity.credential, **({"user": identity.user} if identity.user else {})}
    return {"listener": request.listener, "client": seen, "identity": who}


def entry(explainer: Explainer, exchange: Exchange) -> dict[str, Any]:
    """The HAR entry of one explained exchange."""
    record = exchange_record(explainer.analysis, exchange)
    body = exchange.response_body
    watch = "events" in record and (bool(record["events"]) or body is None or not body.data)
    response = exchange.response
    timings = _timings(exchange)
    url = _url(exchange)
    request: dict[str, Any] = {
        "method": exchange.method,
        "url": url,
        "httpVersion": exchange.request.http_version or "HTTP/1.1",
        "cookies": [],
        "headers": _headers(exchange.request),
        "queryString": [
            {"name": name, "value": value}
            for name, value in parse_qsl(urlsplit(url).query, keep_blank_values=True)
        ],
        "headersSize": -1,
        "bodySize": exchange.request_body.size if exchange.request_body else 0,
    }
    post = _post_data(explainer, exchange)
    if post is not None:
        request["postData"] = post
    custom: dict[str, Any] = {"id": exchange.id, "component": record["component"]}
    custom.update(_connection(exchange))
    if watch:
        custom["events"] = record["events"]
    if exchange.error:
        custom["error"] = exchange.error
    return {
        "startedDateTime": _iso(exchange.time),
        "time": round(timings["wait"] + timings["receive"], 3),
        "request": request,
        "response": {
            "status": response.status if response else 0,
            "statusText": response.reason if response else "",
            "httpVersion": (response.http_version if response else "") or "HTTP/1.1",
            "cookies": [],
            "headers": _headers(response),
            "content": _content(explainer, exchange, watch),
            "redirectURL": (response.header("location") if response else "") or "",
            "headersSize": -1,
            "bodySize": -1,
        },
        "cache": {},
        "timings": timings,
        FIELD: custom,
    }


def _head(header: dict[str, Any] | None) -> bytes:
    log = {
        "version": "1.2",
        "creator": {"name": "k8s-wiretap", "version": __version__},
        FIELD: {
            "redacted": bool(header and header.get("redacted")),
            "tool": (header or {}).get("tool", ""),
        },
    }
    # the log object up to its entries, which follow as they are explained
    return b'{"log":' + orjson.dumps(log)[:-1] + b',"entries":['


class _Entries:
    """Writes entries after the head, commas between them; counts them."""

    def __init__(self, out: BinaryIO) -> None:
        self.out, self.count = out, 0

    def __call__(self, data: bytes) -> None:
        self.out.write(b",\n" + data if self.count else b"\n" + data)
        self.count += 1


def _line(explainer: Explainer, exchange: Exchange) -> bytes:
    return dumps(entry(explainer, exchange)).rstrip(b"\n")


def write_har(records: Iterable[dict[str, Any]], out: BinaryIO) -> tuple[Assembler, int]:
    """The HAR file of `records` (a recording's, header first) to `out`, as they are read;
    returns the assembler (its warnings) and how many entries were written."""
    records = iter(records)
    first = next(records, None)
    header = first if first is not None and first.get("record") == "header" else None
    out.write(_head(header))
    entries = _Entries(out)
    source = itertools.chain([first] if first is not None else [], records)
    assembler = explained(source, _line, entries)
    out.write(b"\n]}}\n")
    return assembler, entries.count
