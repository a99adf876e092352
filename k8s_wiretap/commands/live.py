"""`k8s-wiretap proxy` on a terminal: the proxy in a process of its own, the TUI beside it.

The TUI must never slow the proxy. Both are Python: in one process they would share one
interpreter lock, and every frame the TUI paints would be time the proxy's event loop
waits. So the proxy runs exactly as `proxy --quiet --record FILE` runs (its own process,
event loop and recorder thread, writing its recording file as always), and this process
follows that file with the replay TUI (`views/tui/listing/follow.py`): live is follow. Records
reach the file within ~20 ms (the recorder writes in bursts), the follower looks at its
end every 50 ms, and the file is what links the two, so nothing the TUI does can hold the
proxy up: a slow screen only reads later.

The recording is `--record FILE`, else a temporary file in a private folder
(`$TMPDIR/k8s-wiretap-live-*`, 0700; the file 0600, as every recording) removed when the
proxy stops. The proxy's own messages (listening on..., errors) go to a log beside it:
a proxy that cannot start prints its log and its exit status is returned, as without the
TUI. What the proxy says once it runs ("recording stopped: PATH: No space left on device")
shows at once in the TUI, as a notification and in the title (`_ProxyMessages`: the log
is looked at every 0.25 s). Quitting the TUI sends the proxy SIGTERM, which it takes as
Ctrl-C: what is queued is written and every exchange still open gets its end ("recording
stopped"), so the recording is complete.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from k8s_wiretap.capture import parts
from k8s_wiretap.errors import WiretapError
from k8s_wiretap.wire.words import counted

if TYPE_CHECKING:
    from k8s_wiretap.views.tui import ReplayApp

__all__ = ["child_argv", "run_live"]

START_TIMEOUT = 60.0
WATCH_INTERVAL = 0.25  # seconds between two looks at the proxy's log
STOP_TIMEOUT = 30.0


def child_argv(args: argparse.Namespace, record: Path) -> list[str]:
    """`k8s-wiretap proxy` with `args`' options, recording to `record`, printing nothing."""
    argv = [sys.executable, "-m", "k8s_wiretap", "proxy", "--quiet", "--record", str(record)]
    options = {
        "--kubeconfig": args.kubeconfig,
        "--context": args.context,
        "--listen": None if args.routes else args.listen,
        "--routes": args.routes,
        "--max-body": args.max_body,
        "--etcd": args.etcd,
        "--accept-hosts": args.accept_hosts,
        "--idle-timeout": args.idle_timeout,
        "--workers": getattr(args, "workers", None),
        "--on-record-error": args.on_record_error,
        "--confdir": args.confdir,
    }
    for flag, value in options.items():
        if value is not None:
            argv += [flag, str(value)]
    argv += ["--overwrite"] if args.overwrite else []
    argv += ["--no-redact"] if args.no_redact else []
    argv += ["--allow-remote"] if getattr(args, "allow_remote", False) else []
    return argv


def run_live(args: argparse.Namespace) -> int:
    """The proxy in a child process, its recording in the TUI until the TUI quits."""
    folder = Path(tempfile.mkdtemp(prefix="k8s-wiretap-live-"))
    record = args.record.absolute() if args.record else folder / "recording.jsonl"
    log = folder / "proxy.log"
    try:
        with log.open("w") as output:
            proxy = subprocess.Popen(
                child_argv(args, record), stdin=subprocess.DEVNULL, stdout=output, stderr=output
            )
        try:
            said = _started(proxy, log)
            if proxy.poll() is not None:
                sys.stderr.write(said)
                return proxy.returncode
            messages = _ProxyMessages(log, len(said.encode()))
            _show(record, said, lambda: proxy.poll() is None, messages)
        finally:
            status = _stop(proxy)
        if status not in (0, -signal.SIGTERM):
            sys.stderr.write(log.read_text())
        _summary(record, kept=args.record is not None)
        return 0 if status == -signal.SIGTERM else status
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _started(proxy: subprocess.Popen[bytes], log: Path) -> str:
    """What the proxy said by the time it records (or exited)."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        said = log.read_text()
        if "recording to" in said or proxy.poll() is not None:
            time.sleep(0.05)  # the rest of its message, if it is exiting
            return log.read_text()
        time.sleep(0.05)
    raise WiretapError(f"the proxy did not start within {START_TIMEOUT:.0f} s")


def _show(record: Path, said: str, running: Callable[[], bool], messages: _ProxyMessages) -> None:
    from k8s_wiretap.views.tui import ReplayApp  # Textual loads only for the TUI

    app = ReplayApp(record, writer=running, label=_label(said))
    previous = signal.signal(signal.SIGTERM, lambda *_: app.exit())
    watch = threading.Thread(
        target=messages.watch, args=(app,), name="k8s-wiretap proxy log", daemon=True
    )
    try:
        watch.start()
        app.run()
    finally:
        messages.stop.set()
        signal.signal(signal.SIGTERM, previous)
    if app.error is not None:
        raise WiretapError(app.error)


class _ProxyMessages:
    """What the proxy says on its log (its stderr) after it started, shown in the TUI: a
    notification, and the title says it too ("recording stopped" must not go unseen)."""

    def __init__(self, log: Path, offset: int) -> None:
        self.log = log
        self.offset = offset  # bytes of the log already shown (its start-up words)
        self.stop = threading.Event()
        self.stopped: set[str] = set()  # the files whose recording stopped (one per worker)

    def new(self) -> list[str]:
        """The proxy's own lines ("k8s-wiretap: ...") written since the last call (read
        from where the last call stopped: the log may grow long)."""
        try:
            with self.log.open("rb") as handle:
                handle.seek(self.offset)
                data = handle.read()
        except OSError:
            return []
        end = data.rfind(b"\n") + 1  # whole lines only
        if end == 0:
            return []
        lines = data[:end].decode(errors="replace").splitlines()
        self.offset += end
        prefix = "k8s-wiretap: "
        return [line.removeprefix(prefix) for line in lines if line.startswith(prefix)]

    def watch(self, app: ReplayApp) -> None:
        """Until `stop`: each new line becomes a notification in `app` (a ReplayApp)."""
        while not self.stop.wait(WATCH_INTERVAL):
            for message in self.new():
                with contextlib.suppress(RuntimeError):  # the app is gone or not yet up
                    app.call_from_thread(_alert, app, message, self.stopped)


def _alert(app: ReplayApp, message: str, stopped: set[str]) -> None:
    """One of the proxy's messages in the TUI. "recording stopped: PATH: WHY" stays in its
    title until every file that stopped says "recording resumed: PATH (N records lost)"."""
    what, _, rest = message.partition(": ")
    path = rest.split(": ", 1)[0].split(" (", 1)[0]
    if what.endswith(" stopped"):
        stopped.add(path)
        app.alert(message, title=what)
    elif what.endswith(" resumed"):
        stopped.discard(path)
        cleared = what.removesuffix(" resumed") + " stopped"
        app.alert(message, title="" if stopped else cleared, resolved=True)
    else:
        app.alert(message)


def _label(said: str) -> str:
    """The title: where the proxy listens, from its own words."""
    from rich.markup import escape

    listening = [
        line.split("listening on ", 1)[1].replace(" -> ", " → ")
        for line in said.splitlines()
        if "listening on " in line
    ]
    where = listening[0] if len(listening) == 1 else f"{len(listening)} listeners"
    return f"[bold]k8s-wiretap proxy[/] {escape(where)}"


def _stop(proxy: subprocess.Popen[bytes]) -> int:
    if proxy.poll() is None:
        proxy.terminate()
        try:
            return proxy.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proxy.kill()
    return proxy.wait()


def _summary(record: Path, kept: bool) -> None:
    if not record.exists():
        return
    exchanges = 0
    for part in parts.all_parts(record):  # one file, or a --workers recording's parts
        with part.open("rb") as recording:
            exchanges += sum(b'"record":"request"' in line for line in recording)
    where = f"recorded to {record}" if kept else "seen (--record FILE keeps a recording)"
    print(f"k8s-wiretap: {counted(exchanges, 'exchange')} {where}", file=sys.stderr)
