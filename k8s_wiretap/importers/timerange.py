"""The time range an audit import keeps (`import audit --since/--until`, docs/importing.md
"A time range"): an exchange is in it by its request's received time
(`requestReceivedTimestamp`), from `since` (kept) up to `until` (not kept), so that ranges
that meet split a log with nothing twice and nothing lost. Every stage of a request carries
that time, so an exchange is kept or skipped whole: one received inside the range and
answered after `until` (a watch that ran on) is kept with its end.

A value outside the range is skipped without being parsed when its text says its time by
itself (`skipped`): the value holds `requestReceivedTimestamp` once, as a JSON member (or
as one inside a JSON string, escaped: a CloudWatch message, a shipper's `log`) whose value
is an RFC 3339 time. Found by a byte search, not a parse: the search is a small part of what
parsing the value costs. Any other value (no such member: an older audit.k8s.io version, a
GKE entry; several: an EventList, a payload of many events) is parsed and its events kept
by the time the importer reads for each (`holds`).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

__all__ = ["KEY", "TimeRange", "moment", "received"]

KEY = b"requestReceivedTimestamp"
# the member's value after its key: `":"TIME"`, escaped (`\":\"TIME\"`) inside a string
_VALUE = re.compile(rb'\\?"[ \t]*:[ \t]*\\?"([0-9][0-9T:.,+\-Z ]{9,40}?)\\?"')
# a duration before now: 90s, 15m, 1h30m, 2d (seconds, minutes, hours, days)
_DURATION = re.compile(r"(?:[0-9]+[smhd])+")
_PART = re.compile(r"([0-9]+)([smhd])")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class TimeRange:
    """The received times kept: `since` <= time < `until` (POSIX seconds; None: no bound)."""

    since: float | None = None
    until: float | None = None

    def holds(self, when: float) -> bool:
        """Whether a request received at `when` is in the range."""
        if self.since is not None and when < self.since:
            return False
        return self.until is None or when < self.until

    def skipped(self, value: bytes) -> bool:
        """Whether the value (a line, an array's item) is outside the range by the time
        its text says (`received`), without parsing it; False when it says none."""
        when = received(value)
        return when is not None and not self.holds(when)


def received(value: bytes) -> float | None:
    """The `requestReceivedTimestamp` the text of one value holds, found by a byte search
    (POSIX seconds; a time without an offset is UTC, as the importer reads it); None when
    the text holds the member none or several times, or its value is no RFC 3339 time."""
    at = value.find(KEY)
    if at < 0:
        return None
    after = at + len(KEY)
    if value.find(KEY, after) >= 0:
        return None
    found = _VALUE.match(value, after)
    if found is None:
        return None
    try:
        parsed = dt.datetime.fromisoformat(found.group(1).decode("ascii"))
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=dt.UTC)
        return parsed.timestamp()
    except (ValueError, OverflowError):
        return None


def moment(text: str, now: float) -> float:
    """The time `text` says: an RFC 3339 time (a date alone is its midnight; no offset is
    UTC), or a duration before `now` (`90s`, `15m`, `1h30m`, `2d`). ValueError when neither."""
    if _DURATION.fullmatch(text):
        return now - sum(int(n) * _SECONDS[unit] for n, unit in _PART.findall(text))
    try:
        parsed = dt.datetime.fromisoformat(text)
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=dt.UTC)
        return parsed.timestamp()
    except (ValueError, OverflowError):
        raise ValueError(
            f"{text!r} is neither an RFC 3339 time (2026-12-03T19:46:04Z) nor a duration "
            "before now (90s, 15m, 1h30m, 2d)"
        ) from None
