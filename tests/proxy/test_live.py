"""`k8s-wiretap proxy` live against the lab: the TUI following the proxy's recording as
kubectl applies and watches through it; in a terminal, and without one (lines)."""

from __future__ import annotations

import asyncio
import fcntl
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

from k8s_wiretap.capture.reader import load
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.proxy.server import free_port
from k8s_wiretap.views.tui import ReplayApp
from tests.conftest import Kubectl, wait_until
from tests.proxy.conftest import spawn_proxy
from tests.views.tui.pilot import until

CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
data:
  step: "{step}"
"""


LAB = 60  # seconds for what the lab and the proxy must do: generous, never a speed


def test_apply_and_get_w_appear_live_in_the_app(lab: LabState, tmp_path: Path) -> None:
    proxy = spawn_proxy(lab.kubeconfig, tmp_path)
    kubectl = Kubectl(lab.kubeconfig, tmp_path / "cache", server=proxy.url)
    watch = kubectl.popen("get", "configmaps", "-w", "--field-selector=metadata.name=live")

    async def main() -> None:
        app = ReplayApp(proxy.record, writer=lambda: proxy.process.poll() is None)
        async with app.run_test(size=(160, 40)) as pilot:
            rows = app.index.rows

            def watching() -> bool:
                return any(r.verb == "watch" and r.resource == "configmaps" for r in rows)

            await until(pilot, watching, "kubectl get -w's watch", LAB)
            assert app.follow_mode.active and not app.index.done
            for step in (1, 2):  # in a thread: the app runs on this loop
                manifest = CONFIGMAP.format(name="live", step=step)
                await asyncio.to_thread(kubectl, "apply", "-f", "-", stdin=manifest)

            def applied() -> bool:
                verbs = {(r.verb, r.name) for r in rows if r.resource == "configmaps"}
                return {("create", ""), ("patch", "live")} <= verbs  # a create names none

            await until(pilot, applied, "both applies as rows", LAB)
            watch = next(
                n for n, r in enumerate(rows) if r.verb == "watch" and r.resource == "configmaps"
            )
            await until(
                pilot, lambda: rows[watch].events >= 2, "the watch's ADDED and MODIFIED", LAB
            )
            assert rows[watch].ended is None  # still open: it grows (a row is read again)
            lines = [app.exchange_list.render_line(y).text for y in range(1, 39)]
            assert any("patch" in line and "configmaps" in line for line in lines)
            # following: the index grows in its worker and the cursor moves when the app
            # hears of it, so the cursor reaches the end a message later (never a speed)
            listed = app.exchange_list
            await until(
                pilot, lambda: listed.cursor == listed.count - 1, "the cursor at the end", LAB
            )
            proxy.stop()
            await until(pilot, lambda: app.index.done, "the end once the proxy stopped", LAB)
            assert rows[watch].ended is not None  # the proxy ended it ("recording stopped")

    try:
        asyncio.run(main())
    finally:
        watch.kill()
        watch.wait()
        proxy.stop()
    said = proxy.log.read_text()  # --no-tui: one line per exchange
    assert "PATCH /api/v1/namespaces/default/configmaps/live" in said
    assert "(open)" in said  # the watch's line when it opened


class Terminal:
    """A pseudo-terminal of 120x40 whose output is read all along (a full pty blocks)."""

    def __init__(self) -> None:
        self.master, self.slave = pty.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.output = bytearray()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            self.output += data

    def shows(self, text: str) -> bool:
        return text.encode() in self.output

    def close(self) -> None:
        os.close(self.slave)
        os.close(self.master)


def test_proxy_in_a_terminal_opens_the_tui_and_q_stops_it_cleanly(
    lab: LabState, tmp_path: Path
) -> None:
    port, record = free_port(), tmp_path / "live.jsonl"
    terminal = Terminal()
    argv = [sys.executable, "-m", "k8s_wiretap", "proxy", "--kubeconfig", lab.kubeconfig]
    argv += ["--listen", f"127.0.0.1:{port}", "--record", str(record)]
    argv += ["--confdir", str(tmp_path / "ca")]
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
    process = subprocess.Popen(
        argv,
        stdin=terminal.slave,
        stdout=terminal.slave,
        stderr=terminal.slave,
        env=env,
        start_new_session=True,
    )
    try:
        wait_until(lambda: terminal.shows("following"), 60, "the TUI, following")
        assert terminal.shows("k8s-wiretap proxy")
        kubectl = Kubectl(lab.kubeconfig, tmp_path / "cache", server=f"http://127.0.0.1:{port}")
        kubectl("get", "namespaces")
        wait_until(lambda: terminal.shows("namespaces"), 60, "kubectl's list on the screen")
        os.write(terminal.master, b"q")
        assert process.wait(60) == 0
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        terminal.close()
    recording = load(record)
    assert any(e.path.startswith("/api/v1/namespaces") for e in recording.exchanges)
    assert all(e.end is not None for e in recording.exchanges)  # the proxy stopped cleanly
    assert not recording.warnings


def test_without_a_terminal_the_proxy_prints_lines(lab: LabState, tmp_path: Path) -> None:
    port, out = free_port(), tmp_path / "out.txt"
    argv = [sys.executable, "-m", "k8s_wiretap", "proxy", "--kubeconfig", lab.kubeconfig]
    argv += ["--listen", f"127.0.0.1:{port}", "--confdir", str(tmp_path / "ca")]
    with out.open("w") as output:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=output, stderr=output)
    try:
        wait_until(lambda: "listening on" in out.read_text(), 60, "the proxy to listen")
        kubectl = Kubectl(lab.kubeconfig, tmp_path / "cache", server=f"http://127.0.0.1:{port}")
        kubectl("get", "namespaces")
        wait_until(lambda: "GET /api/v1/namespaces" in out.read_text(), 30, "a line")
    finally:
        process.terminate()
        process.wait(30)
