"""`--jobs N` and `--dask ADDRESS`: where the partitions of a long command run.

`import audit` and `explain` split their input into partitions, each a small picklable
description of its part (a path, byte offsets, times), given to a module-level function
whose result is small too (bytes of bounded size, or a part file); the command puts the
results together in order, so that its output is byte for byte one job's whatever ran it.

- `--jobs N` (default: the cores this process may run on): N processes on this machine
  (a `ProcessPoolExecutor` started with `forkserver`, so a partition gets nothing from the
  command's process but its arguments, as on Dask); `--jobs 1` runs in this process.
  `pool(args, fork=True)` (Linux) forks the N processes from the command's own when the
  pool starts, while it runs no other thread and has opened no output: they have its
  code at once (a forkserver first imports it, some 0.2 s before the first partition
  starts) and hash str as it does, which `import audit`'s partitions use
  (`importers.partition`, `Part.salt`); a partition still uses nothing of the copied
  process but its code, and its arguments.
- `--dask ADDRESS`: a running Dask scheduler (`tcp://HOST:8786`). The partitions go to its
  workers through `distributed.Client(ADDRESS).get_executor()`; the workers must have this
  package installed (the same version) and read the input at the path the command was
  given (a volume shared by the client and the workers: docs/scale.md). Without the
  `dask` extra installed, or with no scheduler there, it is a one-line error, exit 2.

`Pool.workers` is how many partitions can run at once (the jobs, or the Dask workers'
threads), which the command uses to choose its partitions.
"""

from __future__ import annotations

import argparse
import importlib
import multiprocessing
import os
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from k8s_wiretap.errors import UsageError
from k8s_wiretap.host import cores

__all__ = ["Inline", "Pool", "add_options", "asked", "cores", "many", "pool", "probe"]

DASK_TIMEOUT = 10.0  # seconds to reach the scheduler before it is an error


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of jobs (1 or more)")
    return value


def add_options(parser: argparse.ArgumentParser, *, default: int | None = None) -> None:
    """`--jobs N` and `--dask ADDRESS` on a command's parser; `--jobs`'s default is
    `default` (None: the cores), which `pool` reads as `args.jobs`."""
    said = f"its cores, {cores()} here" if default is None else str(default)
    parser.add_argument(
        "--jobs",
        type=_jobs,
        default=default,
        metavar="N",
        help=f"processes to run on this machine (default: {said}); "
        "the output is the same whatever N",
    )
    parser.add_argument(
        "--dask",
        default=None,
        metavar="ADDRESS",
        help="run on the workers of the Dask scheduler at ADDRESS (tcp://HOST:8786), "
        "which read the input at the same path (docs/scale.md)",
    )


class Inline(Executor):
    """An executor that runs each call in this process, when it is submitted."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:  # the caller's result() raises it, as a pool's does
            future.set_exception(error)
        return future


@dataclass(frozen=True)
class Pool:
    """Where the partitions run: the executor, how many run at once, and a name for it."""

    executor: Executor
    workers: int
    where: str


def probe(size: int) -> tuple[int, bytes]:
    """A partition that does nothing: the process it ran in, and `size` zero bytes (a
    negative size is the ValueError of `bytes`). What the tests send to see where a pool
    runs its partitions, and bench/dask_overhead.py to measure a pool's own cost each."""
    return os.getpid(), bytes(size)


def asked(args: argparse.Namespace) -> int:
    """The jobs `--jobs` asks for (without it: the cores)."""
    return getattr(args, "jobs", None) or cores()


def many(args: argparse.Namespace) -> bool:
    """Whether the partitions may run elsewhere than in this process: `--dask`, or more
    than one job."""
    return bool(getattr(args, "dask", None)) or asked(args) > 1


@contextmanager
def pool(args: argparse.Namespace, *, fork: bool = False) -> Iterator[Pool]:
    """The pool `--jobs`/`--dask` ask for, shut down when the block ends; with `fork`,
    its processes forked from this one at once (see the module), on Linux, unless a
    thread runs here besides this one (a fork would copy its locks as they are)."""
    if getattr(args, "dask", None):
        with _dask(args.dask) as found:
            yield found
        return
    jobs = asked(args)
    if jobs == 1:
        yield Pool(Inline(), 1, "1 job")
        return
    forked = fork and sys.platform == "linux" and threading.active_count() == 1
    context = multiprocessing.get_context("fork" if forked else "forkserver")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as executor:
        if forked:  # a pool that forks makes every process at its first task, before
            executor.submit(os.getpid)  # its own thread starts: now, before the command's
        yield Pool(executor, jobs, f"{jobs} jobs")


@contextmanager
def _dask(address: str) -> Iterator[Pool]:
    try:  # untyped, and optional: the `dask` extra
        distributed: Any = importlib.import_module("distributed")
    except ImportError as error:
        raise UsageError(
            "--dask needs Dask's distributed: pip install 'k8s-wiretap[dask]'"
        ) from error
    try:
        client = distributed.Client(address, timeout=DASK_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as error:
        raise UsageError(f"cannot reach the Dask scheduler at {address}: {error}") from error
    try:
        threads = sum(client.nthreads().values())
        if threads == 0:
            raise UsageError(f"the Dask scheduler at {address} has no workers")
        yield Pool(client.get_executor(pure=False), threads, f"Dask at {address}")
    finally:
        client.close()
