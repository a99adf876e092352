"""What a partition costs the pool it runs on, beside its own work: `python -m bench
dask_overhead [--tasks 2000] [--trips 200] [--big 40] [--big-mb 8] [--workers 2]`.

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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench dask_overhead")
    parser.add_argument("--tasks", type=int, default=2000, help="small tasks at once")
    parser.add_argument("--trips", type=int, default=200, help="small tasks one by one")
    parser.add_argument("--big", type=int, default=40, help="tasks of a big result")
    parser.add_argument("--big-mb", type=int, default=8, help="MB of a big result")
    parser.add_argument("--workers", type=int, default=2, help="Dask workers (one thread)")
    parser.add_argument("--rounds", type=int, default=3, help="runs, the median reported")
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


if __name__ == "__main__":
    main(sys.argv[1:])
