"""`--jobs N` / `--dask ADDRESS` (commands/jobs.py): one job runs the partitions in this
process, N jobs in N other processes, Dask on a real scheduler's workers (the session's
`dask_cluster`); whichever, the results come back in the order submitted and a partition's
exception reaches the caller as itself. Through the real command line (`import audit`,
`explain --format json`): a bad number of jobs, a scheduler nobody runs, and an interpreter
without Dask's distributed are each one line, exit 2."""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from k8s_wiretap.commands import jobs
from k8s_wiretap.paths import RECORDINGS
from tests.conftest import cli

SIZES = [5, 0, 3, 70_000, 1, 2, 9, 4, 0, 6, 8, 7]  # each result says which it was
AUDIT_LOG = RECORDINGS / "wide-session.audit.log.gz"


def _run(args: argparse.Namespace) -> tuple[jobs.Pool, list[tuple[int, bytes]]]:
    with jobs.pool(args) as found:
        futures = [found.executor.submit(jobs.probe, size) for size in SIZES]
        return found, [future.result() for future in futures]


def _raised(args: argparse.Namespace) -> BaseException:
    with jobs.pool(args) as found:
        future = found.executor.submit(jobs.probe, -1)
        error = future.exception(timeout=60)
        assert error is not None
        # the pool goes on after it: the next partition runs
        assert found.executor.submit(jobs.probe, 2).result(timeout=60)[1] == b"\0\0"
        return error


def _command_line(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


def test_one_job_runs_each_partition_here_in_order() -> None:
    found, results = _run(argparse.Namespace(jobs=1, dask=None))
    assert isinstance(found.executor, jobs.Inline)
    assert (found.workers, found.where) == (1, "1 job")
    assert [len(data) for _, data in results] == SIZES
    assert {pid for pid, _ in results} == {os.getpid()}
    assert all(data == bytes(len(data)) for _, data in results)


def test_one_jobs_exception_reaches_the_caller() -> None:
    error = _raised(argparse.Namespace(jobs=1, dask=None))
    assert isinstance(error, ValueError) and "negative count" in str(error)


def test_two_jobs_run_in_two_other_processes_in_order() -> None:
    found, results = _run(argparse.Namespace(jobs=2, dask=None))
    assert isinstance(found.executor, ProcessPoolExecutor)
    assert (found.workers, found.where) == (2, "2 jobs")
    assert [len(data) for _, data in results] == SIZES
    pids = {pid for pid, _ in results}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2


def test_a_jobs_exception_reaches_the_caller_from_its_process() -> None:
    error = _raised(argparse.Namespace(jobs=2, dask=None))
    assert isinstance(error, ValueError) and "negative count" in str(error)


def test_dask_runs_the_packages_function_on_the_workers_in_order(dask_cluster: str) -> None:
    found, results = _run(argparse.Namespace(jobs=None, dask=dask_cluster))
    assert found.workers == 2  # two workers of one thread each
    assert found.where == f"Dask at {dask_cluster}"
    assert [len(data) for _, data in results] == SIZES
    pids = {pid for pid, _ in results}
    assert os.getpid() not in pids
    for pid in pids:  # each a `dask worker` of this cluster's scheduler
        line = _command_line(pid)
        assert "worker" in line and dask_cluster in line, line


def test_a_dask_workers_exception_reaches_the_caller(dask_cluster: str) -> None:
    error = _raised(argparse.Namespace(jobs=None, dask=dask_cluster))
    assert isinstance(error, ValueError) and "negative count" in str(error)


def test_the_default_is_the_cores() -> None:
    parser = argparse.ArgumentParser()
    jobs.add_options(parser)
    args = parser.parse_args([])
    with jobs.pool(args) as found:
        assert found.workers == jobs.cores() == len(os.sched_getaffinity(0))


# The commands that take --jobs/--dask, each with an input it reads.
COMMANDS = {
    "import audit": lambda out: ["import", "audit", str(AUDIT_LOG), "-o", str(out)],
    "explain": lambda out: ["explain", "wide-session", "--format", "json"],
}


def _one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    return lines[0]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("jobs_given", ["0", "-3", "x", "1.5"])
def test_a_bad_number_of_jobs_is_one_line(command: str, jobs_given: str, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    said = _one_line(cli(*COMMANDS[command](out), f"--jobs={jobs_given}"))
    assert "--jobs" in said and f"{jobs_given!r} is not a number of jobs" in said, said
    assert not out.exists()


def _free_port() -> int:
    """A loopback port nobody listens on (bound and closed: the kernel gave it free)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# `--dask` on a log too small to split at the import's default, and on one it is told to
# split (its own `--partition-size`): asked for Dask, the import says it cannot reach it.
SPLIT = {"as it is": [], "split": ["--partition-size", "1m"]}


@pytest.mark.parametrize("split", SPLIT)
def test_a_dask_scheduler_nobody_runs_is_one_line(split: str, tmp_path: Path) -> None:
    address = f"tcp://127.0.0.1:{_free_port()}"
    out = tmp_path / "out.jsonl"
    said = _one_line(cli(*COMMANDS["import audit"](out), *SPLIT[split], "--dask", address))
    assert said.startswith("k8s-wiretap: cannot reach the Dask scheduler at " + address), said
    assert not out.exists()


# The CLI in an interpreter where `import distributed` fails (an entry of None in
# sys.modules is how Python says a module is not there): as without the `dask` extra.
WITHOUT_DISTRIBUTED = "import sys\nsys.modules['distributed'] = None\n"
RUN_CLI = (
    "import runpy\n"
    "sys.argv = ['k8s-wiretap', *sys.argv[1:]]\n"
    "runpy.run_module('k8s_wiretap', run_name='__main__', alter_sys=True)\n"
)


@pytest.mark.parametrize("split", SPLIT)
def test_dask_without_distributed_names_the_extra(split: str, tmp_path: Path) -> None:
    check = subprocess.run(
        [sys.executable, "-c", WITHOUT_DISTRIBUTED + "import distributed\n"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "ModuleNotFoundError" in check.stderr  # the wrapper does hide it
    out = tmp_path / "out.jsonl"
    address = f"tcp://127.0.0.1:{_free_port()}"
    command = [*COMMANDS["import audit"](out), *SPLIT[split], "--dask", address]
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_DISTRIBUTED + RUN_CLI, *command],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    said = _one_line(result)
    assert "--dask" in said and "pip install 'k8s-wiretap[dask]'" in said, said
    assert not out.exists()
