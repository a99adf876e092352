"""What each tab of the detail pane says about one exchange, as rich renderables.

Everything comes from the explanation layer's objects (`window.Detail`: the `Explained`,
views/json.py's `exchange_record`, the patch replay, the decoded watch events); nothing
here reads HTTP or knows a Kubernetes rule. Bodies are shown as YAML (JSON for text that
is not a document), highlighted, and cut at `MAX_LINES` lines.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from http import HTTPStatus
from typing import Any

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.style import Style
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from k8s_wiretap.capture.exchange import Body
from k8s_wiretap.decode.watch import WatchEvent
from k8s_wiretap.views.lines import shown_path
from k8s_wiretap.views.story import colour_of, told, verdict
from k8s_wiretap.views.tui.listing.rows import clock
from k8s_wiretap.views.tui.listing.window import Detail
from k8s_wiretap.wire import yamltext
from k8s_wiretap.wire.controls import escape_controls
from k8s_wiretap.wire.words import counted

__all__ = [
    "TABS",
    "body_text",
    "events_pane",
    "explain_pane",
    "patch_pane",
    "request_pane",
    "response_pane",
]

MAX_LINES = 2000
MAX_EVENTS = 1000
THEME = "ansi_dark"


def _heading(text: str) -> Text:
    return Text(f"\n{text}", style="bold underline")


def body_text(value: Any) -> str:
    """A decoded body or object as the tabs show it: YAML for documents, else the text
    (what `:copy` copies, whole)."""
    if isinstance(value, str):
        return value
    return yamltext.dump(value, width=100)


def _yaml(value: Any) -> RenderableType:
    """A decoded body or object, highlighted: YAML for documents, the text otherwise."""
    if isinstance(value, str):
        return Text(value)
    text = body_text(value)
    lines = text.splitlines()
    more = len(lines) - MAX_LINES
    if more > 0:
        text = "\n".join(lines[:MAX_LINES]) + f"\n# … {counted(more, 'more line')}"
    # the token colours only: a Syntax of its own paints the terminal's default background
    highlighted = Syntax("", "yaml", theme=THEME).highlight(text.rstrip("\n"))
    highlighted.rstrip()
    highlighted.no_wrap, highlighted.overflow = False, "fold"  # long values wrap
    return highlighted


def _pairs(pairs: Iterable[tuple[str, Any]]) -> Table:
    table = Table.grid(padding=(0, 1))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for name, value in pairs:
        shown = value if isinstance(value, Text) else Text(escape_controls(str(value)))
        table.add_row(escape_controls(name), shown)  # before Rich drops CR and BEL
    return table


def explain_pane(detail: Detail) -> RenderableType:
    said, record = detail.explained, detail.record
    text, who = said.explanation, said.who
    name, rest = told(who.component, text.summary)
    parts: list[RenderableType] = [
        Text.from_markup(
            f"[bold {colour_of(who.component)}]{escape(name)}[/][bold]{escape(rest)}[/]"
        ),
    ]
    if text.why:
        parts.append(Text(text.why, style="italic"))
    parts += _chain(detail)
    parts += _cause(record.get("caused_by"))
    parts.append(_heading("the exchange"))
    pairs = [
        ("when", clock(detail.exchange.time)),
        ("request", f"{detail.exchange.method} {shown_path(detail.exchange.path)}"),
        ("status", record.get("status") or record.get("error") or "no response"),
        ("who", f"{who.component} ({who.how}: {who.why})" if who.why else who.component),
    ]
    if "audit" in record:  # what the API server's audit log said of it
        pairs.append(("audit", f"{record['audit']['said']} [{record['audit']['seen']}]"))
    pairs.append(("rule", f"{text.rule} — {text.source}" if text.source else text.rule))
    parts.append(_pairs(pairs))
    parts += _etcd(text.etcd)
    return Group(*parts)


def _etcd(etcd: dict[str, Any] | None) -> list[RenderableType]:
    if not etcd:
        return []
    where = etcd.get("key") or etcd.get("prefix") or ""
    revision = f" @{etcd['revision']}" if etcd.get("revision") is not None else ""
    parts: list[RenderableType] = [_heading("etcd"), Text(f"{where}{revision}")]
    if etcd.get("prefix"):  # a request for no one name: every key under the prefix
        how = "read" if etcd.get("read") else "write"
        parts.append(Text(f"a {how} of the keys under this prefix", style="dim"))
    for name, value in etcd.items():
        if name not in ("key", "prefix", "read", "revision", "stored"):
            parts.append(Text(f"{name}: {_said(value)}", style="dim"))
    stored = etcd.get("stored")
    if isinstance(stored, dict):
        parts.append(Text(f"as etcd recorded it ({stored.get('format', '')}):", style="dim"))
        parts.append(_yaml(stored.get("value")))
    return parts


def _said(value: Any) -> str:
    """A fact's value in words: a flag as yes or no, never Python's True or False."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _cause(cause: dict[str, Any] | None) -> list[RenderableType]:
    if not cause:
        return []
    event = cause.get("event") or {}
    delivered = cause.get("delivered_ms")
    line = (
        f"the {event.get('type')} of {event.get('object')} (resourceVersion "
        f"{event.get('resource_version')}) reached {event.get('watcher')}"
    )
    if delivered is not None:
        line += f" {delivered:.0f} ms after the write that made it"
    line += f"; it reacted {cause.get('reacted_ms', 0):.0f} ms later"
    notes = [
        n
        for n, on in (
            ("ambiguous", cause.get("ambiguous")),
            ("its own change come back", cause.get("own_change")),
        )
        if on
    ]
    return [_heading("caused by"), Text(line + (f" ({', '.join(notes)})" if notes else ""))]


def _chain(detail: Detail) -> list[RenderableType]:
    """The chain from the user's action down to this exchange, as the story tells it."""
    if len(detail.chain) <= 1:
        return []
    heading = _heading("causal chain (from the user's action)")
    hint = "  (click a hop to select it; u: up one, U: the root)"
    heading.append(hint, style="dim not bold not underline")
    lines: list[RenderableType] = [heading]
    before: float | None = None
    for depth, hop in enumerate(detail.chain):
        here = hop.id == detail.exchange.id
        indent = Text("  " * depth + ("▶ " if here else "  "))
        line = Text(clock(hop.time), style="dim")
        if before is not None:
            line.append(f" +{(hop.time - before) * 1000:.0f} ms", style="dim")
        name, rest = told(hop.component, hop.summary)  # "kubectl apply patches", said once
        line.append(f" {name}", style=colour_of(hop.component))
        line.append(rest, style="bold" if here else "")
        if hop.position is not None and not here:  # a click selects it in the list
            line.stylize(Style(meta={"@click": f"app.jump({hop.position})"}))
        # the indent a column of its own: a hop's wrapped lines stay under its first
        hanging = Table.grid()
        hanging.add_column(width=indent.cell_len, no_wrap=True)
        hanging.add_column()
        hanging.add_row(indent, line)
        lines.append(hanging)
        before = hop.time
    return lines


BINARY = frozenset({"protobuf", "cbor", "openapi-protobuf", "openapi-v3-protobuf"})
HEX_BYTES = 256


def _message(
    headers: Iterable[tuple[str, str]], fmt: str, body: Any, raw: Body | None
) -> list[RenderableType]:
    parts: list[RenderableType] = [_heading("headers")]
    parts.append(_pairs((name, value) for name, value in headers))
    if fmt == "empty":
        parts.append(_heading("no body"))
        return parts
    parts += [_heading(f"body ({fmt}, decoded)" if fmt in BINARY else f"body ({fmt})")]
    parts.append(_yaml(body))
    if fmt in BINARY and raw is not None:
        parts += _bytes(raw)
    return parts


def _bytes(raw: Body) -> list[RenderableType]:
    """The first bytes as they were on the wire, in hex: what the decoding read."""
    data = raw.data[:HEX_BYTES]
    lines = []
    for at in range(0, len(data), 16):
        chunk = data[at : at + 16]
        printable = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{at:04x}  {chunk.hex(' '):<47}  {printable}")
    more = f" (the first {len(data)})" if raw.size > len(data) else ""
    return [
        _heading(f"bytes: {raw.size:,}{more}"),
        Text("\n".join(lines), style="dim", no_wrap=True, overflow="crop"),
    ]


def request_pane(detail: Detail) -> RenderableType:
    exchange, record = detail.exchange, detail.record
    request = exchange.request
    said = escape_controls(f"{exchange.method} {exchange.path} {request.http_version}")
    first = Text(said, style="bold")
    line = f"listener {request.listener} → {request.server}; client {request.client.address}"
    parts: list[RenderableType] = [first, Text(line, style="dim")]
    if record.get("options"):
        parts.append(_pairs((k, v) for k, v in record["options"].items()))
    fmt, body = record["request_format"], record["request_body"]
    parts += _message(request.headers, fmt, body, exchange.request_body)
    return Group(*parts)


def response_pane(detail: Detail) -> RenderableType:
    exchange, record = detail.exchange, detail.record
    response = exchange.response
    if response is None:
        return Text(f"no response: {exchange.error or 'none recorded'}", style="bold red")
    took = ""
    if exchange.end is not None:
        took = f", ended after {(exchange.end.time - exchange.time) * 1000:.0f} ms"
    reason = response.reason or _phrase(response.status)  # HTTP/2 sends none
    first = f"{response.status} {reason} {response.http_version}{took}"
    parts: list[RenderableType] = [Text(first, style="bold")]
    if exchange.error:
        parts.append(Text(f"ended: {exchange.error}", style="red"))
    if detail.events:
        stream = f"a stream of {counted(len(detail.events), 'event')}: see Events"
        parts.append(Text(stream, style="dim"))
    fmt, body = record["response_format"], record["response_body"]
    parts += _message(response.headers, fmt, body, exchange.response_body)
    return Group(*parts)


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def patch_pane(detail: Detail) -> RenderableType:
    replay = detail.replay
    if replay is None:
        return Text("not a PATCH", style="dim")
    patch = detail.record.get("patch") or {}
    ok = replay.matches_server
    mark = {True: "green", False: "red", None: "yellow"}[ok]
    parts: list[RenderableType] = [
        Text(f"{replay.type} patch", style="bold"),
        Text(verdict(detail.exchange, replay), style=mark),
    ]
    if replay.mismatches:
        parts.append(Text("differs at " + ", ".join(replay.mismatches), style="red"))
    parts += [_heading("the patch"), _yaml(replay.body)]
    changes = patch.get("diff")
    if changes:
        parts += [_heading("before → after (the server's result)"), _diff(changes)]
    fields = detail.explained.fields
    if fields:
        table = Table(box=None, padding=(0, 1), show_edge=False)
        for column in ("change", "field", "from → to", "why"):
            table.add_column(column, overflow="fold")
        for change in fields:
            shown = "" if change.change == "removed" else f"{change.before!r} → {change.after!r}"
            style = {"set": "green", "removed": "red"}.get(change.change, "dim")
            table.add_row(Text(change.change, style=style), change.path, shown, change.reason)
        parts += [_heading("the apply, field by field"), table]
    return Group(*parts)


def _diff(changes: list[dict[str, Any]]) -> Table:
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")
    table.add_column(overflow="fold")
    signs = {"add": ("+", "green"), "remove": ("-", "red"), "replace": ("~", "yellow")}
    for change in changes[:MAX_LINES]:
        sign, style = signs.get(change["op"], ("?", ""))
        shown = []
        if "from" in change:
            shown.append(Text(_short(change["from"]), style="red"))
        if "to" in change:
            shown.append(Text(_short(change["to"]), style="green"))
        value = Text(" → ").join(shown)
        table.add_row(Text(sign, style=style), Text(change["path"], style=style), value)
    return table


def _short(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def events_pane(detail: Detail, marked: int | None = None) -> RenderableType:
    """The watch's events; `marked` (a walkthrough's step names it) is marked ▸."""
    if not detail.events:
        return Text("not a watch (or no events)", style="dim")
    table = Table(box=None, padding=(0, 1), show_edge=False)
    for column in ("#", "time", "type", "kind", "namespace/name", "rv", "phase"):
        table.add_column(column, no_wrap=column != "namespace/name")
    for number, event in enumerate(detail.events[:MAX_EVENTS]):
        target = f"{event.namespace}/{event.name}" if event.namespace else event.name
        style = "red" if event.error or event.type == "ERROR" else ""
        opens = Style(meta={"@click": f"app.open_event({number})"})  # or :event N
        table.add_row(
            Text(f"▸{number}" if number == marked else str(number), Style(underline=True) + opens),
            clock(event.time) if event.time else "",
            Text(event.type or "undecodable", style=Style.parse(style or "bold") + opens),
            event.kind,
            target,
            event.resource_version,
            event.phase or "",
            style="reverse" if number == marked else None,
        )
    more = len(detail.events) - MAX_EVENTS
    rest = f"… {counted(more, 'more event')} (:event N opens any)"
    tail = [Text(rest, style="dim")] if more > 0 else []
    heading = Text(counted(len(detail.events), "event"), style="bold")
    heading.append("  (click one, or :event N, to open it)", style="dim")
    return Group(heading, table, *tail)


def event_object(event: WatchEvent) -> RenderableType:
    """What an event carried: the object as YAML, or why it could not be decoded."""
    if event.error:
        return Text(event.error, style="red")
    return _yaml(event.object)


TABS = {
    "explain": ("Explain", explain_pane),
    "request": ("Request", request_pane),
    "response": ("Response", response_pane),
    "patch": ("Patch", patch_pane),
    "events": ("Events", events_pane),
}
