"""What the summaries say of an exchange's wire form beyond its rule: how an exec, attach or
port-forward was upgraded and how it ended (`transport`, `outcome`), and whether a client
asked for its objects without managedFields (`managed_fields_note`)."""

from __future__ import annotations

from typing import Any

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.decode.remotecommand import stream_messages, stream_protocol
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.kube.media import DROP_MANAGED_FIELDS, managed_fields_dropped

__all__ = ["managed_fields_note", "outcome", "transport"]

_ASKED = f"Accept drop={DROP_MANAGED_FIELDS}"
_CHANGES = ("ADDED", "MODIFIED", "DELETED")  # not a BOOKMARK: it carries no whole object


def transport(exchange: Exchange) -> str:
    """ " over a WebSocket (v5.channel.k8s.io)" for an upgraded exec, attach or
    port-forward; for one not upgraded, what its client offered: " (a WebSocket upgrade
    offering v5.channel.k8s.io)"; "" for any other exchange."""
    protocol = stream_protocol(exchange)
    if protocol is None:
        return ""
    if exchange.status == 101:
        return f" over {protocol.said()}"
    offered = ", ".join(protocol.offered) or "no subprotocol"
    name = "a WebSocket" if protocol.transport == "websocket" else "a SPDY"
    return f" ({name} upgrade offering {offered})"


def outcome(exchange: Exchange) -> str:
    """How an exec or attach ended, from the Status on its error stream: "; it ended: exit
    code 0", "; it failed: <the message>"; "" when the stream carried none."""
    statuses = [
        message.document
        for message in stream_messages(exchange)
        if message.stream == "error" and isinstance(message.document, dict)
    ]
    if not statuses:
        return ""
    status = statuses[-1]
    if status.get("status") == "Success":
        return "; it ended: exit code 0"
    code = _exit_code(status)
    if code is not None:
        return f"; it ended: exit code {code}"
    said = status.get("message") or status.get("reason") or "Failure"
    return f"; it failed: {said}"


def _exit_code(status: dict[str, Any]) -> str | None:
    """A NonZeroExitCode Status's exit code (its ExitCode cause)."""
    if status.get("reason") != "NonZeroExitCode":
        return None
    details = status.get("details")
    causes = details.get("causes") if isinstance(details, dict) else None
    for cause in causes if isinstance(causes, list) else ():
        if isinstance(cause, dict) and cause.get("reason") == "ExitCode":
            return str(cause.get("message", ""))
    return None


def managed_fields_note(analysis: Analysis, exchange: Exchange) -> str:
    """For a read or write whose client asked for its objects without managedFields
    (KEP-5958): whether the server left them out or ignored the ask; "" otherwise."""
    if not managed_fields_dropped(exchange.request_header("accept")):
        return ""
    objects = _objects(analysis, exchange)
    if any("managedFields" in _metadata(obj) for obj in objects):
        return (
            f" (asked without managedFields, {_ASKED}: the server ignored it and sent"
            " them, as one without the ManagedFieldsOptOut gate does)"
        )
    if objects:
        return f" (without managedFields, as the client asked: {_ASKED})"
    return f" (asked without managedFields: {_ASKED})"


def _objects(analysis: Analysis, exchange: Exchange) -> list[dict[str, Any]]:
    """The objects an exchange's response or watch events carried."""
    if exchange.info.verb == "watch":
        found = [e.object for e in analysis.events(exchange) if e.type in _CHANGES]
    else:
        answer = analysis.response_body(exchange).value
        items = answer.get("items") if isinstance(answer, dict) else None
        found = list(items) if isinstance(items, list) else [answer]
    return [obj for obj in found if isinstance(obj, dict) and obj.get("kind") != "Status"]


def _metadata(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}
