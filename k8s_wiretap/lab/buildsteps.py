"""What every build of the lab's binaries does alike: one lock, steps that say what they run,
long steps that show progress, and an install that is all or nothing.

A build writes into a temporary folder beside its target and renames it into place while it
holds `<cache>/kube/build.lock`, so two builds racing produce one cache and the loser reuses it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from k8s_wiretap.errors import WiretapError

__all__ = ["BuildError", "SourceEdit", "apply_edits", "install", "lock", "run", "stream"]

HEARTBEAT_SECONDS = 30


class BuildError(WiretapError):
    """The build could not run or failed; the message says which step and why."""


@dataclass(frozen=True)
class SourceEdit:
    """Replace `old` by `new` in one file of a source tree; `old` must be there. With `old`
    empty, `new` is a file of its own, which must not exist yet."""

    path: str
    old: str
    new: str


def apply_edits(tree: Path, edits: Iterable[SourceEdit]) -> None:
    """Make each edit in `tree`; BuildError naming the first that no longer fits."""
    for edit in edits:
        path = tree / edit.path
        if not edit.old:
            if path.exists() or not path.parent.is_dir():
                raise BuildError(f"source edit no longer applies: cannot add {edit.path}")
            path.write_text(edit.new)
            continue
        text = path.read_text() if path.is_file() else ""
        if edit.old not in text:
            raise BuildError(f"source edit no longer applies to {edit.path}: {edit.old!r}")
        path.write_text(text.replace(edit.old, edit.new, 1))


@contextmanager
def lock(path: Path, out: TextIO) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if missing), saying so when it must wait."""
    with path.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print("another build is running; waiting for it to finish", file=out, flush=True)
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def run(
    argv: list[str],
    out: TextIO,
    step: str,
    ok: Callable[[int, str], bool] = lambda status, stdout: False,
    **kwargs: object,
) -> str:
    """Run one short step; its stdout, or BuildError with the last lines of its output
    (unless `ok(status, stdout)` takes the failure as an answer of its own)."""
    print(f"[build] {step}: {' '.join(argv)}", file=out, flush=True)
    result = subprocess.run(argv, capture_output=True, text=True, check=False, **kwargs)  # type: ignore[call-overload]
    if result.returncode != 0 and not ok(result.returncode, result.stdout):
        raise _failed(step, result.returncode, (result.stdout + result.stderr).splitlines(), out)
    output: str = result.stdout
    return output


def _failed(step: str, status: int, lines: list[str], out: TextIO) -> BuildError:
    """The error of a failed step: its last lines go to `out`, the last one into the one-line
    message (Go and make say what went wrong last)."""
    shown = [line.rstrip() for line in lines if line.strip()][-15:]
    for line in shown:
        print(f"[build] | {line}", file=out, flush=True)
    reason = shown[-1].strip() if shown else "no output"
    return BuildError(f"{step} failed (exit {status}): {reason}")


def stream(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    out: TextIO,
    step: str,
    show: Callable[[str], bool] = lambda line: False,
    unit: str = "lines of output",
) -> float:
    """Run a long step: echo the lines `show` picks, and every 30 s how long it has run and
    how many lines it has printed so far (`unit`: each line of `go build -v` is a package
    compiled). Returns the seconds it took; BuildError with its last lines if it fails."""
    started = time.monotonic()
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    done = threading.Event()
    count = [0]
    threading.Thread(
        target=_heartbeat, args=(done, started, f"{step}", unit, count, out), daemon=True
    ).start()
    lines: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        count[0] += 1
        lines = [*lines[-29:], line.rstrip()]
        if show(line):
            print(f"[build] {line.rstrip()}", file=out, flush=True)
    done.set()
    if proc.wait() != 0:
        raise _failed(step, proc.returncode, lines, out)
    seconds = time.monotonic() - started
    print(f"[build] {step}: done in {seconds:.0f} s", file=out, flush=True)
    return seconds


def _heartbeat(
    done: threading.Event, started: float, step: str, unit: str, count: list[int], out: TextIO
) -> None:
    while not done.wait(HEARTBEAT_SECONDS):
        elapsed = int(time.monotonic() - started)
        print(
            f"[build] {step}: {elapsed // 60}m{elapsed % 60:02d}s, {count[0]} {unit} so far",
            file=out,
            flush=True,
        )


def install(built: Path, names: Iterable[str], target: Path, out: TextIO) -> Path:
    """Copy `names` from `built` into `target/bin` through a temporary folder and one rename;
    returns `target/bin`. The caller holds the build lock."""
    staging = target.parent / f"{target.name}.tmp-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "bin").mkdir(parents=True)
    for name in names:
        if not (built / name).is_file():
            raise BuildError(f"the build made no {name} in {built}")
        shutil.copy2(built / name, staging / "bin" / name)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    print(f"[build] binaries in {target / 'bin'}", file=out, flush=True)
    return target / "bin"
