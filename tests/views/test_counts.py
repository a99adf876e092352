"""A count agrees with its noun wherever one is printed: "1 event", "1 exchange", never
"1 events" (`wire.words.counted`, the one helper every view and command uses)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.views.console import ConsoleOutput
from k8s_wiretap.wire.words import counted
from tests.conftest import cli
from tests.recorded import records_of, story, story_records


def test_a_count_of_one_takes_the_singular() -> None:
    assert counted(1, "event") == "1 event"
    assert counted(0, "event") == "0 events"
    assert counted(2, "exchange") == "2 exchanges"
    assert counted(1_024, "exchange") == "1,024 exchanges"
    assert counted(1, "batch", "batches") == "1 batch"
    assert counted(3, "batch", "batches") == "3 batches"


def one_event_watch() -> Exchange:
    """A watch of the story that delivered exactly one event."""
    return next(
        e for e in story().exchanges if e.info.verb == "watch" and e.end and e.end.events == 1
    )


def recording_of(exchange: Exchange, path: Path) -> Path:
    """A recording holding the story's header and this one exchange."""
    lines = [story_records()[0], *records_of(exchange.id)]
    path.write_text("".join(json.dumps(record) + "\n" for record in lines))
    return path


def test_the_console_line_of_a_watch_with_one_event() -> None:
    out = io.StringIO()
    console = ConsoleOutput(out)
    for record in records_of(one_event_watch().id):
        console.write(record)
    closed = out.getvalue().splitlines()[-1]
    assert closed.endswith("[1 watch event]"), closed


def test_export_says_one_exchange_line(tmp_path: Path) -> None:
    recording = recording_of(story().exchanges[0], tmp_path / "one.jsonl")
    out = tmp_path / "one.txt"
    done = cli("export", str(recording), "--lines", str(out))
    assert done.returncode == 0, done.stderr
    assert len(out.read_text().splitlines()) == 1
    assert done.stderr == f"k8s-wiretap: 1 exchange line to {out}\n"
