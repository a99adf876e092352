"""Go's renderings of time values, as metav1.Time, metav1.MicroTime and metav1.Duration emit them.

Time: `t.UTC().Format(time.RFC3339)` (whole seconds); MicroTime: RFC3339 with exactly six
fraction digits, truncated; Duration: Go's `time.Duration.String()` ("1h0m0s", "1.5s", "300ms",
"0s"). Years outside 1..9999 are written as Go writes them (at least four digits, "-" first
when negative), which Python's datetime cannot do, hence the civil-date arithmetic here.
"""

from __future__ import annotations

__all__ = ["ZERO_TIME_SECONDS", "format_duration", "format_micro_time", "format_time"]

# time.Time{}.Unix(): 0001-01-01T00:00:00Z, the zero Time that renders as null.
ZERO_TIME_SECONDS = -62135596800
DAY = 86400
NANOS = 1_000_000_000


def _civil(days: int) -> tuple[int, int, int]:
    """(year, month, day) of `days` since 1970-01-01, proleptic Gregorian (H. Hinnant)."""
    days += 719468
    era = days // 146097
    day_of_era = days - era * 146097
    year_of_era = (
        day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146096
    ) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    shifted_month = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * shifted_month + 2) // 5 + 1
    month = shifted_month + 3 if shifted_month < 10 else shifted_month - 9
    year = year_of_era + era * 400 + (1 if month <= 2 else 0)
    return year, month, day


def _year(year: int) -> str:
    return f"-{-year:04d}" if year < 0 else f"{year:04d}"


def _stamp(seconds: int) -> str:
    days, rest = divmod(seconds, DAY)
    year, month, day = _civil(days)
    hour, rest = divmod(rest, 3600)
    minute, second = divmod(rest, 60)
    return f"{_year(year)}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}"


def format_time(seconds: int) -> str | None:
    """metav1.Time from its protobuf seconds (nanos are dropped on decode); None for zero."""
    if seconds == ZERO_TIME_SECONDS:
        return None
    return _stamp(seconds) + "Z"


def format_micro_time(seconds: int, nanos: int) -> str | None:
    """metav1.MicroTime from protobuf seconds and nanos (time.Unix normalizes); None for zero."""
    total = seconds * NANOS + nanos
    seconds, nanos = divmod(total, NANOS)
    if seconds == ZERO_TIME_SECONDS and nanos == 0:
        return None
    return f"{_stamp(seconds)}.{nanos // 1000:06d}Z"


def _fraction(value: int, precision: int) -> tuple[str, int]:
    """Go's fmtFrac: ".digits" of value / 10**precision without trailing zeros, and the rest."""
    digits = ""
    printing = False
    for _ in range(precision):
        value, digit = divmod(value, 10)
        printing = printing or digit != 0
        if printing:
            digits = str(digit) + digits
    return ("." + digits if printing else ""), value


def format_duration(nanoseconds: int) -> str:
    """Go's time.Duration(nanoseconds).String()."""
    sign = "-" if nanoseconds < 0 else ""
    value = abs(nanoseconds)
    if value == 0:
        return "0s"
    if value < NANOS:
        unit, precision = (
            ("ns", 0) if value < 1000 else ("µs", 3) if value < 1_000_000 else ("ms", 6)
        )
        fraction, whole = _fraction(value, precision)
        return f"{sign}{whole}{fraction}{unit}"
    fraction, seconds = _fraction(value, 9)
    text = f"{seconds % 60}{fraction}s"
    minutes = seconds // 60
    if minutes:
        text = f"{minutes % 60}m{text}"
        hours = minutes // 60
        if hours:
            text = f"{hours}h{text}"
    return sign + text
