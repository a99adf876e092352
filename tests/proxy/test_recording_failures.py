"""A real proxy in front of the lab whose recording's disk fills up: traffic and lines go
on, the proxy says "recording stopped" at once, and its memory stays bounded; once the disk
has room again the recording resumes; or, with `--on-record-error exit`, it stops with a
non-zero status.

The disk is a real 2 MiB tmpfs (`small_filesystem`: this suite runs as root; without the
right to mount, RLIMIT_FSIZE on the proxy's process stands in, and the message is "File
too large").
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
import resource
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from k8s_wiretap.capture.reader import load
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.proxy.server import free_port
from tests.capture.test_recorder_failures import small_filesystem
from tests.conftest import Kubectl, wait_until

pytestmark = pytest.mark.lab

NAMESPACE = "record-fail"
CONFIGMAPS = 24  # of 900 KB each: a LIST of ~21 MB
LIST = ("get", "configmaps", "-n", NAMESPACE, "-o", "json")
MIB = 1024 * 1024


@pytest.fixture(scope="module")
def big_namespace(kubectl: Kubectl, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A namespace whose ConfigMaps make a LIST of ~21 MB, random (the API server gzips
    what kubectl reads: a repeated byte would travel as a few KB)."""
    folder = tmp_path_factory.mktemp("big")
    value = folder / "value"
    value.write_bytes(base64.b64encode(os.urandom(675_000)))
    kubectl("create", "namespace", NAMESPACE)
    for n in range(CONFIGMAPS):
        kubectl("create", "configmap", f"big-{n}", "-n", NAMESPACE, f"--from-file={value}")
    yield NAMESPACE
    kubectl("delete", "namespace", NAMESPACE, "--wait=false")


class Proxy:
    """`k8s-wiretap proxy --no-tui --record DISK/rec.jsonl` as a user runs it: its lines
    and its messages in files of their own."""

    def __init__(self, lab: LabState, folder: Path, record: Path, *extra: str) -> None:
        self.port, self.folder = free_port(), folder
        self.out, self.err = folder / "stdout", folder / "stderr"
        argv = [sys.executable, "-m", "k8s_wiretap", "proxy", "--kubeconfig", lab.kubeconfig]
        argv += ["--listen", f"127.0.0.1:{self.port}", "--record", str(record)]
        argv += ["--confdir", str(folder / "ca"), "--no-tui", *extra]
        with self.out.open("w") as out, self.err.open("w") as err:
            self.process = subprocess.Popen(
                argv, stdout=out, stderr=err, preexec_fn=_limit_files, start_new_session=True
            )
        wait_until(self.listening, 60, "the proxy to listen")
        self.kubectl = Kubectl(
            lab.kubeconfig, folder / "cache", server=f"http://127.0.0.1:{self.port}"
        )

    def listening(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"proxy exited: {self.err.read_text()}")
        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", self.port)) == 0

    def rss(self) -> int:
        """Resident memory of the proxy and its workers, in bytes (VmRSS)."""
        return sum(_rss(pid) for pid in _tree(self.process.pid))

    def lines(self, text: str) -> int:
        return sum(text in line for line in self.out.read_text().splitlines())

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)


def _limit_files() -> None:
    """In the proxy's process: RLIMIT_FSIZE when the test could not mount a small disk."""
    limit = os.environ.get("WIRETAP_TEST_FSIZE")
    if limit:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (int(limit), resource.RLIM_INFINITY))


def _tree(pid: int) -> list[int]:
    """`pid` and its descendants (the workers, with `--workers`)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry.name))
    found, pending = [], [pid]
    while pending:
        found.append(pending.pop())
        pending += children.get(found[-1], [])
    return found


def _rss(pid: int) -> int:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


@contextlib.contextmanager
def full_disk(folder: Path) -> Iterator[tuple[Path, str]]:
    """A 2 MiB disk for the recording (see the module's docstring), and what it says when
    full."""
    with small_filesystem(folder / "disk", "2m") as full:
        if full != "No space left on device":  # in this process only for the context
            os.environ["WIRETAP_TEST_FSIZE"] = str(2 * MIB)
        try:
            yield folder / "disk", full
        finally:
            os.environ.pop("WIRETAP_TEST_FSIZE", None)


def test_a_full_disk_stops_the_recording_not_the_traffic(
    lab: LabState, big_namespace: str, tmp_path: Path
) -> None:
    """The first 21 MB LIST fills the 2 MiB disk: "recording stopped: PATH: No space left
    on device" on stderr at once. Six more LISTs: kubectl gets every ConfigMap, a line per
    LIST is printed, and the proxy's memory grows by far less than what went through it
    (126 MB): before, the dead recorder's queue kept all of it."""
    with full_disk(tmp_path) as (disk, full):
        proxy = Proxy(lab, tmp_path, disk / "rec.jsonl")
        try:
            assert len(proxy.kubectl(*LIST)) > 20 * MIB
            stopped = re.compile(rf"k8s-wiretap: recording stopped: {disk}/rec\S*: {full}")
            wait_until(lambda: stopped.search(proxy.err.read_text()) is not None, 30, "said")
            wait_until(lambda: proxy.lines(f"/namespaces/{NAMESPACE}/configmaps") == 1, 30, "1")
            before = proxy.rss()
            for _ in range(6):
                items = proxy.kubectl("get", "configmaps", "-n", NAMESPACE, "-o", "name")
                assert len(items.split()) == CONFIGMAPS + 1  # and kube-root-ca.crt
                assert len(proxy.kubectl(*LIST)) > 20 * MIB
            wait_until(
                lambda: proxy.lines(f"/namespaces/{NAMESPACE}/configmaps") == 13, 60, "lines"
            )
            grown = proxy.rss() - before
            assert grown < 64 * MIB, f"RSS grew by {grown / MIB:.0f} MiB"
            assert proxy.process.poll() is None
        finally:
            proxy.stop()
        said = proxy.err.read_text()
        assert "Traceback" not in said
        assert len(stopped.findall(said)) >= 1


def _free_space(proxy: Proxy, full: str) -> None:
    """Room again on the disk once its other file is deleted; with the RLIMIT_FSIZE
    stand-in ("File too large"), deleting frees nothing: the proxy's limit goes instead."""
    if full == "File too large":
        for pid in _tree(proxy.process.pid):
            with contextlib.suppress(ProcessLookupError):
                resource.prlimit(pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)


def test_a_recording_resumes_once_its_disk_has_room_again(
    lab: LabState, big_namespace: str, tmp_path: Path
) -> None:
    """The default (`--on-record-error resume`): a 21 MB LIST fills the 2 MiB disk (1 MiB
    of it another file's), "recording stopped" is said; traffic goes on in the gap. The
    other file is deleted: within the 10 s retry each part that stopped says "recording
    resumed: PATH (N records lost)"; later kubectl commands are in the recording, which
    loads with a note of the gap, and `explain` reads it."""
    with full_disk(tmp_path) as (disk, full):
        other = disk / "other"
        other.write_bytes(os.urandom(MIB))
        record = disk / "rec.jsonl"
        proxy = Proxy(lab, tmp_path, record)
        try:
            assert len(proxy.kubectl(*LIST)) > 20 * MIB
            stopped = re.compile(rf"k8s-wiretap: recording stopped: {record}\S*: {full}")
            wait_until(lambda: stopped.search(proxy.err.read_text()) is not None, 30, "said")
            proxy.kubectl("get", "configmaps", "-n", NAMESPACE, "-o", "name")  # in the gap
            other.unlink()
            _free_space(proxy, full)
            resumed = re.compile(
                rf"k8s-wiretap: recording resumed: {record}\S* \([\d,]+ records? lost\)"
            )

            def all_resumed() -> bool:
                said = proxy.err.read_text()
                return 0 < len(stopped.findall(said)) == len(resumed.findall(said))

            wait_until(all_resumed, 60, "every stopped part to resume")
            for _ in range(3):
                proxy.kubectl("get", "namespace", NAMESPACE, "-o", "name")
                proxy.kubectl("get", "serviceaccounts", "-n", NAMESPACE, "-o", "name")
            assert proxy.process.poll() is None
        finally:
            proxy.stop()
        said = proxy.err.read_text()
        assert "Traceback" not in said
        recording = load(record)
        gaps = [n["message"] for n in recording.notes if " not written between " in n["message"]]
        assert gaps and all(gap.endswith(f"({full})") for gap in gaps), gaps
        later = [
            e
            for e in recording.exchanges
            if e.request.path.startswith(f"/api/v1/namespaces/{NAMESPACE}")
            and not e.request.path.startswith(f"/api/v1/namespaces/{NAMESPACE}/configmaps")
        ]
        assert len(later) == 6, [e.request.path for e in later]
        assert all(e.response is not None and e.response.status == 200 for e in later)
        explained = subprocess.run(
            [sys.executable, "-m", "k8s_wiretap", "explain", str(record)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert explained.returncode == 0, explained.stderr
        assert "Traceback" not in explained.stderr


def test_on_record_error_exit_stops_the_proxy_with_a_failure_status(
    lab: LabState, big_namespace: str, tmp_path: Path
) -> None:
    """`--on-record-error exit`: the disk fills, the proxy says so and exits non-zero (for
    a supervisor to notice). With workers (the default on this machine's cores), the one
    whose part fails stops, and with it the whole proxy."""
    with full_disk(tmp_path) as (disk, full):
        proxy = Proxy(lab, tmp_path, disk / "rec.jsonl", "--on-record-error", "exit")
        try:
            proxy.kubectl.run(*LIST, check=False)
            status = proxy.process.wait(60)
        finally:
            proxy.stop()
        said = proxy.err.read_text()
        assert status != 0, said
        assert f"recording stopped: {disk}/rec" in said
        assert f"{full} (--on-record-error exit: the proxy stopped)" in said
        assert "Traceback" not in said


def test_the_tui_shows_at_once_that_recording_stopped(
    lab: LabState, big_namespace: str, tmp_path: Path
) -> None:
    """`proxy` on a terminal (the TUI following the proxy's file): when the disk fills,
    the TUI says "recording stopped" (a notification, and the title), from the proxy's own
    words; traffic goes on."""
    from tests.proxy.test_live import Terminal

    port, terminal = free_port(), Terminal()
    with full_disk(tmp_path) as (disk, _full):
        argv = [sys.executable, "-m", "k8s_wiretap", "proxy", "--kubeconfig", lab.kubeconfig]
        argv += ["--listen", f"127.0.0.1:{port}", "--record", str(disk / "rec.jsonl")]
        argv += ["--confdir", str(tmp_path / "ca")]
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
        process = subprocess.Popen(
            argv,
            stdin=terminal.slave,
            stdout=terminal.slave,
            stderr=terminal.slave,
            env=env,
            start_new_session=True,
            preexec_fn=_limit_files,
        )
        try:
            wait_until(lambda: terminal.shows("following"), 60, "the TUI, following")
            assert not terminal.shows("recording stopped")
            server = f"http://127.0.0.1:{port}"
            kubectl = Kubectl(lab.kubeconfig, tmp_path / "cache", server=server)
            assert len(kubectl(*LIST)) > 20 * MIB
            wait_until(lambda: terminal.shows("recording stopped"), 30, "the TUI to say it")
            assert len(kubectl(*LIST)) > 20 * MIB  # traffic goes on
            assert process.poll() is None
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            process.wait(60)
            terminal.close()
