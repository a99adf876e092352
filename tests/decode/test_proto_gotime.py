"""Times and durations render as Go writes them; the tables are Go's own output."""

from __future__ import annotations

import pytest

from k8s_wiretap.decode.proto_gotime import format_duration, format_micro_time, format_time

DURATIONS = [
    (0, "0s"),
    (1, "1ns"),
    (999, "999ns"),
    (1000, "1µs"),
    (1001, "1.001µs"),
    (1500, "1.5µs"),
    (999999, "999.999µs"),
    (1000000, "1ms"),
    (1500000, "1.5ms"),
    (999999999, "999.999999ms"),
    (1000000000, "1s"),
    (1500000000, "1.5s"),
    (59999999999, "59.999999999s"),
    (60000000000, "1m0s"),
    (3600000000000, "1h0m0s"),
    (3661000000001, "1h1m1.000000001s"),
    (90061000000000, "25h1m1s"),
    (-1, "-1ns"),
    (-1500000, "-1.5ms"),
    (-3600000000000, "-1h0m0s"),
    (-9223372036854775808, "-2562047h47m16.854775808s"),
    (9223372036854775807, "2562047h47m16.854775807s"),
]

TIMES = [
    (0, "1970-01-01T00:00:00Z"),
    (1, "1970-01-01T00:00:01Z"),
    (-1, "1969-12-31T23:59:59Z"),
    (1609556645, "2021-01-02T03:04:05Z"),
    (951782400, "2000-02-29T00:00:00Z"),
    (4102444800, "2100-01-01T00:00:00Z"),
    (253402300799, "9999-12-31T23:59:59Z"),
    (253402300800, "10000-01-01T00:00:00Z"),
    (-62135596800, None),  # time.Time{}: null
    (-62135596801, "0000-12-31T23:59:59Z"),
    (-62198755200, "-0001-01-01T00:00:00Z"),
    (32503680000, "3000-01-01T00:00:00Z"),
]

MICRO_TIMES = [
    (0, 0, "1970-01-01T00:00:00.000000Z"),
    (1609556645, 123456789, "2021-01-02T03:04:05.123456Z"),
    (1609556645, 1000, "2021-01-02T03:04:05.000001Z"),
    (1609556645, 999, "2021-01-02T03:04:05.000000Z"),
    (-62135596800, 0, None),
    (-62135596800, 1000, "0001-01-01T00:00:00.000001Z"),
    (0, -1, "1969-12-31T23:59:59.999999Z"),
    (0, 1500000000, "1970-01-01T00:00:01.500000Z"),
]


@pytest.mark.parametrize(("nanoseconds", "text"), DURATIONS)
def test_duration(nanoseconds: int, text: str) -> None:
    assert format_duration(nanoseconds) == text


@pytest.mark.parametrize(("seconds", "text"), TIMES)
def test_time(seconds: int, text: str | None) -> None:
    assert format_time(seconds) == text


@pytest.mark.parametrize(("seconds", "nanos", "text"), MICRO_TIMES)
def test_micro_time(seconds: int, nanos: int, text: str | None) -> None:
    assert format_micro_time(seconds, nanos) == text
