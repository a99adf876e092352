"""One exchange as JSON: what `k8s-wiretap explain FILE --format json` prints per line.

Fields: id, time, component, who ({component, client, version, command, session, identity,
node, how, why}: explain/who.py), user_agent, method, path, verb, group, version, resource,
subresource, namespace, name, options (labelSelector, fieldSelector, resourceVersion, dryRun,
fieldManager, ... as sent), non_resource, streaming (exec, attach, portforward), status,
error, request_body and response_body (decoded; an undecodable body is the string
"undecodable: <reason> [<hex preview>]"), their formats, `patch` for PATCHes ({type, body,
before, after, diff, matches_server, mismatches}), and `events` for watches ([{type, kind,
namespace, name, resource_version, time}]), and `audit` for an exchange an audit log
gave its facts ({seen: "proxy and audit log" or "audit log only", user, groups,
impersonated, impersonated_groups, decision, reason, said}: `audit_record`).

`write_json` writes them for a whole recording as it is read, in bounded memory, with every
control character a `\\uXXXX` escape (JSON's own for C0; the rest too, as a terminal reads
them).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any, BinaryIO

import orjson

from k8s_wiretap.capture.assemble import Assembler
from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.decode.body import Decoded
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.explainer import Explainer
from k8s_wiretap.explain.stream import explained
from k8s_wiretap.wire.controls import escape_json_bytes

__all__ = ["audit_record", "dumps", "exchange_record", "write_json"]


def _body(decoded: Decoded) -> Any:
    return decoded.value if decoded.ok else decoded.error


def _serialized(decoded: Decoded) -> Any:
    """A body as `_body` gives it, but already serialized where it can be (an orjson
    Fragment): bodies are most of every line, and a repeated one is serialized once."""
    if not decoded.ok:
        return decoded.error
    data = decoded.json_bytes
    return decoded.value if data is None else orjson.Fragment(data)


def exchange_record(
    analysis: Analysis,
    exchange: Exchange,
    explainer: Explainer | None = None,
    body: Callable[[Decoded], Any] = _body,
) -> dict[str, Any]:
    """The exchange's JSON record; `body` says how a decoded body goes in."""
    info = exchange.info
    request, response = analysis.request_body(exchange), analysis.response_body(exchange)
    who = analysis.who(exchange)
    record: dict[str, Any] = {
        "id": exchange.id,
        "time": exchange.time,
        "component": who.component,
        "who": who.to_json(),
        "user_agent": exchange.user_agent,
        "method": exchange.method,
        "path": exchange.path,
        "verb": info.verb,
        "group": info.group,
        "version": info.version,
        "resource": info.resource,
        "subresource": info.subresource,
        "namespace": info.namespace,
        "name": info.name,
        "options": info.options(),
        "non_resource": not info.is_resource_request,
        "streaming": info.streaming,
        "status": exchange.status,
        "request_format": request.format,
        "request_body": body(request),
        "response_format": response.format,
        "response_body": body(response),
    }
    if exchange.error:
        record["error"] = exchange.error
    if exchange.request.audit is not None:
        record["audit"] = audit_record(exchange.request.audit)
    replay = analysis.replay(exchange)
    if replay is not None:
        record["patch"] = replay.to_json()
    if info.verb == "watch" or exchange.watch_events():
        record["events"] = [event.summary() for event in analysis.events(exchange)]
    if explainer is not None:
        record.update(explainer.to_json(exchange, None if body is _body else body))
    return record


def _user(user: Any) -> tuple[str, list[str]]:
    """A UserInfo's name and groups: `groups` as a list, its strings only (a log may say
    anything there; a string is no list of groups, its letters none)."""
    user = user if isinstance(user, dict) else {}
    groups = user.get("groups")
    said = [g for g in groups if isinstance(g, str)] if isinstance(groups, list) else []
    return str(user.get("username") or ""), said


def audit_record(audit: dict[str, Any]) -> dict[str, Any]:
    """What the audit log said of the request (the `audit` field of its record,
    capture/format.py): who the API server authenticated, as whom (impersonation), the
    authorization decision and reason, where the exchange was seen, and all of it in words."""
    user, groups = _user(audit.get("user"))
    impersonated, as_groups = _user(audit.get("impersonatedUser"))
    decision, reason = str(audit.get("decision") or ""), str(audit.get("reason") or "")
    return {
        "seen": "proxy and audit log" if audit.get("joined") else "audit log only",
        "user": user,
        "groups": groups,
        "impersonated": impersonated,
        "impersonated_groups": as_groups,
        "decision": decision,
        "reason": reason,
        "said": _said(user, tuple(groups), impersonated, tuple(as_groups), decision, reason),
    }


@lru_cache(maxsize=1024)
def _said(
    user: str,
    groups: tuple[str, ...],
    impersonated: str,
    as_groups: tuple[str, ...],
    decision: str,
    reason: str,
) -> str:
    """`audit_record`'s words, made once for each user, group and decision: a log says
    the same few of them over and over."""
    said = f"{user} ({', '.join(groups)})" if groups else user
    if impersonated:
        said += f" as {impersonated}" + (f" ({', '.join(as_groups)})" if as_groups else "")
    verdict = {"allow": "allowed", "forbid": "forbidden"}.get(decision, decision)
    said += "".join(f": {part}" for part in (verdict, reason) if part)
    return said


def dumps(record: dict[str, Any]) -> bytes:
    """`record` as one line of JSON, its newline included, UTF-8: what `json.dumps(
    ensure_ascii=False)` writes but for floats' spelling and compact separators (orjson,
    ten times faster; json for what orjson refuses: integers past 64 bits, non-string
    keys). Bytes, as they go out: no copy to text and back."""
    try:
        return orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:  # orjson.JSONEncodeError
        text = json.dumps(record, ensure_ascii=False, check_circular=False)
        return (text + "\n").encode()


def _line(explainer: Explainer, exchange: Exchange) -> bytes:
    """The exchange's line, its bodies (and etcd's stored value) serialized once
    (`_serialized`); where orjson refuses the rest of the record, the record made again
    of plain values, for `dumps` (json cannot write a Fragment)."""
    analysis = explainer.analysis
    record = exchange_record(analysis, exchange, explainer, _serialized)
    try:
        return orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:  # orjson.JSONEncodeError
        return dumps(exchange_record(analysis, exchange, explainer))


def write_json(records: Iterable[dict[str, Any]], out: BinaryIO) -> Assembler:
    """One explained JSON line per exchange of `records` (a recording's, as read) to `out`,
    in time order, as a stream in bounded memory (`explain/stream.py`); returns the
    assembler (its warnings). What JSON leaves unescaped that a terminal obeys (DEL, C1,
    bidi overrides) is written as `\\uXXXX` too."""
    return explained(records, _line, lambda line: out.write(escape_json_bytes(line)))
