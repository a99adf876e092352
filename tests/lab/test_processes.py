"""Detached processes are recognised by pid and start time, and stopped for good."""

from __future__ import annotations

import dataclasses
import signal
from pathlib import Path

from k8s_wiretap.lab.processes import excerpt, spawn, tail
from tests.conftest import wait_until


def test_spawn_stop_and_identity(tmp_path: Path) -> None:
    process = spawn("sleeper", ["sleep", "600"], tmp_path / "sleeper.log", {})
    assert process.alive()
    impostor = dataclasses.replace(process, start_time=process.start_time + 1)
    assert not impostor.alive()  # same pid, other start time: a reused pid is not ours
    assert not impostor.stop()
    assert process.alive()
    assert process.stop()
    assert not process.alive()
    assert not process.stop()


def test_a_process_ignoring_sigterm_is_killed(tmp_path: Path) -> None:
    script = f"trap '' {signal.SIGTERM.value}; echo trapped; sleep 600 & wait"
    process = spawn("stubborn", ["sh", "-c", script], tmp_path / "stubborn.log", {})
    wait_until(lambda: "trapped" in tail(tmp_path / "stubborn.log"), 10, "the trap to be set")
    assert process.stop(grace=0.5)
    assert not process.alive()


def test_tail_returns_the_last_lines(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text("".join(f"line {i}\n" for i in range(100)))
    assert tail(log, 3) == "line 97\nline 98\nline 99"
    assert tail(tmp_path / "missing.log") == ""


def test_excerpt_brings_the_error_above_a_long_usage(tmp_path: Path) -> None:
    log = tmp_path / "scheduler.log"
    usage = "".join(f"      --flag-{i} string   help\n" for i in range(300))
    log.write_text(f"Error: unknown flag: --bogus\nUsage:\n{usage}")
    text = excerpt(log)
    assert text.startswith("Error: unknown flag: --bogus\n...\n")
    assert text.endswith("--flag-299 string   help")


def test_excerpt_prefers_the_fatal_line_over_errors_and_stacks(tmp_path: Path) -> None:
    log = tmp_path / "kubelet.log"
    stacks = "".join(f"goroutine {i} [running]:\n\tfile.go:{i}\n" for i in range(5000))
    log.write_text(
        "E1129 10:00:00.000 1 kubelet.go:1] image GC failed once\n"
        "F1129 10:00:01.000 1 server.go:188] listen unix /x: bind: invalid argument\n" + stacks
    )
    assert excerpt(log).startswith("F1129 10:00:01.000 1 server.go:188] listen unix /x")
    log.write_text("I1129 started\nE1129 10:00:00.000 1 x.go:1] cannot reach etcd\n")
    assert excerpt(log) == "I1129 started\nE1129 10:00:00.000 1 x.go:1] cannot reach etcd"
