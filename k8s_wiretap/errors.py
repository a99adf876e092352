"""Errors meant for the person at the terminal: one line, no traceback.

Every failure a user can cause or fix (a wrong flag, a missing kubeconfig, a missing binary, a
component that would not start) is raised as a `WiretapError` whose message is the whole
explanation. The CLI prints it as `k8s-wiretap: <message>` and exits with `exit_code`.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

__all__ = ["SIGNALS", "Stopped", "UsageError", "WiretapError", "raising_on_signals"]


class WiretapError(Exception):
    """A failure explained in its message; exits with status 1."""

    exit_code = 1


class UsageError(WiretapError):
    """Bad flags or configuration (kubeconfig, context, port); exits with status 2."""

    exit_code = 2


class Stopped(BaseException):
    """A signal (SIGTERM, SIGINT) stopped the command: raised by the handler a command
    that writes a file installs, so that what it was writing is ended with a note that
    says so (or removed), never left as if whole. Not an `Exception`: nothing that
    handles a failure of its own catches it. Exits as a shell reports the signal
    (128 + its number); the message says what became of the output."""

    def __init__(self, signum: int, message: str = "") -> None:
        self.signal = signal.Signals(signum)
        self.exit_code = 128 + int(signum)
        super().__init__(message or f"stopped by {self.signal.name}")


SIGNALS = (signal.SIGTERM, signal.SIGINT)


@contextlib.contextmanager
def raising_on_signals() -> Iterator[None]:
    """Inside the block, SIGTERM or SIGINT raises `Stopped` (wherever the main thread is,
    a blocking read too); any later one is ignored while the block ends its output. Off
    the main thread (where no handler can be set) the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        for other in SIGNALS:
            signal.signal(other, signal.SIG_IGN)
        raise Stopped(signum)

    previous = {signum: signal.signal(signum, stop) for signum in SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
