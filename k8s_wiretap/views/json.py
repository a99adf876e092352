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
from k8s_wiretap.explain.who import Who
from k8s_wiretap.wire.controls import escape_json_bytes

__all__ = ["audit_record", "dumps", "exchange_record", "line", "skim", "write_json"]


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
    serialized = body is not _body  # the JSON writer's: what repeats goes in serialized
    record: dict[str, Any] = {
        "id": exchange.id,
        "time": exchange.time,
        "component": who.component,
        "who": _who_json(who) if serialized else who.to_json(),
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
    audit = exchange.request.audit
    if audit is not None:
        record["audit"] = _audit_json(audit) if serialized else audit_record(audit)
    replay = analysis.replay(exchange)
    if replay is not None:
        record["patch"] = replay.to_json()
    if info.verb == "watch" or exchange.watch_events():
        record["events"] = [event.summary() for event in analysis.events(exchange)]
    if explainer is not None:
        record.update(explainer.to_json(exchange, None if body is _body else body))
    return record


@lru_cache(maxsize=1024)
def _who_json(who: Who) -> orjson.Fragment:
    """`who.to_json()` serialized, once for each sender: a Who is shared by every exchange
    its client sent alike (`explain/who.py`)."""
    return orjson.Fragment(orjson.dumps(who.to_json()))


_audits: dict[tuple[Any, ...], orjson.Fragment] = {}


def _audit_json(audit: dict[str, Any]) -> Any:
    """`audit_record(audit)`, serialized once for each user, groups, impersonation and
    decision (a log says the same few of them over and over). Kept by the values as the
    log gave them (the groups as a tuple) when each is a string or missing: any other
    value is said as `audit_record` says it, not kept, and never found as one kept (a
    number may equal a bool, never a string; a tuple of strings only such a tuple)."""
    user, impersonated = audit.get("user"), audit.get("impersonatedUser")
    name = groups = as_name = as_groups = None
    if isinstance(user, dict):
        name, groups = user.get("username"), user.get("groups")
        groups = tuple(groups) if type(groups) is list else None
    if isinstance(impersonated, dict):
        as_name, as_groups = impersonated.get("username"), impersonated.get("groups")
        as_groups = tuple(as_groups) if type(as_groups) is list else None
    key = (
        bool(audit.get("joined")),
        name,
        groups,
        as_name,
        as_groups,
        audit.get("decision"),
        audit.get("reason"),
    )
    try:
        found = _audits.get(key)
    except TypeError:  # a value that is no string: a list, an object
        return audit_record(audit)
    if found is not None:
        return found
    made: Any = audit_record(audit)
    if all(v is None or type(v) is str or _strings(v) for v in key[1:]):
        if len(_audits) >= 1024:
            _audits.clear()
        _audits[key] = made = orjson.Fragment(orjson.dumps(made))
    return made


def _strings(value: Any) -> bool:
    return type(value) is tuple and all(type(v) is str for v in value)


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


def line(explainer: Explainer, exchange: Exchange) -> bytes:
    """The exchange's line as `write_json` writes it (escaped)."""
    return escape_json_bytes(_line(explainer, exchange))


def skim(explainer: Explainer, exchange: Exchange) -> None:
    """Every question `line` asks that changes what later lines say, in its order, without
    making the line (a partition's lines before and after its own: `explain/stream.py`'s
    `Gate`): who sent it (kept, of the exchanges held now), the analysis caught up (as
    `Analysis.replay` has it), whether it starts an informer (`Summaries.saw`), its place
    in the chains (`Chains.add`). The rest only reads, or decodes what any later moment
    decodes alike (a body, a watch event: the same bytes under the same release; a change
    of release is the `Gate`'s to see)."""
    analysis = explainer.analysis
    analysis.who(exchange)
    _ = analysis.history
    explainer.summaries.saw(exchange)
    explainer.chains.add(exchange)


def write_json(records: Iterable[dict[str, Any]], out: BinaryIO) -> Assembler:
    """One explained JSON line per exchange of `records` (a recording's, as read) to `out`,
    in time order, as a stream in bounded memory (`explain/stream.py`); returns the
    assembler (its warnings). What JSON leaves unescaped that a terminal obeys (DEL, C1,
    bidi overrides) is written as `\\uXXXX` too."""
    return explained(records, _line, lambda line: out.write(escape_json_bytes(line)))
