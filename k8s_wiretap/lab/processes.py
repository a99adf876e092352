"""Start lab processes detached, recognise them later, and stop them for good.

A process outlives the `lab up` that started it (its own session, output to a log file), so a
later `lab down` only has the pid. Pids get reused: a process is ours only when the pid's start
time (field 22 of /proc/<pid>/stat) is still the one recorded at start. Zombies count as gone.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["Process", "excerpt", "spawn", "tail"]

STOP_GRACE_SECONDS = 10.0


def _stat(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: split after it.
    return raw[raw.rindex(")") + 2 :].split()


def _start_time(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[19]) if fields else None


@dataclass(frozen=True)
class Process:
    """A started component process, as recorded in the lab's state file."""

    name: str
    pid: int
    start_time: int
    argv: list[str]
    log: str

    def alive(self) -> bool:
        fields = _stat(self.pid)
        if fields is None or fields[0] in ("Z", "X"):
            return False
        return int(fields[19]) == self.start_time

    def stop(self, grace: float = STOP_GRACE_SECONDS) -> bool:
        """SIGTERM its process group, SIGKILL after `grace` s. True if it was running."""
        if not self.alive():
            _reap(self.pid)
            return False
        self._signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        while self.alive() and time.monotonic() < deadline:
            _reap(self.pid)
            time.sleep(0.05)
        if self.alive():
            self._signal(signal.SIGKILL)
            while self.alive():
                _reap(self.pid)
                time.sleep(0.02)
        _reap(self.pid)
        return True

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, sig)  # its own session: the group id is its pid

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Process:
        return cls(**data)


def _reap(pid: int) -> None:
    """Collect the exit status if the process is our own child (else nothing to do)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def spawn(name: str, argv: list[str], log: Path, env: dict[str, str]) -> Process:
    """Start `argv` in its own session, stdout and stderr appended to `log`."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as output:
        popen = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            env={**os.environ, **env},
            start_new_session=True,
            close_fds=True,
        )
    start_time = _start_time(popen.pid)
    if start_time is None:  # exited at once; the caller sees it as not alive
        start_time = -1
    # The Popen object is dropped on purpose: the process outlives us; `_reap` collects it
    # if it dies while we are still its parent. Silence the "still running" warning.
    popen.returncode = 0
    return Process(name, popen.pid, start_time, argv, str(log))


def tail(path: Path | str, lines: int = 20) -> str:
    """The last `lines` lines of a log file ("" if it does not exist)."""
    return "\n".join(_read_end(path, 64 * 1024).splitlines()[-lines:])


# How Go components report what killed them: cobra's "Error: ...", klog's fatal
# "F1129 10:20:30.123456 ..." (followed by every goroutine's stack), a panic; klog's
# "E1129 ..." errors are the fallback (a healthy kubelet logs some of those too).
_FATAL = re.compile(r"^(Error:|F\d{4} |panic:)")
_ERROR = re.compile(r"^E\d{4} ")
_SCAN_BYTES = 4 * 1024 * 1024


def excerpt(path: Path | str, lines: int = 20) -> str:
    """The log's last lines, preceded by the line saying why it died when that is further up.

    A component that dies on a bad flag prints the error and then hundreds of lines of usage;
    a klog fatal is followed by thousands of lines of goroutine stacks. The error, not what
    follows it, is what the reader needs.
    """
    end = tail(path, lines)
    scanned = _read_end(path, _SCAN_BYTES).splitlines()
    for pattern in (_FATAL, _ERROR):
        found = [line for line in scanned if pattern.match(line)]
        if found:
            return end if found[-1] in end.splitlines() else f"{found[-1]}\n...\n{end}"
    return end


def _read_end(path: Path | str, size: int) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - size))
            return handle.read().decode(errors="replace")
    except OSError:
        return ""
