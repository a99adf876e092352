"""What a partition costs the pool it runs on, beside its own work: `python -m bench
dask_overhead [--tasks 2000] [--trips 200] [--big 40] [--big-mb 8] [--workers 2]
[--log LOG]`.

A partition of `import audit` or `explain` is a call of a module-level function of this
package, given a small description of its part and giving back bytes. Here that call does
nothing (`commands.jobs.probe`: its process id and N zero bytes), so what is measured is
the pool's own cost, through `commands.jobs.pool` as the commands use it, for one job (in
this process), `--jobs 2` (a forkserver process pool) and `--dask` on a real cluster on
this machine (bench/daskcluster.py: `dask scheduler` and `--workers` one-thread `dask
worker` processes on loopback):

- *start*: seconds to get the pool and a first result (the processes started, or the
  client connected and the workers counted; the package imported where the task ran) and
  to shut the pool down;
- *µs a task*: `--tasks` partitions of 16 bytes submitted at once, their results taken in
  order: the wall clock over the tasks, which is what a command with many partitions pays
  a partition (the Dask scheduler handles one at a time, so with many workers this is the
  scheduler's overhead a partition); *client CPU*: this process's CPU over the tasks;
  on Dask, *sched CPU* and *workers CPU*: the scheduler's and the workers' (all of them)
  over the tasks, from each process's `os.times()` before and after (the scheduler's is
  the part no number of workers shares out);
- *round trip*: `--trips` partitions one after the other, each waited for: the latency;
- *big*: `--big` partitions whose result is `--big-mb` MB (8), submitted at once: seconds a
  task and the MB/s of results that reach the client (one job's are made in place).

Each figure is the median of `--rounds` runs (3), each after a warm-up of 20 tasks.

With `--log LOG` (an audit log: `python -m bench audit_import --keep DIR` builds one),
the commands themselves too, once each: `import audit LOG` and `explain --format json` of
its recording, with `--jobs 1` and then `--dask` on the cluster: their wall seconds, the
CPU seconds of every process (the command's, by `os.wait4`; the scheduler's and the
workers', by their `os.times()`, less what they spend idle, measured for 10 s before each
command), Dask's CPU over one job's (what the partitions' overlap
and the pool cost), the µs of CPU an event or exchange on Dask, and whether the outputs
are one job's (the recordings by `audit_import.same_recording`, the JSON by its SHA-1).
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.audit_import import Run, imported, run, same_recording
from bench.daskcluster import cluster
from k8s_wiretap.commands import jobs

SMALL = 16  # bytes of a small result

COLUMNS = [
    ("pool", 18),
    ("start s", 8),
    ("µs a task", 10),
    ("client CPU µs", 14),
    ("sched CPU µs", 13),
    ("workers CPU µs", 15),
    ("round trip ms", 14),
    ("big: s a task", 14),
    ("MB/s", 9),
]


def _tasks(found: jobs.Pool, count: int, size: int) -> tuple[float, float]:
    """`count` probes of `size` bytes submitted at once, results taken in order: wall and
    this process's CPU seconds."""
    started, cpu = time.perf_counter(), time.process_time()
    futures = [found.executor.submit(jobs.probe, size) for _ in range(count)]
    for future in futures:
        if len(future.result()[1]) != size:
            raise SystemExit(f"a probe of {size} bytes gave another size on {found.where}")
    return time.perf_counter() - started, time.process_time() - cpu


def _elsewhere(address: str | None) -> tuple[float, float]:
    """CPU seconds so far of the Dask scheduler at `address` and of all its workers (each
    process's `os.times()`, asked through a client of its own); none without Dask."""
    if address is None:
        return 0.0, 0.0
    distributed: Any = importlib.import_module("distributed")  # untyped
    client = distributed.Client(address, timeout=30, set_as_default=False)
    try:
        scheduler = client.run_on_scheduler(os.times)
        workers = client.run(os.times).values()
    finally:
        client.close()
    return scheduler[0] + scheduler[1], sum(w[0] + w[1] for w in workers)


def _trips(found: jobs.Pool, count: int) -> float:
    started = time.perf_counter()
    for _ in range(count):
        found.executor.submit(jobs.probe, SMALL).result()
    return time.perf_counter() - started


def measure(name: str, args: argparse.Namespace, options: argparse.Namespace) -> str:
    starts, per_task, cpus, trips, bigs = [], [], [], [], []
    schedulers, workers = [], []
    big = options.big_mb * 1_000_000
    for _ in range(options.rounds):
        started = time.perf_counter()
        with jobs.pool(args) as found:
            found.executor.submit(jobs.probe, SMALL).result()  # a process up, the package in
            opened = time.perf_counter() - started
            _tasks(found, 20, SMALL)  # warm: every worker's
            before = _elsewhere(args.dask)
            wall, cpu = _tasks(found, options.tasks, SMALL)
            after = _elsewhere(args.dask)
            schedulers.append((after[0] - before[0]) / options.tasks)
            workers.append((after[1] - before[1]) / options.tasks)
            per_task.append(wall / options.tasks)
            cpus.append(cpu / options.tasks)
            trips.append(_trips(found, options.trips) / options.trips)
            bigs.append(_tasks(found, options.big, big)[0] / options.big)
            closing = time.perf_counter()
        starts.append(opened + time.perf_counter() - closing)
    median: Callable[[list[float]], float] = statistics.median
    values = [
        name,
        f"{median(starts):.2f}",
        f"{median(per_task) * 1e6:,.0f}",
        f"{median(cpus) * 1e6:,.0f}",
        f"{median(schedulers) * 1e6:,.0f}" if args.dask else "-",
        f"{median(workers) * 1e6:,.0f}" if args.dask else "-",
        f"{median(trips) * 1e3:.2f}",
        f"{median(bigs):.3f}",
        f"{big / median(bigs) / 1e6:,.0f}" if args.jobs != 1 else "in place",
    ]
    return " ".join(f"{v:>{w}}" for v, (_, w) in zip(values, COLUMNS, strict=True))


COMMAND_COLUMNS = [
    ("command", 13),
    ("items", 8),
    ("1 job s", 8),
    ("1 job CPU", 10),
    ("Dask s", 7),
    ("client CPU", 11),
    ("sched CPU", 10),
    ("workers CPU", 12),
    ("CPU x", 6),
    ("µs/item", 8),
    ("=", 4),
]


IDLE_SECONDS = 10.0  # how long the idle cluster's own CPU is measured


def _idle(address: str) -> tuple[float, float]:
    """The CPU seconds a second that the scheduler and the workers spend idle (heartbeats,
    their event loops), over IDLE_SECONDS."""
    before, started = _elsewhere(address), time.perf_counter()
    time.sleep(IDLE_SECONDS)
    after, elapsed = _elsewhere(address), time.perf_counter() - started
    return (after[0] - before[0]) / elapsed, (after[1] - before[1]) / elapsed


def _pair(
    address: str, one: list[str], dask: list[str], folder: Path, said: Path, *, digest: bool
) -> tuple[Run, Run, float, float]:
    """`k8s-wiretap ONE` and `k8s-wiretap DASK` (stderr to `said`), each measured; and the
    scheduler's and the workers' CPU seconds over the second, less what they spend idle."""
    idle = _idle(address)
    first = run("-m", "k8s_wiretap", one, folder, said, digest=digest)
    before = _elsewhere(address)
    second = run("-m", "k8s_wiretap", dask, folder, said, digest=digest)
    after = _elsewhere(address)
    scheduler = after[0] - before[0] - idle[0] * second.seconds
    return first, second, scheduler, after[1] - before[1] - idle[1] * second.seconds


def commands(address: str, log: Path, folder: Path) -> list[str]:
    """`import audit LOG` and `explain` of its recording, one job against Dask: the CPU
    of every process (the command's, as `os.wait4` has it; the scheduler's and the
    workers', from their `os.times()`), its ratio to one job's, the µs an event (import)
    or an exchange (explain) on Dask, and whether the outputs are one job's (`=`)."""
    one_out, dask_out, said = folder / "one.jsonl", folder / "dask.jsonl", folder / "said.txt"
    importing = ["import", "audit", str(log), "--overwrite", "-o"]
    explaining = ["explain", str(one_out), "--format", "json"]
    one, dask, scheduler, workers = _pair(
        address,
        [*importing, str(one_out), "--jobs", "1"],
        [*importing, str(dask_out), "--dask", address],
        folder,
        said,
        digest=False,
    )
    exchanges, events = imported(said.read_text())
    rows = [
        ("import audit", events, one, dask, scheduler, workers, same_recording(one_out, dask_out))
    ]
    one, dask, scheduler, workers = _pair(
        address,
        [*explaining, "--jobs", "1"],
        [*explaining, "--dask", address],
        folder,
        said,
        digest=True,
    )
    rows.append(("explain", exchanges, one, dask, scheduler, workers, one.digest == dask.digest))
    lines = []
    for name, items, one, dask, scheduler, workers, same in rows:
        total = dask.cpu + scheduler + workers
        values = [
            name,
            f"{items:,}",
            f"{one.seconds:.1f}",
            f"{one.cpu:.1f}",
            f"{dask.seconds:.1f}",
            f"{dask.cpu:.1f}",
            f"{scheduler:.1f}",
            f"{workers:.1f}",
            f"{total / one.cpu:.2f}",
            f"{total / items * 1e6:,.0f}",
            "yes" if same else "NO",
        ]
        lines.append(
            " ".join(f"{v:>{w}}" for v, (_, w) in zip(values, COMMAND_COLUMNS, strict=True))
        )
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench dask_overhead")
    parser.add_argument("--tasks", type=int, default=2000, help="small tasks at once")
    parser.add_argument("--trips", type=int, default=200, help="small tasks one by one")
    parser.add_argument("--big", type=int, default=40, help="tasks of a big result")
    parser.add_argument("--big-mb", type=int, default=8, help="MB of a big result")
    parser.add_argument("--workers", type=int, default=2, help="Dask workers (one thread)")
    parser.add_argument("--rounds", type=int, default=3, help="runs, the median reported")
    parser.add_argument(
        "--log",
        type=Path,
        default=None,
        help="also import this audit log and explain its recording, one job and on Dask",
    )
    options = parser.parse_args(argv or [])
    print(
        f"a partition that does nothing (commands.jobs.probe), through commands.jobs.pool: "
        f"{options.tasks:,} tasks at once, {options.trips} one by one, {options.big} of "
        f"{options.big_mb} MB (big); the median of {options.rounds} rounds"
    )
    print(" ".join(f"{name:>{width}}" for name, width in COLUMNS))
    print(measure("1 job", argparse.Namespace(jobs=1, dask=None), options), flush=True)
    two = argparse.Namespace(jobs=2, dask=None)
    print(measure("--jobs 2", two, options), flush=True)
    with (
        tempfile.TemporaryDirectory(prefix="k8s-wiretap-dask-") as folder,
        cluster(Path(folder), workers=options.workers) as address,
    ):
        dask = argparse.Namespace(jobs=None, dask=address)
        print(measure(f"Dask, {options.workers} workers", dask, options), flush=True)
        if options.log is not None:
            print(
                f"\n{options.log.name}: import audit and explain --format json, --jobs 1 and "
                f"--dask on the {options.workers} workers; CPU seconds of every process; "
                "CPU x: Dask's over one job's"
            )
            print(" ".join(f"{name:>{width}}" for name, width in COMMAND_COLUMNS))
            for row in commands(address, options.log, Path(folder)):
                print(row, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
