"""The exchange: one request, its response, and what streamed through it — typed.

This is what every later stage consumes (decoders, explanations, views). It is assembled
from a recording's records by `assemble.Assembler`, never from proxy objects; each part is
read from its record once (`from_record`), so nothing downstream looks into raw dicts.

Its parts are slotted dataclasses, not frozen ones: a frozen dataclass's `__init__` sets
each field through `object.__setattr__`, four times the cost, and a recording makes
millions of them (6% of `explain`'s time). Nothing changes them once made.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from k8s_wiretap.capture import records
from k8s_wiretap.capture.format import AUDIT_LOG, QUERY_ABSENT, body_bytes
from k8s_wiretap.kube.agents import component_of
from k8s_wiretap.kube.requestinfo import RequestInfo, parse_request
from k8s_wiretap.once import once

__all__ = [
    "Body",
    "Client",
    "End",
    "EtcdChange",
    "Exchange",
    "Identity",
    "Request",
    "Response",
    "StreamEvent",
]

Headers = tuple[tuple[str, str], ...]


@dataclass(slots=True)
class Body:
    data: bytes
    size: int
    truncated: bool = False
    redacted: bool = False
    decoded: str | None = None

    @classmethod
    def from_record(cls, record: records.Body | None) -> Body | None:
        if not record:
            return None
        data = body_bytes(record)
        return cls(
            data,
            int(record.get("size", len(data))),
            bool(record.get("truncated")),
            bool(record.get("redacted")),
            record.get("decoded"),
        )


@dataclass(slots=True)
class StreamEvent:
    """A watch event, WebSocket message or upgraded-connection chunk, as it arrived."""

    seq: int
    time: float
    kind: str  # "watch", "websocket" or "tcp"
    data: Body
    from_client: bool = False
    incomplete: bool = False


@dataclass(frozen=True, slots=True)  # hashable: a client is a key (the TUI index)
class Client:
    """The client as the proxy saw it."""

    address: str = ""
    tls: bool = False
    alpn: str = ""
    certificate: str = ""  # the CN of the client certificate it presented, if any

    @classmethod
    def from_record(cls, record: records.Client | None) -> Client:
        record = record or {}
        return _client(
            str(record.get("address") or ""),
            bool(record.get("tls")),
            str(record.get("alpn") or ""),
            str(record.get("certificate") or ""),
        )


@dataclass(frozen=True, slots=True)  # hashable: a client is a key (the TUI index)
class Identity:
    """Who the request went upstream as, as far as the proxy can tell."""

    credential: str = "none"  # "none", "bearer token", "basic", "added by proxy"
    user: str = ""  # a JWT's unverified subject, or the kubeconfig identity the proxy added

    @classmethod
    def from_record(cls, record: records.Identity | None) -> Identity:
        record = record or {"credential": "none"}
        return _identity(str(record.get("credential") or "none"), str(record.get("user") or ""))


# Clients and identities repeat (a connection's requests, a component's credential), and
# a frozen dataclass is slow to make: each is made once and shared (they never change).
_client = lru_cache(maxsize=4096)(Client)
_identity = lru_cache(maxsize=1024)(Identity)


def _audit(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _headers(pairs: Any) -> Headers:
    return tuple([(str(k), str(v)) for k, v in pairs or ()])


def _names(headers: Headers) -> tuple[str, ...]:
    return tuple([key.lower() for key, _ in headers])


class _Headed:
    """A message with headers, looked up by name in any case, the first of a name winning.

    The names, lower-cased, are kept beside the headers as made (`names`): a message is
    asked for several (content type, user agent, kubectl's), and a tuple's `index` finds
    one faster than a dict is built (messages carry 2 to 9 headers).
    """

    __slots__ = ()
    headers: Headers
    names: tuple[str, ...]  # each subclass's __post_init__ sets them: `_names(headers)`

    def header(self, name: str) -> str:
        lowered = name.lower()
        names = self.names
        # `in` first: most asks are for a header the message lacks (kubectl's, a GET's
        # content type), and a ValueError raised and caught costs three lookups
        return self.headers[names.index(lowered)][1] if lowered in names else ""


@dataclass(slots=True)
class Request(_Headed):
    time: float
    method: str
    path: str
    headers: Headers = ()
    body: Body | None = None
    listener: str = "default"
    server: str = ""
    http_version: str = ""
    client: Client = field(default_factory=Client)
    identity: Identity = field(default_factory=Identity)
    unrecorded: bool = False  # only later records of the exchange were in the recording
    audit: dict[str, Any] | None = None  # the audit Event's facts (import audit, --join)
    names: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.names = _names(self.headers)

    @classmethod
    def from_record(cls, record: records.Request) -> Request:
        return cls(
            float(record.get("time") or 0.0),
            str(record.get("method") or ""),
            str(record.get("path") or ""),
            _headers(record.get("headers")),
            Body.from_record(record.get("body")),
            str(record.get("listener") or "default"),
            str(record.get("server") or ""),
            str(record.get("http_version") or ""),
            Client.from_record(record.get("client")),
            Identity.from_record(record.get("identity")),
            False,  # unrecorded: this is its request record
            _audit(record.get("audit")),
        )


@dataclass(slots=True)
class Response(_Headed):
    time: float
    status: int
    reason: str = ""
    http_version: str = ""
    headers: Headers = ()
    names: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.names = _names(self.headers)

    @classmethod
    def from_record(cls, record: records.Response) -> Response:
        return cls(
            float(record.get("time") or 0.0),
            int(record["status"]),
            str(record.get("reason") or ""),
            str(record.get("http_version") or ""),
            _headers(record.get("headers")),
        )


@dataclass(slots=True)
class End:
    """How the exchange ended: the response body, or the number of events, or an error."""

    time: float
    body: Body | None = None
    events: int | None = None
    error: str | None = None

    @classmethod
    def from_record(cls, record: records.End) -> End:
        events = record.get("events")
        return cls(
            float(record.get("time") or 0.0),
            Body.from_record(record.get("body")),
            int(events) if events is not None else None,
            str(record["error"]) if record.get("error") else None,
        )


@dataclass(slots=True)
class EtcdChange:
    """A change etcd itself recorded (an `etcd` record): what landed at `key`."""

    time: float
    key: str
    revision: int
    deleted: bool
    value: Body | None

    @classmethod
    def from_record(cls, record: records.Etcd) -> EtcdChange:
        return cls(
            float(record.get("time") or 0.0),
            str(record.get("key") or ""),
            int(record.get("revision") or 0),
            bool(record.get("deleted")),
            Body.from_record(record.get("value")),
        )


@dataclass(eq=False)
class Exchange:
    id: str
    request: Request
    response: Response | None = None
    end: End | None = None
    events: list[StreamEvent] = field(default_factory=list)

    @once  # the request never changes; asked a dozen times an exchange (its time order)
    def time(self) -> float:
        return self.request.time

    @property
    def method(self) -> str:
        return self.request.method

    @property
    def path(self) -> str:
        return self.request.path

    @once
    def info(self) -> RequestInfo:
        return parse_request(self.method, self.path)

    @property
    def status(self) -> int | None:
        return self.response.status if self.response else None

    @property
    def error(self) -> str | None:
        return self.end.error if self.end else None

    def request_header(self, name: str) -> str:
        # `_Headed.header`'s lookup, without its call: asked ten times an exchange
        request, lowered = self.request, name.lower()
        names = request.names
        return request.headers[names.index(lowered)][1] if lowered in names else ""

    def response_header(self, name: str) -> str:
        return self.response.header(name) if self.response else ""

    @once  # the request never changes; asked four times an exchange
    def user_agent(self) -> str:
        return self.request_header("user-agent")

    @property
    def audit_only(self) -> bool:
        """Whether the exchange comes from an audit log alone (`import audit`): the API
        server logged it; its client's watch events are nowhere in the recording."""
        return self.request.identity.credential == AUDIT_LOG

    @property
    def query_unknown(self) -> bool:
        """Whether the request's query string is not known (an import whose source keeps
        none, GKE's Cloud Logging entries): its parameters are not absent, only unsaid."""
        audit = self.request.audit
        return audit is not None and QUERY_ABSENT in (audit.get("absent") or ())

    @once
    def component(self) -> str:
        request = self.request
        return component_of(
            self.user_agent, request.listener, request.identity.user, request.client.certificate
        )

    @property
    def request_body(self) -> Body | None:
        return self.request.body

    @property
    def response_body(self) -> Body | None:
        return self.end.body if self.end else None

    def watch_events(self) -> list[StreamEvent]:
        if not self.events:  # most exchanges: asked several times each
            return []
        return [e for e in self.events if e.kind == "watch"]
