"""The TUI's object timeline (`o`) on a large recording: time to show it, and memory.

The recorded history session (one Deployment changed by apply, scale, label, set image and
a server-side apply, with the controllers' status writes) is repeated into a recording of
100,000 exchanges (`--size`), as `explain_recording.py` builds them: each copy with fresh
ids and its times moved on (the same object, uid and resourceVersions in every copy: its
31 versions are each seen in every copy). It is opened in a process of its own, the real
`ReplayApp` on Textual's headless driver at 120x40; once every exchange is indexed and
explained (nothing else reading the file), in the middle copy:

- *detail*: the peer — seconds from selecting `kubectl scale`'s PATCH to its detail in
  the pane (its window of the file read and explained: what the list does on every row);
- *timeline*: from `o` on it to the timeline's versions filled (the object's rows found
  in the index, read back and analysed), and to the chain of the selected version's
  write in the pane below (over its window);
- *again*: `esc`, `o` once more: the object's history is kept;
- *field*: from `f` on the replicas change to its story filled;
- *alone*: the timeline's work (the object found, its history made) once more, afresh,
  called on the app's thread with nothing else running: what *timeline* costs without
  sharing the interpreter with the app's event loop;
- the process's resident memory before `o` and after, and its peak (`os.wait4`).

The keys' actions are called as the keys call them (`pilot.press` also waits for the
process to be idle, up to a second, which is not what a person waits for); each figure
runs up to the widgets filled (the next frame paints them).
Each figure is the median of `--rounds` processes.
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
import threading
import time
from pathlib import Path

from bench.explain_recording import build
from k8s_wiretap.views.tui import ReplayApp
from k8s_wiretap.views.tui.detail.object_rows import Timelines
from k8s_wiretap.views.tui.detail.object_timeline import TimelineScreen

SIZE = 100_000
SCREEN = (120, 40)
SESSION = Path(__file__).resolve().parents[1] / "recordings" / "history-session.jsonl.gz"


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def _wait(condition: object, pause: float = 0.01) -> float:
    """Seconds until `condition()` holds."""
    started = time.perf_counter()
    while not condition():  # type: ignore[operator]
        await asyncio.sleep(pause)
    return time.perf_counter() - started


def _shown(app: ReplayApp) -> bool:
    screen = app.screen
    return (
        isinstance(screen, TimelineScreen)
        and screen.history is not None
        and screen.versions.option_count > 0
    )


def _chained(app: ReplayApp) -> bool:
    """The pane below the changes says why, its causal chain found."""
    if not _shown(app):
        return False
    said = str(app.screen.query_one("#timeline-why").render())
    return "why:" in said and "finding the causal chain" not in said


async def _drive(path: Path, marks: dict[str, float]) -> None:
    app = ReplayApp(path)
    async with app.run_test(size=SCREEN) as pilot:
        await _wait(lambda: app.index.done and app.explained_all, 0.1)
        rows = app.index.rows
        scales = [
            n for n, r in enumerate(rows) if r.method == "PATCH" and r.resource.endswith("/scale")
        ]
        target = scales[len(scales) // 2]
        started = time.perf_counter()
        app.action_jump(target)
        detail = app.detail_pane
        await _wait(lambda: detail.detail is not None and detail.detail.position == target)
        marks["detail"] = time.perf_counter() - started
        await pilot.pause(0.3)
        marks["rss before"] = _rss()
        started = time.perf_counter()
        app.action_timeline()  # what `o` does (pilot.press waits for the process to idle)
        await _wait(lambda: _shown(app))
        marks["timeline"] = time.perf_counter() - started
        await _wait(lambda: _chained(app))
        marks["timeline chained"] = time.perf_counter() - started
        screen = app.screen
        assert isinstance(screen, TimelineScreen) and screen.history is not None
        marks["versions"] = len(screen.history.versions)
        marks["rows"] = len(app.timelines.rows_of(screen.history.ref))
        marks["rss after"] = _rss()
        await pilot.press("escape")
        await pilot.pause(0.3)
        started = time.perf_counter()
        app.action_timeline()
        await _wait(lambda: _chained(app))
        marks["again"] = time.perf_counter() - started
        screen = app.screen
        assert isinstance(screen, TimelineScreen)
        await pilot.press("tab", "j")  # the replicas change
        started = time.perf_counter()
        screen.action_field()  # what `f` does
        await _wait(lambda: screen.field is not None and screen.changes.option_count > 0)
        marks["field"] = time.perf_counter() - started
        marks["exchanges"] = len(app.index)
        await pilot.press("escape", "escape")
        alone = Timelines(app.index, app.windows, threading.Lock())
        started = time.perf_counter()  # the same work, on this thread, nothing else running
        ref = alone.object_at(target)
        assert not isinstance(ref, str)
        alone.history(ref)
        marks["alone"] = time.perf_counter() - started


def child(path: Path) -> None:
    marks: dict[str, float] = {}
    asyncio.run(_drive(path, marks))
    print(json.dumps(marks))


def measure(path: Path) -> tuple[dict[str, float], int]:
    command = [sys.executable, "-m", "bench.tui_object_history", "--child", str(path)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        raise SystemExit(f"{' '.join(command)} failed ({status})")
    return json.loads(output), usage.ru_maxrss * 1024


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recording", type=Path, default=SESSION, help="the recording repeated")
    parser.add_argument("--size", type=int, default=SIZE)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="build the file in this folder")
    parser.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv or [])
    if args.child is not None:
        child(args.child)
        return
    with tempfile.TemporaryDirectory(prefix="k8s-wiretap-bench-") as temporary:
        folder = args.keep or Path(temporary)
        path = folder / f"history-{args.size}.jsonl"
        if not path.exists():
            build(args.recording, path, args.size)
        runs = [measure(path) for _ in range(args.rounds)]
    marks = {name: statistics.median(m[name] for m, _ in runs) for name in runs[0][0]}
    peak = statistics.median(p for _, p in runs)
    detail = marks["detail"]
    print(
        f"object timeline over {marks['exchanges']:,.0f} exchanges ({args.recording.name} "
        f"repeated), {SCREEN[0]}x{SCREEN[1]}, median of {args.rounds}; the object: "
        f"{marks['versions']:.0f} versions in {marks['rows']:,.0f} of its rows"
    )
    print("figure | seconds | / detail")
    for name in ("detail", "timeline", "timeline chained", "again", "field", "alone"):
        print(f"{name} | {marks[name]:.3f} | {marks[name] / detail:.2f}x")
    print(
        f"RSS before o {marks['rss before'] / 1e6:,.0f} MB | after {marks['rss after'] / 1e6:,.0f}"
        f" MB | peak {peak / 1e6:,.0f} MB"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
