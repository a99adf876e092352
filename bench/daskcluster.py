"""A real Dask cluster on this machine, for the tests (tests/conftest.py `dask_cluster`) and
the benchmarks (bench/dask_overhead.py): `dask scheduler` and N `dask worker --nthreads 1`
processes from this virtualenv's bin, on loopback, no dashboards.

`cluster(folder, workers=2)` starts them and yields the scheduler's address once it has
its N workers, then stops them whatever happened in its block: SIGTERM to each process's
own process group (a worker first, the scheduler last), SIGKILL past a grace period, and
it waits until no process of those groups is left. Besides, each process is started with
the kernel's parent-death signal (`PR_SET_PDEATHSIG`, SIGTERM: the test run killed outright
takes them with it) and the workers with `--death-timeout` (a worker whose scheduler is
gone stops by itself).

The scheduler listens on port 0 (a free port, chosen by the kernel) and writes its address
to a scheduler file, which is how the address is found: no port is guessed. The workers
run this checkout's package (PYTHONPATH starts with its root), and `--no-nanny` (one
process a worker: a nanny would restart a worker the tests or a benchmark killed, and
doubles the processes on a small machine).
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]  # the checkout: the workers import its package
BIN = Path(sys.executable).parent  # this virtualenv's bin, where `dask` is
START_TIMEOUT = 60.0  # seconds for the scheduler's file and then its workers
STOP_GRACE = 10.0  # seconds after SIGTERM before SIGKILL
PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, before exec
    """In the child before exec: SIGTERM when the process that started it ends."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _start(command: list[str], log: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    with log.open("wb") as out:
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=log.parent,
            start_new_session=True,  # a group of its own, so that stopping it stops all of it
            preexec_fn=_die_with_parent,
        )


def _alive(group: int) -> bool:
    """Whether any process of process group `group` is left (zombies reaped by init)."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a pid reused by someone else's group
        return False
    return True


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to `process`'s group, SIGKILL after STOP_GRACE, until none of it is left."""
    group = process.pid  # start_new_session: the leader's pid is the group's id
    for sent, grace in ((signal.SIGTERM, STOP_GRACE), (signal.SIGKILL, STOP_GRACE)):
        if process.poll() is None or _alive(group):
            with suppress(ProcessLookupError):
                os.killpg(group, sent)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            continue
        deadline = time.monotonic() + grace
        while _alive(group) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not _alive(group):
            return
    raise RuntimeError(f"process group {group} ({process.args!r}) outlived SIGKILL")


def _said(log: Path) -> str:
    return log.read_text(errors="replace")[-3000:] if log.exists() else ""


def _scheduler_address(file: Path, process: subprocess.Popen[bytes], log: Path) -> str:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"dask scheduler exited ({process.returncode}):\n{_said(log)}")
        try:
            address = json.loads(file.read_text())["address"]
        except (OSError, ValueError, KeyError):
            time.sleep(0.1)
            continue
        return str(address)
    raise RuntimeError(f"dask scheduler wrote no address in {START_TIMEOUT:.0f} s:\n{_said(log)}")


def _wait_for_workers(address: str, workers: int) -> None:
    distributed: Any = importlib.import_module("distributed")  # untyped
    client = distributed.Client(address, timeout=START_TIMEOUT, set_as_default=False)
    try:
        client.wait_for_workers(workers, timeout=START_TIMEOUT)
    finally:
        client.close()


@contextmanager
def cluster(folder: Path, workers: int = 2) -> Iterator[str]:
    """A scheduler and `workers` one-thread workers, their files and logs in `folder`;
    yields the scheduler's address (tcp://127.0.0.1:PORT)."""
    folder.mkdir(parents=True, exist_ok=True)
    dask = str(BIN / "dask")
    file = folder / "scheduler.json"
    file.unlink(missing_ok=True)
    with ExitStack() as stack:
        log = folder / "scheduler.log"
        scheduler = _start(
            [dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
             "--no-show", "--scheduler-file", str(file)],
            log,
        )  # fmt: skip
        stack.callback(stop, scheduler)  # the callbacks run last in, first out: it stops last
        address = _scheduler_address(file, scheduler, log)
        for number in range(workers):
            name = f"worker-{number}"
            process = _start(
                [dask, "worker", address, "--nthreads", "1", "--no-nanny", "--name", name,
                 "--host", "127.0.0.1", "--no-dashboard", "--death-timeout", "30",
                 "--local-directory", str(folder / name)],
                folder / f"{name}.log",
            )  # fmt: skip
            stack.callback(stop, process)
        try:
            _wait_for_workers(address, workers)
        except Exception as error:
            logs = "\n".join(_said(folder / f"worker-{n}.log") for n in range(workers))
            raise RuntimeError(f"the workers did not join {address}: {error}\n{logs}") from error
        yield address
