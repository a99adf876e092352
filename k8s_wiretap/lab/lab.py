"""Run a real control plane on 127.0.0.1: `Lab(dir).up()`, `.down()`, `.state()`.

Start order follows dependencies (etcd, then the API server, then the controller manager,
scheduler and hollow kubelet together); each level must be ready before the next starts. If a
component dies or is not ready in time, everything already started is stopped again and the
error carries the last lines of that component's log.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from importlib import resources
from pathlib import Path
from typing import TextIO

from k8s_wiretap.errors import WiretapError
from k8s_wiretap.kube.release import Release
from k8s_wiretap.lab import build
from k8s_wiretap.lab.binaries import MissingBinaryError, find_binary, locate
from k8s_wiretap.lab.components import (
    AUDIT_WEBHOOK_FILE,
    COMPONENTS,
    DEFAULT,
    ORDER,
    audit_webhook_args,
    cbor_args,
    requires,
    resolve,
)
from k8s_wiretap.lab.layout import Layout, free_ports, runtime_dir
from k8s_wiretap.lab.pki import write_pki
from k8s_wiretap.lab.processes import Process, excerpt, spawn
from k8s_wiretap.lab.readiness import default_service_account_ready, probe
from k8s_wiretap.lab.releases import KubeVersionError, built, token_secrets
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.lab.versions import resolve_release
from k8s_wiretap.paths import state_dir
from k8s_wiretap.tls import write_private

__all__ = ["AUDIT_LEVELS", "Lab", "LabError", "LabRunningError", "UpOptions", "default_dir"]

# The audit levels `lab up --audit-level` takes (audit.k8s.io/v1 Level; None logs nothing):
# Metadata (who did what, no bodies) unless told, Request adds the request's object,
# RequestResponse the response's too.
AUDIT_LEVELS = ("Metadata", "Request", "RequestResponse")
WIPED_ON_UP = ("etcd", "pki", "kubeconfigs", "logs", "bin")


class LabError(WiretapError):
    """The lab could not start or stop; the message says what and why."""


class LabRunningError(LabError):
    """`lab up` on a folder whose lab is (partly) running."""


# The ports are picked free (`free_ports`) and bound by the components a moment later;
# another program may take one meanwhile: then the lab starts again on other ports.
PORT_ATTEMPTS = 3
PORT_TAKEN = "address already in use"


def audit_policy(level: str) -> str:
    """The API server's audit policy: audit-policy.yaml with its one rule at `level`."""
    policy = resources.files("k8s_wiretap.lab").joinpath("audit-policy.yaml").read_text()
    return policy.replace("  - level: Metadata\n", f"  - level: {level}\n")


def default_dir() -> Path:
    return Path(os.environ.get("K8S_WIRETAP_LAB_DIR") or state_dir() / "lab")


@dataclass(frozen=True)
class UpOptions:
    components: tuple[str, ...] = DEFAULT
    bin_dir: Path | None = None
    extra_args: dict[str, list[str]] = field(default_factory=dict)
    build: bool = True
    timeout: float = 120.0
    record: Path | None = None  # run every client through a wiretap recording here
    kube_version: str | None = None  # a --kube-version (releases.DEFAULT when None)
    cbor: bool = False  # the CBOR gates on: components.cbor_args (1.32 and later)
    audit_level: str = "Metadata"  # the audit policy's one rule: one of AUDIT_LEVELS
    audit_webhook: Path | None = None  # a kubeconfig: the API server's audit webhook too


class Lab:
    def __init__(self, directory: Path | None = None) -> None:
        self.dir = (directory or default_dir()).expanduser().absolute()
        self.state_file = self.dir / "lab.json"

    def state(self) -> LabState | None:
        try:
            return LabState.load(self.state_file)
        except ValueError as error:
            raise LabError(str(error)) from error

    def up(self, options: UpOptions | None = None, out: TextIO = sys.stderr) -> LabState:
        """Start the lab and wait until it is ready; returns its state."""
        options = options or UpOptions()
        components = resolve(list(options.components), via_proxy=options.record is not None)
        # the options first, then the release (which may find no build of it): a wrong
        # option is said as itself, wherever the binaries are
        if options.audit_level not in AUDIT_LEVELS:
            raise LabError(f"audit level {options.audit_level!r} is none of {AUDIT_LEVELS}")
        webhook = _webhook_config(options.audit_webhook)
        try:
            release = resolve_release(options.kube_version, lookup=options.build)
        except KubeVersionError as error:
            raise LabError(str(error)) from error
        if options.cbor:
            try:
                cbor_args("apiserver", release)
            except ValueError as error:
                raise LabError(str(error)) from error
        self.dir.mkdir(parents=True, exist_ok=True)
        with self._lock():
            self._refuse_if_running()
            binaries = _binaries(components, options, release, out)
            record = options.record.absolute() if options.record else None
            for attempt in range(1, PORT_ATTEMPTS + 1):
                layout = Layout(self.dir, free_ports(), record)
                self._prepare(layout, options.audit_level, webhook)
                _link_kubectl(layout, release, options.bin_dir)
                state = LabState(
                    components,
                    layout.ports,
                    layout.server,
                    str(layout.kubeconfig),
                    recording=str(record) if record else None,
                    kube_version=str(release),
                    cbor=options.cbor,
                )
                try:
                    self._start(layout, state, release, binaries, options, out)
                except BaseException as error:
                    self._teardown(state, out)
                    state.save(self.state_file)
                    if attempt == PORT_ATTEMPTS or PORT_TAKEN not in str(error):
                        raise
                    print("lab: a port was taken meanwhile: starting on other ports", file=out)
                    continue
                return state
            raise AssertionError("unreachable: the last attempt returns or raises")

    def down(self, out: TextIO = sys.stderr) -> list[str]:
        """Stop every process the lab started; returns the names of those that were running."""
        if not self.state_file.exists():
            return []
        with self._lock():
            state = self.state()
            return self._teardown(state, out) if state else []

    def restart(self, name: str, timeout: float = 120.0, out: TextIO = sys.stderr) -> None:
        """Stop one component and start it again with the same command line, then wait
        until it is ready. Restarting the API server is how a workshop shows informers
        re-watching from their last resourceVersion, getting 410 Expired, and relisting.
        A component that crashed (or was killed) is started again, saying it was not
        running: that is when one restarts it."""
        if not self.state_file.exists():
            raise LabError(f"no lab in {self.dir}; start one with `k8s-wiretap lab up`")
        with self._lock():
            state = self.state()
            if state is None:
                raise LabError(f"no lab in {self.dir}; start one with `k8s-wiretap lab up`")
            process = next((p for p in state.processes if p.name == name), None)
            if process is None:
                names = ", ".join(p.name for p in state.processes)
                raise LabError(f"{name} is not part of the lab in {self.dir} (it runs {names})")
            if process.stop():
                print(f"stopped {name} (pid {process.pid})", file=out, flush=True)
            else:
                print(f"{name} was not running (pid {process.pid})", file=out, flush=True)
            layout = Layout(
                self.dir, state.ports, Path(state.recording) if state.recording else None
            )
            env = layout.env(COMPONENTS[name])
            fresh = spawn(name, process.argv, Path(process.log), env)
            state.processes[state.processes.index(process)] = fresh
            state.save(self.state_file)
            print(f"started {name} (pid {fresh.pid})", file=out, flush=True)
            _wait_ready(layout, [fresh], timeout, out)

    def _teardown(self, state: LabState, out: TextIO) -> list[str]:
        stopped = _stop_all(state, out)
        shutil.rmtree(runtime_dir(self.dir), ignore_errors=True)
        return stopped

    @contextmanager
    def _lock(self) -> Iterator[None]:
        with (self.dir / "lab.lock").open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield

    def _refuse_if_running(self) -> None:
        state = self.state()
        running = state.running() if state else []
        if not state or not running:
            return
        if not state.stopped():
            raise LabRunningError(
                f"a lab is already running in {self.dir} (KUBECONFIG={state.kubeconfig}); "
                "`k8s-wiretap lab down` stops it"
            )
        dead = ", ".join(p.name for p in state.stopped())
        raise LabRunningError(
            f"a lab in {self.dir} is partly running ({dead} stopped); "
            "run `k8s-wiretap lab down` first"
        )

    def _prepare(self, layout: Layout, audit_level: str, webhook: bytes | None) -> None:
        for name in (*WIPED_ON_UP, "wiretap"):
            shutil.rmtree(self.dir / name, ignore_errors=True)
        link = self.dir / "kubelet"
        if link.is_symlink() or link.is_file():
            link.unlink()
        shutil.rmtree(link, ignore_errors=True)
        for folder in (layout.logs, layout.kubeconfigs):
            folder.mkdir(parents=True)
        _fresh_private_dir(layout.runtime_dir)
        link.symlink_to(layout.runtime_dir)
        (layout.dir / "audit-policy.yaml").write_text(audit_policy(audit_level))
        (layout.dir / AUDIT_WEBHOOK_FILE).unlink(missing_ok=True)
        if webhook is not None:  # a copy: the API server reads it again when restarted
            write_private(layout.dir / AUDIT_WEBHOOK_FILE, webhook)
        write_pki(layout)

    def _start(
        self,
        layout: Layout,
        state: LabState,
        release: Release,
        binaries: dict[str, Path],
        options: UpOptions,
        out: TextIO,
    ) -> None:
        for level in _levels(state.components):
            started = []
            for name in level:
                component = COMPONENTS[name]
                extra = list(cbor_args(name, release)) if options.cbor else []
                if name == "apiserver" and options.audit_webhook is not None:
                    extra += audit_webhook_args(str(layout.dir / AUDIT_WEBHOOK_FILE))
                argv = layout.argv(
                    component,
                    binaries[component.binary],
                    [*extra, *options.extra_args.get(name, [])],
                    release,
                )
                print(f"starting {name} ({component.binary})", file=out, flush=True)
                process = spawn(name, argv, layout.log(name), layout.env(component))
                state.processes.append(process)
                state.save(self.state_file)
                started.append(process)
            _wait_ready(layout, started, options.timeout, out)
        if "controller-manager" in state.components:
            _wait_for(
                lambda: default_service_account_ready(layout, token_secrets(release)),
                options.timeout,
                "the default ServiceAccount's token",
                state.processes,
            )


def _webhook_config(path: Path | None) -> bytes | None:
    """The audit webhook kubeconfig at `path` (None: no webhook); LabError if unreadable."""
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError as error:
        raise LabError(f"--audit-webhook {path}: {error.strerror or error}") from error


def _binaries(
    components: tuple[str, ...], options: UpOptions, release: Release, out: TextIO
) -> dict[str, Path]:
    names = [COMPONENTS[name].binary for name in components if name != "wiretap"]
    python = {"python": Path(sys.executable)}
    try:
        return {**locate(names, options.bin_dir, release), **python}
    except MissingBinaryError:
        if not options.build:
            raise
    build.ensure_binaries(release, out)
    return {**locate(names, options.bin_dir, release), **python}


def _link_kubectl(layout: Layout, release: Release, bin_dir: Path | None) -> None:
    """DIR/bin/kubectl: the release's own kubectl, which `lab env` puts first on PATH."""
    if "kubectl" not in built(release):
        return
    kubectl = find_binary("kubectl", bin_dir, release)
    if kubectl is not None:
        layout.bin.mkdir()
        (layout.bin / "kubectl").symlink_to(kubectl)


def _levels(components: tuple[str, ...]) -> list[list[str]]:
    """Group components so that each group only needs earlier groups."""
    depth: dict[str, int] = {}
    for name in ORDER:
        depth[name] = 1 + max((depth[r] for r in requires(name, components)), default=-1)
    levels: dict[int, list[str]] = {}
    for name in components:
        levels.setdefault(depth[name], []).append(name)
    return [levels[d] for d in sorted(levels)]


def _wait_ready(layout: Layout, processes: list[Process], timeout: float, out: TextIO) -> None:
    for process in processes:
        component = COMPONENTS[process.name]
        _wait_for(partial(probe, layout, component), timeout, process.name, processes)
        print(f"{process.name} ready", file=out, flush=True)


def _wait_for(
    check: Callable[[], str | None], timeout: float, what: str, watched: list[Process]
) -> None:
    """Poll `check()` (None = done) until `timeout`, failing early if a watched process dies."""
    deadline = time.monotonic() + timeout
    reason: str | None = "not checked yet"
    while time.monotonic() < deadline:
        for process in watched:
            if not process.alive():
                raise LabError(_failure(process, "exited during start-up"))
        reason = check()
        if reason is None:
            return
        time.sleep(0.25)
    culprit = next((p for p in watched if p.name == what), watched[-1])
    raise LabError(_failure(culprit, f"{what} not ready after {timeout:.0f} s ({reason})"))


def _failure(process: Process, why: str) -> str:
    return f"{process.name} failed to start: {why}; from {process.log}:\n{excerpt(process.log)}"


def _stop_all(state: LabState, out: TextIO) -> list[str]:
    stopped = []
    for process in reversed(state.processes):
        if process.stop():
            print(f"stopped {process.name} (pid {process.pid})", file=out, flush=True)
            stopped.append(process.name)
    return stopped


def _fresh_private_dir(path: Path) -> None:
    """An empty folder only we can enter; its parent is shared /tmp, so check who owns it."""
    path.parent.mkdir(mode=0o700, exist_ok=True)
    if path.parent.stat().st_uid != os.getuid() or path.parent.is_symlink():
        raise LabError(f"{path.parent} belongs to someone else; remove it or set TMPDIR")
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(mode=0o700)
