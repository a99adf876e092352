"""The exchange: one request, its response, and what streamed through it.

This is what every later stage consumes (decoders, explanations, views); it is assembled
from a recording's records by `reader.py`, never from proxy objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from k8s_wiretap.capture.format import body_bytes
from k8s_wiretap.kube.agents import component_of
from k8s_wiretap.kube.requestinfo import RequestInfo, parse_request

__all__ = ["Body", "Exchange", "StreamEvent"]


@dataclass(frozen=True)
class Body:
    data: bytes
    size: int
    truncated: bool = False
    redacted: bool = False
    decoded: str | None = None

    @classmethod
    def from_record(cls, record: dict[str, Any] | None) -> Body | None:
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


@dataclass(frozen=True)
class StreamEvent:
    """A watch event, WebSocket message or upgraded-connection chunk, as it arrived."""

    seq: int
    time: float
    kind: str  # "watch", "websocket" or "tcp"
    data: Body
    from_client: bool = False
    incomplete: bool = False


def _header(headers: list[list[str]], name: str) -> str:
    return next((v for k, v in headers if k.lower() == name), "")


@dataclass
class Exchange:
    id: str
    request: dict[str, Any]
    response: dict[str, Any] | None = None
    end: dict[str, Any] | None = None
    events: list[StreamEvent] = field(default_factory=list)

    @property
    def time(self) -> float:
        return float(self.request["time"])

    @property
    def method(self) -> str:
        return str(self.request["method"])

    @property
    def path(self) -> str:
        return str(self.request["path"])

    @cached_property
    def info(self) -> RequestInfo:
        return parse_request(self.method, self.path)

    @property
    def status(self) -> int | None:
        return int(self.response["status"]) if self.response else None

    @property
    def error(self) -> str | None:
        return self.end.get("error") if self.end else None

    def request_header(self, name: str) -> str:
        return _header(self.request["headers"], name.lower())

    def response_header(self, name: str) -> str:
        return _header(self.response["headers"], name.lower()) if self.response else ""

    @property
    def user_agent(self) -> str:
        return self.request_header("user-agent")

    @property
    def component(self) -> str:
        return component_of(self.user_agent, str(self.request.get("listener", "")))

    @property
    def request_body(self) -> Body | None:
        return Body.from_record(self.request.get("body"))

    @property
    def response_body(self) -> Body | None:
        return Body.from_record(self.end.get("body")) if self.end else None

    def watch_events(self) -> list[StreamEvent]:
        return [e for e in self.events if e.kind == "watch"]
