"""`k8s-wiretap replay` over a large recording: time to the first screen, and peak memory.

The committed apply story (`--recording` for another) is repeated into a recording of
100,000 exchanges (`--sizes`), as `explain_recording.py` builds them: every record, each
copy with fresh ids and its times moved on. Each size is opened in a process of its own,
the real `ReplayApp` on Textual's headless driver at 120x40, and the figures are seconds
from starting that process (imports included) to:

- *first screen*: the list's last line on screen is rendered with a row, a screenful
  of rows (the index is still reading);
- *first detail*: the first exchange decoded and explained in the detail pane;
- *key*: then, while the index and the explanation still read the file, the median
  milliseconds from pressing `j` to the frame with the cursor on the next row (21 presses);
- *indexed*: every exchange in the list (the whole file read);
- *G detail*: after `G`, the last exchange explained (over its window of the file);
- *explained*: every row's summary (the explanation layer's stream, behind the index);
- *filter*: then the seconds from entering a filter (`FILTERS`: a component and a bare
  word, the costliest term: it looks in seven fields) to the list showing its matches,
  and whether the bottom line showed the filter's progress meanwhile (`--skip-explained`:
  without waiting for every summary, as soon as the file is indexed);

and the process's peak resident memory over all of it (`os.wait4`), with its resident
memory at the first screen.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from textual.pilot import Pilot
from textual.strip import Strip
from textual.widgets import Static

from bench.explain_recording import build, default_recording
from k8s_wiretap.views.tui import ReplayApp
from k8s_wiretap.views.tui.listing.exchange_list import ExchangeList

SIZES = (100_000,)
SIZE = (120, 40)
FILTERS = ("~c scheduler !~r leases", "web")


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _watch_screen(marks: dict[str, float]) -> None:
    """Mark the moment the list's last line on screen is first rendered with a row, and
    the moment the cursor's wanted row is rendered as the cursor."""
    render_line = ExchangeList.render_line

    def watched(self: ExchangeList, y: int) -> Strip:
        if "first screen" not in marks and y == self.size.height - 1 and self.count >= y:
            marks["first screen"], marks["first screen RSS"] = time.time(), _rss()
        wanted = marks.get("cursor wanted")
        if wanted is not None and self.cursor == wanted == self.scroll_offset.y + y - 1:
            marks["cursor drawn"] = time.time()
        return render_line(self, y)

    ExchangeList.render_line = watched  # type: ignore[method-assign]


async def _drive(path: Path, marks: dict[str, float], skip_explained: bool) -> None:
    _watch_screen(marks)
    app = ReplayApp(path)
    async with app.run_test(size=SIZE) as pilot:
        while "first screen" not in marks:
            await asyncio.sleep(0.005)
        while app.detail_pane.detail is None:
            await asyncio.sleep(0.005)
        marks["first detail"] = time.time()
        marks["key ms"] = await _key_latency(pilot, marks)
        while not app.index.done:
            await asyncio.sleep(0.02)
        await pilot.pause()
        marks["indexed"], marks["rows"] = time.time(), len(app.index)
        pressed = time.time()
        await pilot.press("G")
        last = app.index.rows[-1].id
        while app.detail_pane.detail is None or app.detail_pane.detail.exchange.id != last:
            await asyncio.sleep(0.005)
        marks["G detail"] = time.time() - pressed
        while not app.explained_all and not skip_explained:
            await asyncio.sleep(0.1)
        marks["explained"] = time.time()
        for number, text in enumerate(FILTERS):
            marks[f"filter {number}"], marks[f"progress {number}"] = await _filter(app, text)


async def _filter(app: ReplayApp, text: str) -> tuple[float, float]:
    """Seconds from entering filter `text` to the list showing its matches; how many
    different progress figures the bottom line showed meanwhile."""
    from k8s_wiretap.views.tui.filtering.filter_bar import FilterBar

    status = app.query_one("#filter-status", Static)
    seen: set[str] = set()
    started = time.time()
    app.on_filter_bar_applied(FilterBar.Applied(text))
    while True:
        shown = str(status.content)
        if "filtering" in shown:
            seen.add(shown)
        if not app.filtering:
            break
        await asyncio.sleep(0.005)
    await asyncio.sleep(0)
    return time.time() - started, float(len(seen))


async def _key_latency(pilot: Pilot[int], marks: dict[str, float], presses: int = 21) -> float:
    """The median milliseconds from pressing `j` to the list's frame with the cursor on
    the next row, while the workers read the file."""
    took = []
    rows = pilot.app.query_one(ExchangeList)
    for _ in range(presses):
        target = rows.cursor + 1
        marks.pop("cursor drawn", None)
        marks["cursor wanted"] = target
        started = time.perf_counter()
        task = asyncio.create_task(pilot.press("j"))
        while "cursor drawn" not in marks:
            await asyncio.sleep(0.001)
        took.append((time.perf_counter() - started) * 1000)
        await task
        await asyncio.sleep(0.05)
    return statistics.median(took)


def child(path: Path, skip_explained: bool) -> None:
    """The measured process: drive the app, print the moments as JSON."""
    marks: dict[str, float] = {}
    asyncio.run(_drive(path, marks, skip_explained))
    print(json.dumps(marks))


def measure(path: Path, skip_explained: bool = False) -> tuple[dict[str, float], int]:
    command = [sys.executable, "-m", "bench.tui_first_screen", "--child", str(path)]
    command += ["--skip-explained"] if skip_explained else []
    started = time.time()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        raise SystemExit(f"{' '.join(command)} failed ({status})")
    marks = json.loads(output)
    for name in ("first screen", "first detail", "indexed", "explained"):
        marks[name] -= started
    return marks, usage.ru_maxrss * 1024


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recording", type=Path, default=None, help="the recording repeated")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--keep", type=Path, default=None, help="build the files in this folder")
    parser.add_argument(
        "--skip-explained", action="store_true", help="filter without waiting for every summary"
    )
    parser.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv or [])
    if args.child is not None:
        child(args.child, args.skip_explained)
        return
    source = args.recording or default_recording()
    print(f"replay over repeated real exchanges ({source.name}), {SIZE[0]}x{SIZE[1]}, seconds")
    names = ["exchanges", "file MB", "first screen", "first detail", "key ms", "indexed"]
    names.append("G detail")
    names += ["explained", "RSS at first screen MB", "peak RSS MB"]
    names += [f"filter {text!r} s (progress shown)" for text in FILTERS]
    print(" | ".join(names))
    with tempfile.TemporaryDirectory(prefix="k8s-wiretap-bench-") as temporary:
        folder = args.keep or Path(temporary)
        for size in args.sizes:
            path = folder / f"replay-{size}.jsonl"
            if not path.exists():
                build(source, path, size)
            marks, peak = measure(path, args.skip_explained)
            filtered = [
                f"{marks[f'filter {n}']:.2f} ({marks[f'progress {n}']:.0f})"
                for n in range(len(FILTERS))
            ]
            print(
                f"{marks['rows']:,.0f} | {path.stat().st_size / 1e6:,.0f} | "
                f"{marks['first screen']:.2f} | {marks['first detail']:.2f} | "
                f"{marks['key ms']:.0f} | "
                f"{marks['indexed']:.1f} | {marks['G detail']:.2f} | {marks['explained']:.0f} | "
                f"{marks['first screen RSS'] / 1e6:,.0f} | {peak / 1e6:,.0f} | "
                + " | ".join(filtered),
                flush=True,
            )
            if args.keep is None:
                path.unlink()


if __name__ == "__main__":
    main(sys.argv[1:])
