"""One line per exchange: time, component, verb, path, status.

What `explain --format lines` prints, and `proxy --no-tui` as traffic passes (console.py).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.wire.controls import escape_controls
from k8s_wiretap.wire.words import counted

__all__ = ["clock", "exchange_line", "spans_days"]


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
        f"{exchange.method} {exchange.path} {outcome}{streamed}"
    )
