"""The console view (`proxy --no-tui`): one line per exchange, from the real records."""

from __future__ import annotations

import io

from k8s_wiretap.views.console import ConsoleOutput
from tests.recorded import records_of, story

NOTE = {"record": "note", "time": 1764413179.0, "level": "error", "message": "upstream gone"}


def test_a_finished_watch_counts_the_events_it_carried() -> None:
    watches = [e for e in story().exchanges if e.info.verb == "watch" and e.end and e.end.events]
    assert watches
    for watch in watches[:20]:
        out = io.StringIO()
        console = ConsoleOutput(out)
        for record in records_of(watch.id):
            console.write(record)
        opened, closed = out.getvalue().splitlines()
        assert opened.endswith(" (open)") and "[0 watch events]" in opened
        assert watch.end is not None and watch.end.events is not None
        events = f"{watch.end.events} watch event" + ("s" if watch.end.events != 1 else "")
        assert closed.endswith(f"[{events}]"), closed


def test_one_line_per_exchange_and_every_note() -> None:
    exchange = next(e for e in story().exchanges if e.method == "PATCH")
    out = io.StringIO()
    console = ConsoleOutput(out)
    for record in [*records_of(exchange.id), NOTE]:
        console.write(record)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert f"PATCH {exchange.path} 200" in lines[0]
    assert exchange.component in lines[0]
    assert lines[1].endswith("error: upstream gone")


def test_the_console_forgets_what_has_ended() -> None:
    console = ConsoleOutput(io.StringIO())
    first = story().exchanges[:50]
    assert all(e.end is not None for e in first)
    for exchange in first:
        for record in records_of(exchange.id):
            console.write(record)
    assert console._assembler.holding == 0  # it keeps nothing it has finished with
    assert console._assembler.exchanges == []
