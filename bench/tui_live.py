"""`k8s-wiretap replay --follow` while 1,000 exchanges a second arrive: is the UI still
responsive, and is anything lost?

The committed apply story's records (`--recording` for another) are appended, copy after
copy with fresh ids and the time of writing, to a plain recording at `--rate` exchanges a
second for `--seconds` (the request records are counted; every record of the story goes,
events and etcd too), in bursts every 20 ms as the proxy's recorder writes. The real
`ReplayApp` follows the file in a process of its own, on Textual's headless driver at
120x40. The figures:

- *key*: while the records arrive, the median (and worst) milliseconds from pressing `k`
  or `j` to the frame with the cursor on the row it moved to (`tui_first_screen.py`'s
  `key` column; one press every 0.5 s);
- *caught up*: seconds from the last write to every exchange in the list;
- *rows*, *ended*, *events*: what the list holds at the end, beside what was written.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from bench.explain_recording import default_recording
from bench.tui_first_screen import SIZE, _watch_screen
from k8s_wiretap.capture.reader import iter_records
from k8s_wiretap.views.tui.listing.exchange_list import ExchangeList

RATE, SECONDS, BURST = 1000, 20.0, 0.02


def _copies(source: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    records = list(iter_records(source, []))
    return records[0], records[1:]


def write(path: Path, source: Path, rate: int, seconds: float) -> dict[str, int]:
    """Append the story's records at `rate` exchanges a second; what was written."""
    _header, body = _copies(source)
    written = {"rows": 0, "events": 0, "ended": 0}
    started = time.monotonic()
    copy = position = 0
    with path.open("a") as out:
        while (elapsed := time.monotonic() - started) < seconds:
            due = int(min(elapsed + BURST, seconds) * rate)
            lines = []
            while written["rows"] < due or body[position]["record"] != "request":
                record = dict(body[position])
                if "id" in record:
                    record["id"] = f"{record['id']}-{copy}"
                record["time"] = time.time()
                kind = record["record"]
                written["rows"] += kind == "request"
                written["events"] += kind == "event"
                written["ended"] += kind == "end"
                lines.append(json.dumps(record, separators=(",", ":")))
                position += 1
                if position == len(body):
                    position, copy = 0, copy + 1
            if lines:
                out.write("\n".join(lines) + "\n")
                out.flush()
            time.sleep(max(0.0, BURST - (time.monotonic() - started - elapsed)))
    return written


async def _drive(path: Path, done: Path, marks: dict[str, Any]) -> None:
    from k8s_wiretap.views.tui import ReplayApp

    _watch_screen(marks)
    app = ReplayApp(path, follow=True)
    async with app.run_test(size=SIZE) as pilot:
        while not app.follow_mode.active:
            await asyncio.sleep(0.01)
        print("ready", flush=True)
        marks["key ms"] = await _keys(pilot, done, marks)
        expected = json.loads(done.read_text())
        finished = done.stat().st_mtime
        rows = app.index.rows

        def ended() -> int:  # from the column: a Row made for every row costs ~7 us each
            return sum(not math.isnan(end) for end in rows.ended)

        while len(rows) < expected["rows"] or ended() < expected["ended"]:
            await asyncio.sleep(0.05)
            if time.time() - finished > 120:
                break
        marks["caught up"] = time.time() - finished
        marks["rows"] = len(rows)
        marks["ended"] = ended()
        marks["events"] = sum(rows.events)
        marks["written"] = expected
        marks["explained"] = app.explained_count


async def _keys(pilot: Pilot[int], done: Path, marks: dict[str, Any]) -> list[float]:
    """Milliseconds from each key to its frame, one key every 0.5 s until the writer ends."""
    took, key = [], "k"
    rows = pilot.app.query_one(ExchangeList)
    while rows.count < 100:  # the first rows: something to move over
        await asyncio.sleep(0.01)
    while not done.exists():
        target = rows.cursor + (-1 if key == "k" else 1)
        marks.pop("cursor drawn", None)
        marks["cursor wanted"] = target
        started = time.perf_counter()
        task = asyncio.create_task(pilot.press(key))
        while "cursor drawn" not in marks and time.perf_counter() - started < 10:
            await asyncio.sleep(0.001)
        took.append((time.perf_counter() - started) * 1000)
        await task
        key = "j" if key == "k" else "k"
        await asyncio.sleep(0.5)
    return took


def child(path: Path, done: Path) -> None:
    marks: dict[str, Any] = {}
    asyncio.run(_drive(path, done, marks))
    print(json.dumps(marks), flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recording", type=Path, default=None, help="the recording repeated")
    parser.add_argument("--rate", type=int, default=RATE, help="exchanges a second")
    parser.add_argument("--seconds", type=float, default=SECONDS)
    parser.add_argument("--child", nargs=2, type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv or [])
    if args.child is not None:
        child(*args.child)
        return
    source = args.recording or default_recording()
    with tempfile.TemporaryDirectory(prefix="k8s-wiretap-bench-") as folder:
        path, done = Path(folder) / "live.jsonl", Path(folder) / "done.json"
        header, _body = _copies(source)
        path.write_text(json.dumps(header) + "\n")
        command = [sys.executable, "-m", "bench.tui_live", "--child", str(path), str(done)]
        app = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert app.stdout is not None
        assert app.stdout.readline().strip() == "ready"
        written = write(path, source, args.rate, args.seconds)
        done.write_text(json.dumps(written))
        marks = json.loads(app.stdout.read().strip().splitlines()[-1])
        _, _status, usage = os.wait4(app.pid, 0)
        size = path.stat().st_size
    report(args, source, marks, size, usage.ru_maxrss * 1024)


def report(
    args: argparse.Namespace, source: Path, marks: dict[str, Any], size: int, peak: int
) -> None:
    keys, written = marks["key ms"], marks["written"]
    print(
        f"replay --follow, {args.rate:,} exchanges/s of {source.name} for {args.seconds:.0f} s "
        f"({size / 1e6:,.0f} MB), {SIZE[0]}x{SIZE[1]}, {os.cpu_count()} cores"
    )
    print("| key ms, median (worst) | caught up | rows | ended | events | explained | peak RSS |")
    print("|---|---|---|---|---|---|---|")
    print(
        f"| {statistics.median(keys):.0f} ({max(keys):.0f}) of {len(keys)} | "
        f"{marks['caught up']:.1f} s | {marks['rows']:,} of {written['rows']:,} | "
        f"{marks['ended']:,} of {written['ended']:,} | {marks['events']:,} of "
        f"{written['events']:,} | {marks['explained']:,} | {peak / 1e6:,.0f} MB |"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
