"""One line per exchange: time, component, verb, path, status.

What `explain --format lines` prints, and `proxy --no-tui` as traffic passes (console.py).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.wire.controls import escape_controls
from k8s_wiretap.wire.words import counted

__all__ = ["HASH_SHOWN", "clock", "exchange_line", "shown_path", "spans_days"]

HASH_SHOWN = 12  # hex digits of a `?hash=` kept on screen
# an OpenAPI v3 document's address carries its content's hash, 128 hex digits (SHA-512):
# `/openapi/v3/apis/apps/v1?hash=D9D9…&timeout=32s` (the server's `serverRelativeURL`)
_HASH = re.compile(rf"([?&]hash=[0-9A-Fa-f]{{{HASH_SHOWN}}})[0-9A-Fa-f]+")


def clock(timestamp: float, *, dated: bool = False) -> str:
    """A Unix time as the local wall clock, to the millisecond: "14:03:07.125"; `dated`,
    with its date before it: "2026-12-03 14:03:07.125"."""
    shape = "%Y-%m-%d %H:%M:%S.%f" if dated else "%H:%M:%S.%f"
    return dt.datetime.fromtimestamp(timestamp).strftime(shape)[:-3]


def spans_days(times: Iterable[float]) -> bool:
    """Whether `times` fall on more than one day (local time): their lines then carry their
    dates, so that a line of the next day does not seem to go back in time."""
    every = list(times)
    if not every:
        return False
    return clock(min(every), dated=True)[:10] != clock(max(every), dated=True)[:10]


def shown_path(path: str) -> str:
    """A request's path as a person reads it: a `hash=` longer than `HASH_SHOWN` hex
    digits cut to its first ones and "…" (the recording keeps it whole)."""
    return _HASH.sub(r"\1…", path) if "hash=" in path else path


def exchange_line(exchange: Exchange, *, dated: bool = False) -> str:
    """The exchange on one line, its wire text's control characters escaped; `dated`, its
    time with its date."""
    status = exchange.status
    outcome = str(status) if status is not None else "no response"
    if exchange.error:
        outcome += f" ({exchange.error})"
    events = exchange.watch_events()
    watched = events or exchange.info.verb == "watch"
    streamed = f" [{counted(len(events), 'watch event')}]" if watched else ""
    return escape_controls(
        f"{clock(exchange.time, dated=dated)} {exchange.component:<32} {exchange.info.verb:<16} "
        f"{exchange.method} {shown_path(exchange.path)} {outcome}{streamed}"
    )
