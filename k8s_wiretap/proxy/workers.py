"""`proxy --workers N`: N proxy processes on one listener, each recording its own part.

One Python process is one core: the proxy's event loop, its TLS and the recorder share one
interpreter lock. With `--workers N` (N > 1) the command becomes a supervisor that runs N
worker processes, each `python -m k8s_wiretap proxy ... --worker K:ID`, a whole wiretap
proxy of its own, listening on the same address with SO_REUSEPORT (`reuseport.py`): the
kernel spreads the connections over them, and a connection stays in its worker.

The supervisor does what must happen once, before any worker starts: the checks (the
recording's files, the ports, the credentials) and the CA; once every worker listens it
says "listening on", and asks each API server's `/version` (`server.ask_versions`) through
the listener. Each worker records to its own part of the recording (`capture/parts.py`:
`rec.jsonl`, `rec.jsonl.part-1`, …, said on stderr at the start), which readers merge by
time while the proxy runs; once every worker has stopped, the supervisor merges the parts
into `rec.jsonl` (`parts.join`), so the file the user named holds the whole recording.
A supervisor killed before it could (kill -9) leaves the parts, which readers still find
by that name. Only the first worker watches `--etcd`. With `--no-tui` the workers print
their lines to the shared stdout; their messages go to the supervisor, which passes them
on.

A worker that dies (killed by a signal: a crash, kill -9, the OOM killer) is said on
stderr and restarted, the others serving on meanwhile: the exchanges it had open get an
end ("proxy worker died") in its part, and the new worker records to the next free part
number. A worker that exits by itself (`--on-record-error exit`, an error it reported)
stops them all, and the supervisor exits with its status. SIGINT and SIGTERM stop every
worker as Ctrl-C stops one proxy (what is queued is written, every open exchange ends),
and the supervisor merges the parts and exits once all have. Workers run in a session of
their own, so a terminal's Ctrl-C reaches them once, through the supervisor; a worker
whose supervisor is gone (kill -9) stops by itself. A worker that has not stopped within
STOP_TIMEOUT seconds of the signal (`K8S_WIRETAP_STOP_TIMEOUT` sets another) is asked
for where its threads are (SIGUSR1: `faulthandler` prints their stacks on its stderr,
which the supervisor passes on), then killed, and said so: a stop that hangs says where.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from k8s_wiretap.capture import parts, records
from k8s_wiretap.capture.assemble import Assembler
from k8s_wiretap.capture.outputs import reason, recording_problem
from k8s_wiretap.capture.reader import RecordingError, file_records
from k8s_wiretap.errors import UsageError, WiretapError
from k8s_wiretap.proxy import reuseport
from k8s_wiretap.proxy.server import (
    ProxyServer,
    ProxySettings,
    announce,
    ask_versions,
    check_bounds,
)
from k8s_wiretap.wire.words import counted

__all__ = [
    "READY",
    "WORKER_DIED",
    "Supervisor",
    "close_open",
    "run_worker",
    "supervise",
    "worker_argv",
]

READY = "k8s-wiretap: worker listening"  # a worker's word to its supervisor, not passed on
WORKER_DIED = "proxy worker died"  # the error of the exchanges a dead worker left open
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0  # seconds a worker has to stop once signalled (K8S_WIRETAP_STOP_TIMEOUT)
STOP_TIMEOUT_ENV = "K8S_WIRETAP_STOP_TIMEOUT"
STACKS = signal.SIGUSR1  # a worker prints where its threads are (faulthandler)
STACKS_WAIT = 1.0  # seconds given to a worker that does not stop to print them
POLL = 0.1
ORPHAN_CHECK = 1.0  # seconds between a worker's looks at whether its supervisor is there
SUPERVISOR_ENV = "K8S_WIRETAP_SUPERVISOR"  # the supervisor's pid, for its workers
CRASH_WINDOW = 30.0  # a worker that dies this soon after it listened died early
CRASHES = 5  # early deaths in a row after which a slot is not restarted again


# -- the worker ---------------------------------------------------------------------------
def parse_worker(value: str) -> tuple[int, str]:
    """`--worker K:ID`: the part K this worker records, of recording ID."""
    part, _, recording = value.partition(":")
    if not part.isdigit() or not recording:
        raise UsageError(f"--worker {value!r}: expected PART:RECORDING")
    return int(part), recording


class WorkerServer(ProxyServer):
    """A proxy in a worker: the supervisor checked the ports and credentials (the others
    listen on the port already, which a check would take for a conflict) and announces."""

    def _prepare(self) -> None:
        check_bounds(self.settings)
        record = self.settings.record
        if record is not None:
            problem = recording_problem(record, overwrite=self.settings.overwrite, hint="")
            if problem:
                raise UsageError(f"--record: {problem}")

    def _announce(self) -> None:
        print(READY, file=sys.stderr, flush=True)


def run_worker(spec: str, settings: ProxySettings, workers: int) -> int:
    """Serve as worker `spec` (`--worker K:ID`) until SIGTERM, SIGINT or the supervisor's
    end: listening with SO_REUSEPORT, recording part K."""
    part, recording = parse_worker(spec)
    reuseport.install()
    if settings.record is not None:
        settings.header = parts.part_header(recording, part, workers if part == 0 else None)
        settings.record = parts.part_path(settings.record, part)
    settings.version_check = False
    faulthandler.register(STACKS, all_threads=True)  # a stop that hangs says where
    _stop_when_orphaned()
    WorkerServer(settings).serve()
    return 0


def _stop_when_orphaned() -> None:
    """SIGTERM to this process once its supervisor has gone (killed without a word), even
    if it went before this process looked: the supervisor gives its pid."""
    parent = int(os.environ.get(SUPERVISOR_ENV) or os.getppid())

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(ORPHAN_CHECK)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="k8s-wiretap orphan check", daemon=True).start()


# -- what a worker runs -------------------------------------------------------------------
SUPERVISOR_ONLY = {"workers", "worker", "record", "etcd", "help"}


def worker_argv(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[str]:
    """The `proxy` command line that gives `args` again (every option not at its default),
    without what only the supervisor decides (`--worker`, `--workers`, `--record`,
    `--etcd`): any option `proxy` has reaches the workers as the user gave it."""
    argv: list[str] = []
    for action in parser._actions:
        if not action.option_strings or action.dest in SUPERVISOR_ONLY:
            continue
        value = getattr(args, action.dest, action.default)
        if value == action.default or value is None:
            continue
        flag = max(action.option_strings, key=len)  # the long form
        if action.nargs == 0:
            argv.append(flag)
        elif isinstance(value, list):
            argv += [flag, *map(str, value)]
        else:
            argv += [flag, str(value)]
    return argv


# -- the supervisor -----------------------------------------------------------------------
@dataclass
class Worker:
    """One worker process: its slot (0 … N-1), the part it records, and what it said."""

    slot: int
    part: int
    process: subprocess.Popen[bytes]
    ready: threading.Event = field(default_factory=threading.Event)
    said: list[str] = field(default_factory=list)
    listened: float = 0.0  # when it said it listens (monotonic)
    early_deaths: int = 0  # of its slot, in a row: died within CRASH_WINDOW of listening


class Supervisor:
    """Starts `workers` worker processes of `argv` (`worker_argv`), restarts one that dies,
    stops them all on SIGINT or SIGTERM."""

    def __init__(
        self,
        settings: ProxySettings,
        argv: list[str],
        workers: int,
        etcd: str | None,
        warn: Callable[[str], None],
    ) -> None:
        self.settings = settings
        self.argv = argv
        self.count = workers
        self.etcd = etcd
        self.recording = parts.new_recording_id()
        self.workers: list[Worker] = []
        self._stopping = threading.Event()
        self._signal = signal.SIGTERM  # what stops the workers: the supervisor's own signal
        self._out: IO[str] = sys.stderr
        self._warn = warn  # the command's one way to warn (commands/warn.py)

    # -- before any worker ----------------------------------------------------------------
    def prepare(self) -> None:
        """What can fail with a clear message, once, before any worker starts."""
        if not hasattr(socket, "SO_REUSEPORT"):
            raise UsageError(f"--workers {self.count}: this system has no SO_REUSEPORT")
        record = self.settings.record
        if record is not None:
            hint = "--overwrite replaces it"
            for part in range(1, self.count):
                problem = recording_problem(
                    parts.part_path(record, part), overwrite=self.settings.overwrite, hint=hint
                )
                if problem:
                    raise UsageError(f"--record: {problem}")
        # what one proxy checks and creates: the first part, the ports, the credentials,
        # the CAs; it opens no listener and writes no recording
        ProxyServer(self.settings)._prepare()

    # -- running --------------------------------------------------------------------------
    def serve(self) -> int:
        """Start every worker, announce, and supervise until asked to stop."""
        self.prepare()
        previous = {
            signum: signal.signal(signum, self._stop_by)
            for signum in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            status = self._start_all()
            if status is None:
                self._announce()
                ask_versions(self.settings.routes, self.settings.confdir)
                status = self._supervise()
        finally:
            self._stop_all()
            self._join()
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        return status

    def _start_all(self) -> int | None:
        """None once every worker listens; else the exit status of one that could not."""
        for slot in range(self.count):
            self.workers.append(self._spawn(slot, slot))
        deadline = time.monotonic() + START_TIMEOUT
        while not all(w.ready.is_set() for w in self.workers):
            failed = next((w for w in self.workers if w.process.poll() is not None), None)
            if failed is not None:
                return self._failed(failed)
            if self._stopping.is_set():
                return 0  # asked to stop while starting: every worker stops cleanly
            if time.monotonic() > deadline:
                raise WiretapError(f"the proxy workers did not start within {START_TIMEOUT:.0f} s")
            time.sleep(POLL)
        return None

    def _failed(self, worker: Worker) -> int:
        """A worker that exited before listening: what it said, and its status."""
        worker.process.wait()
        time.sleep(POLL)  # the rest of its words
        for line in worker.said:
            print(line, file=self._out)
        return worker.process.returncode or 1

    def _spawn(self, slot: int, part: int) -> Worker:
        argv = [sys.executable, "-m", "k8s_wiretap", "proxy", *self.argv]
        argv += ["--workers", str(self.count), "--worker", f"{part}:{self.recording}"]
        if self.settings.record is not None:
            argv += ["--record", str(self.settings.record)]
        if self.etcd and slot == 0:
            argv += ["--etcd", self.etcd]
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env={**os.environ, SUPERVISOR_ENV: str(os.getpid())},
        )
        worker = Worker(slot, part, process)
        threading.Thread(
            target=self._relay, args=(worker,), name=f"k8s-wiretap worker {slot}", daemon=True
        ).start()
        return worker

    def _relay(self, worker: Worker) -> None:
        """The worker's stderr: its READY sets `ready`, the rest goes on to ours (before it
        listens, kept in `said` for a start that fails)."""
        assert worker.process.stderr is not None
        for raw in worker.process.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if line == READY:
                worker.listened = time.monotonic()
                worker.ready.set()
            elif worker.ready.is_set():
                try:
                    print(line, file=self._out, flush=True)
                except (OSError, ValueError):  # our stderr is gone: keep reading, or it blocks
                    continue
            else:
                worker.said.append(line)

    def _announce(self) -> None:
        announce(self.settings, self._out, f" ({self.count} workers)")
        record = self.settings.record
        if record is not None:
            print(f"k8s-wiretap: {_parts_said(record, self.count)}", file=self._out, flush=True)

    def _supervise(self) -> int:
        """Until asked to stop (0), or a worker stops itself (its exit status)."""
        while self.workers and not self._stopping.wait(POLL):
            for worker in list(self.workers):
                if worker.process.poll() is None or self._stopping.is_set():
                    continue
                self.workers.remove(worker)
                status = worker.process.returncode
                if status >= 0:  # it stopped itself (--on-record-error exit): all stop
                    print(
                        f"k8s-wiretap: worker {worker.slot} exited (status {status}): "
                        "stopping every worker",
                        file=self._out,
                        flush=True,
                    )
                    return status
                early = time.monotonic() - worker.listened < CRASH_WINDOW
                worker.early_deaths = worker.early_deaths + 1 if early else 0
                if worker.ready.is_set() and worker.early_deaths < CRASHES:
                    self.workers.append(self._restart(worker))
                elif worker.ready.is_set():  # a crash loop: the others go on serving
                    print(
                        f"k8s-wiretap: worker {worker.slot} died {CRASHES} times within "
                        f"{CRASH_WINDOW:.0f} s of starting: not restarted; "
                        f"{counted(len(self.workers), 'worker')} still serving",
                        file=self._out,
                        flush=True,
                    )
                else:  # a restart that did not start: not tried again and again
                    self._failed(worker)
                    print(
                        f"k8s-wiretap: worker {worker.slot} could not start again; "
                        f"{counted(len(self.workers), 'worker')} still serving",
                        file=self._out,
                        flush=True,
                    )
        return 0 if self.workers else 1

    def _restart(self, dead: Worker) -> Worker:
        """A new worker in the slot of `dead`, recording to the next free part."""
        status = dead.process.returncode
        how = f"signal {-status}" if status < 0 else f"exit status {status}"
        record = self.settings.record
        ended = close_open(parts.part_path(record, dead.part)) if record else 0
        part = parts.next_part(record) if record else dead.part
        where = f", recording to {parts.part_path(record, part).name}" if record else ""
        print(
            f"k8s-wiretap: worker {dead.slot} (pid {dead.process.pid}) died ({how}; "
            f"{ended} open exchanges ended): restarting it{where}",
            file=self._out,
            flush=True,
        )
        worker = self._spawn(dead.slot, part)
        worker.early_deaths = dead.early_deaths
        deadline = time.monotonic() + START_TIMEOUT
        while not worker.ready.wait(POLL):
            if self._stopping.is_set() or worker.process.poll() is not None:
                return worker
            if time.monotonic() > deadline:
                worker.process.kill()
                return worker
        print(
            f"k8s-wiretap: worker {dead.slot} restarted (pid {worker.process.pid})",
            file=self._out,
            flush=True,
        )
        return worker

    def _stop_by(self, signum: int, frame: object) -> None:
        self._signal = signal.Signals(signum)
        self._stopping.set()

    def _stop_all(self) -> None:
        """SIGTERM (or the signal that stopped the supervisor) to every worker: each writes
        what is queued, ends its exchanges, and notes the signal at the end of its part.
        One that has not within the stop timeout prints its threads' stacks, is killed,
        and its open exchanges ended."""
        for worker in self.workers:
            if worker.process.poll() is None:
                worker.process.send_signal(self._signal)
        timeout = stop_timeout()
        deadline = time.monotonic() + timeout
        record = self.settings.record
        for worker in self.workers:
            try:
                worker.process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self._kill_hung(worker, timeout)
                if record is not None:
                    close_open(parts.part_path(record, worker.part))

    def _kill_hung(self, worker: Worker, timeout: float) -> None:
        """A worker that did not stop: where its threads are, on stderr, then SIGKILL."""
        with contextlib.suppress(ProcessLookupError):
            worker.process.send_signal(STACKS)
        with contextlib.suppress(subprocess.TimeoutExpired):
            worker.process.wait(STACKS_WAIT)  # it may end meanwhile
        if worker.process.poll() is None:
            worker.process.kill()
            worker.process.wait()
            print(
                f"k8s-wiretap: worker {worker.slot} (pid {worker.process.pid}) did not stop "
                f"within {timeout:g} s of {self._signal.name}: killed (its threads' stacks, "
                "if it could print them, are above)",
                file=self._out,
                flush=True,
            )

    def _join(self) -> None:
        """The parts merged into the file the user named, once every worker has stopped
        (`parts.join`). A merge that fails (a full disk) or that a signal stops leaves the
        parts as they were, said on stderr: readers still find them by that name."""
        record = self.settings.record
        if record is None:
            return

        def interrupt(signum: int, frame: object) -> None:
            raise KeyboardInterrupt  # the merge's temporary file is removed

        previous = {
            signum: signal.signal(signum, interrupt) for signum in (signal.SIGINT, signal.SIGTERM)
        }
        warnings: list[str] = []
        why = ""
        try:
            merged = parts.join(record, warnings)
        except KeyboardInterrupt:
            why = "stopped by a signal"
        except OSError as error:
            why = reason(error)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        for warning in warnings:
            self._warn(warning)
        if why:
            print(
                f"k8s-wiretap: the recording's parts were not merged into {record} ({why}): "
                f"they stay beside it, and k8s-wiretap reads them all from {record.name}",
                file=self._out,
                flush=True,
            )
        elif merged:
            print(
                f"k8s-wiretap: merged the recording's {len(merged) + 1} parts into {record}",
                file=self._out,
                flush=True,
            )


def stop_timeout() -> float:
    """Seconds a worker has to stop once signalled: STOP_TIMEOUT, or a positive number of
    seconds in K8S_WIRETAP_STOP_TIMEOUT."""
    value = os.environ.get(STOP_TIMEOUT_ENV, "")
    try:
        seconds = float(value)
    except ValueError:
        return STOP_TIMEOUT
    return seconds if 0 < seconds < float("inf") else STOP_TIMEOUT


def _parts_said(record: Path, workers: int) -> str:
    """What the supervisor says at the start about the parts of `record`."""
    last = parts.part_path(record, workers - 1).name
    others = last if workers == 2 else f"{parts.part_path(record, 1).name} … {last}"
    return (
        f"{workers} workers record in parts while the proxy runs: {record.name} and "
        f"{others} beside it, merged into {record.name} when the proxy stops "
        f"(k8s-wiretap reads them all from {record.name} meanwhile)"
    )


def close_open(path: Path, now: Callable[[], float] = time.time) -> int:
    """End, in the part at `path`, every exchange its dead worker left open (error
    `WORKER_DIED`): a recording whose writer died still has an end for every exchange.
    Returns how many."""
    warnings: list[str] = []
    assembler = Assembler(keep=False)
    try:
        assembler.feed_all(file_records(path, warnings))
    except RecordingError:
        return 0
    ids = [exchange.id for exchange in assembler.open]
    if not ids:
        return 0
    with path.open("rb+") as handle:
        handle.seek(0, os.SEEK_END)
        if handle.tell():
            handle.seek(-1, os.SEEK_END)
            last = handle.read(1)
            if last != b"\n":  # a line the worker was cut short in: it stays a bad line
                handle.write(b"\n")
        stamp = now()
        for exchange_id in ids:
            record = records.end(id=exchange_id, time=stamp, error=WORKER_DIED)
            handle.write(json.dumps(record, separators=(",", ":")).encode() + b"\n")
    return len(ids)


def supervise(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    settings: ProxySettings,
    warn: Callable[[str], None],
) -> int:
    """`proxy --workers N`, N > 1: the supervisor, until SIGINT or SIGTERM; `warn` says a
    warning (a line of a part the merge left out)."""
    supervisor = Supervisor(settings, worker_argv(parser, args), args.workers, settings.etcd, warn)
    with contextlib.suppress(KeyboardInterrupt):  # between two signal handlers
        return supervisor.serve()
    return 0
