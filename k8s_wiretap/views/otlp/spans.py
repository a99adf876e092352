"""One exchange as one span: what `export` and the proxy's live output send.

The mapping (docs/tracing.md says it for the reader):

- **trace**: one per causal chain (`explain/chains.py`): every exchange of a chain carries
  the trace id of the chain's root; an exchange in no chain (a read, a watch, a write with
  no known cause) is the root of a trace of its own.
- **parent**: the write that caused it (the chain's previous exchange). A cause whose write
  is not in the same chain (not recorded, or forgotten by a long stream) is a link instead.
- **link**: the watch event that delivered the change to the component: a link to the
  watch's span (in the watch's own trace), with the event's type, object, resourceVersion
  and how long the delivery and the reaction took.
- **service.name**: who sent it (`explain/who.py`): `kubectl`, `kube-scheduler`,
  `controller-manager/deployment-controller`, `kubelet`, ...
- **attributes**: OpenTelemetry semantic conventions where they exist (`http.request.method`,
  `http.response.status_code`, `url.path`, `user_agent.original`, `server.address`,
  `k8s.namespace.name`, `k8s.pod.name`, ...), the rest under `wiretap.` (verb, resource,
  name, the summary and why, the exchange id). No body and no query string goes in: a
  Secret's values never leave the recording (which is redacted already).

Ids are derived from exchange ids (SHA-256, the first 16 bytes for a trace, 8 for a span),
so exporting a recording twice gives the same traces, and a span links to a watch's span
without having seen it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.explain.chains import Cause
from k8s_wiretap.explain.explainer import Explainer

__all__ = ["Attributes", "Link", "Span", "nanos", "span_id", "span_of", "trace_id"]

Attributes = tuple[tuple[str, Any], ...]

# The semantic conventions' attribute for an object's name, by resource (core, apps, batch).
NAME_ATTRIBUTES = {
    ("", "pods"): "k8s.pod.name",
    ("", "nodes"): "k8s.node.name",
    ("", "namespaces"): "k8s.namespace.name",
    ("apps", "deployments"): "k8s.deployment.name",
    ("apps", "replicasets"): "k8s.replicaset.name",
    ("apps", "statefulsets"): "k8s.statefulset.name",
    ("apps", "daemonsets"): "k8s.daemonset.name",
    ("batch", "jobs"): "k8s.job.name",
    ("batch", "cronjobs"): "k8s.cronjob.name",
}


@dataclass(frozen=True, slots=True)
class Link:
    """A link to another span: a watch event that delivered a change."""

    trace_id: str
    span_id: str
    attributes: Attributes


@dataclass(frozen=True, slots=True)
class Span:
    """One exchange as a span, with its resource (the component that sent it)."""

    resource: Attributes  # service.name first
    trace_id: str
    span_id: str
    parent_span_id: str  # "" for a trace's root
    name: str
    start: int  # unix nanoseconds
    end: int
    attributes: Attributes
    links: tuple[Link, ...] = ()
    error: str = ""  # the status message of a failed exchange; "" is status unset

    @property
    def service(self) -> str:
        return str(self.resource[0][1])


def _digest(kind: str, exchange_id: str, size: int) -> str:
    return hashlib.sha256(f"k8s-wiretap {kind} {exchange_id}".encode()).hexdigest()[: 2 * size]


def trace_id(root: str) -> str:
    """The trace id (32 hex digits) of the chain whose root is exchange `root`."""
    return _digest("trace", root, 16)


def span_id(exchange_id: str) -> str:
    """The span id (16 hex digits) of an exchange."""
    return _digest("span", exchange_id, 8)


def nanos(seconds: float) -> int:
    """Unix seconds as integer nanoseconds (whole seconds apart: a float's 53 bits do not
    hold today's time in nanoseconds)."""
    whole = int(seconds)
    return whole * 1_000_000_000 + round((seconds - whole) * 1e9)


def _end(exchange: Exchange) -> float:
    times = [exchange.time]
    if exchange.response is not None:
        times.append(exchange.response.time)
    if exchange.events:
        times.append(exchange.events[-1].time)
    if exchange.end is not None:
        times.append(exchange.end.time)
    return max(times)


def _name(exchange: Exchange) -> str:
    """`patch deployments`, `create pods/binding`, `watch configmaps`; `GET /version`."""
    info = exchange.info
    if not info.is_resource_request:
        return f"{exchange.method or 'UNKNOWN'} {info.path or '/'}"
    resource = f"{info.resource}/{info.subresource}" if info.subresource else info.resource
    return f"{info.verb} {resource}"


def _resource(explainer: Explainer, exchange: Exchange) -> Attributes:
    who = explainer.analysis.who(exchange)
    pairs: list[tuple[str, Any]] = [("service.name", who.component or "unknown")]
    if who.version:
        pairs.append(("service.version", who.version))
    if who.node:
        pairs.append(("k8s.node.name", who.node))
    if who.client:
        pairs.append(("wiretap.client", who.client))
    return tuple(pairs)


def _http(exchange: Exchange) -> list[tuple[str, Any]]:
    request = exchange.request
    pairs: list[tuple[str, Any]] = [
        ("http.request.method", exchange.method or "_OTHER"),
        ("url.path", exchange.info.path or "/"),
    ]
    if exchange.status is not None:
        pairs.append(("http.response.status_code", exchange.status))
    if exchange.user_agent:
        pairs.append(("user_agent.original", exchange.user_agent))
    server = urlsplit(request.server) if request.server else None
    if server is not None and server.hostname:
        pairs.append(("server.address", server.hostname))
        if server.port:
            pairs.append(("server.port", server.port))
    if request.http_version.startswith("HTTP/"):
        pairs.append(("network.protocol.version", request.http_version.removeprefix("HTTP/")))
    return pairs


def _kube(exchange: Exchange) -> list[tuple[str, Any]]:
    info = exchange.info
    pairs: list[tuple[str, Any]] = [("wiretap.verb", info.verb)]
    for key, value in (
        ("wiretap.group", info.group),
        ("wiretap.version", info.version),
        ("wiretap.resource", info.resource),
        ("wiretap.subresource", info.subresource),
        ("wiretap.name", info.name),
        ("k8s.namespace.name", info.namespace),
    ):
        if value:
            pairs.append((key, value))
    named = NAME_ATTRIBUTES.get((info.group, info.resource))
    if named and info.name and not info.subresource and named not in dict(pairs):
        pairs.append((named, info.name))  # a Namespace's own name is its namespace already
    return pairs


def _explained(explainer: Explainer, exchange: Exchange) -> list[tuple[str, Any]]:
    explanation = explainer.summaries.explain(exchange)
    who = explainer.analysis.who(exchange)
    pairs: list[tuple[str, Any]] = [
        ("wiretap.exchange.id", exchange.id),
        ("wiretap.summary", explanation.summary),
    ]
    if explanation.why:
        pairs.append(("wiretap.why", explanation.why))
    if explanation.rule:
        pairs.append(("wiretap.rule", explanation.rule))
    if who.command:
        pairs.append(("wiretap.kubectl.command", who.command))
    if who.session:
        pairs.append(("wiretap.kubectl.session", who.session))
    if explanation.noise:
        pairs.append(("wiretap.noise", True))
    return pairs


def _delivery(cause: Cause, exchange: Exchange) -> Link:
    hop = cause.hop
    pairs: list[tuple[str, Any]] = [
        ("wiretap.event.type", hop.type),
        ("wiretap.event.object", str(hop.ref)),
        ("wiretap.event.watcher", hop.watcher),
        ("wiretap.reacted_ms", round((exchange.time - hop.time) * 1000, 1)),
    ]
    if hop.event is not None:  # None: an object of a LIST
        pairs.append(("wiretap.event.index", hop.event))
    if hop.resource_version is not None:
        pairs.append(("wiretap.event.resource_version", hop.resource_version))
    if cause.exchange is not None:
        pairs.append(("wiretap.cause.exchange.id", cause.exchange))
    if cause.alternatives:
        pairs.append(("wiretap.cause.alternatives", cause.alternatives))
    return Link(trace_id(hop.watch), span_id(hop.watch), tuple(pairs))


def _write_link(explainer: Explainer, write_id: str) -> Link:
    """A link to the write that caused a change, when it is not the span's parent."""
    try:
        chain = explainer.chains.write(write_id).chain
    except KeyError:  # forgotten by a long stream: its own id stands for its root
        chain = ()
    pairs = (("wiretap.link", "cause"), ("wiretap.cause.exchange.id", write_id))
    return Link(trace_id(chain[0] if chain else write_id), span_id(write_id), pairs)


def _error(exchange: Exchange) -> str:
    if exchange.error:
        return exchange.error
    status = exchange.status
    if status is not None and status >= 400:
        reason = exchange.response.reason if exchange.response else ""
        return f"{status} {reason}".strip()
    return ""


def span_of(explainer: Explainer, exchange: Exchange) -> Span:
    """The span of one exchange, explained by `explainer` (in time order, as
    `explain/stream.py` hands them out)."""
    chains = explainer.chains
    chain = chains.chain_ids(exchange)
    cause = chains.caused_by(exchange)
    parent = chain[-2] if len(chain) > 1 else ""
    links: list[Link] = []
    if cause is not None:
        links.append(_delivery(cause, exchange))
        if cause.exchange is not None and cause.exchange != parent:  # not in this chain
            links.append(_write_link(explainer, cause.exchange))
    attributes = [*_http(exchange), *_kube(exchange), *_explained(explainer, exchange)]
    if cause is not None and cause.own:
        attributes.append(("wiretap.cause.own_change", True))
    error = _error(exchange)
    if error:
        status = exchange.status
        # the semantic conventions' error.type: the status code, or _OTHER (a cut exchange)
        attributes.append(("error.type", str(status) if status and status >= 400 else "_OTHER"))
    return Span(
        resource=_resource(explainer, exchange),
        trace_id=trace_id(chain[0]),
        span_id=span_id(exchange.id),
        parent_span_id=span_id(parent) if parent else "",
        name=_name(exchange),
        start=nanos(exchange.time),
        end=nanos(_end(exchange)),
        attributes=tuple(attributes),
        links=tuple(links),
        error=error,
    )
