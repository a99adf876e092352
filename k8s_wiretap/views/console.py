"""The console view: one line per exchange as traffic happens (`proxy --no-tui`).

Records are assembled by the same `Assembler` as a recording read back, so a finished
watch's line counts the events it really carried. A watch gets a line when it opens too,
since it may stay open for an hour; ended exchanges are forgotten.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from k8s_wiretap.capture.assemble import Assembler
from k8s_wiretap.capture.outputs import reason
from k8s_wiretap.views.lines import clock, exchange_line
from k8s_wiretap.wire.controls import escape_controls

__all__ = ["ConsoleOutput"]


class ConsoleOutput:
    """A recorder output (see `capture.recorder.Output`) that prints instead of storing."""

    def __init__(self, stream: TextIO = sys.stdout) -> None:
        self.stream = stream
        self._assembler = Assembler(keep=False)

    def write(self, record: dict[str, Any]) -> None:
        if record.get("record") == "note":
            said = escape_controls(f"{record['level']}: {record['message']}")
            self.stream.write(f"{clock(record['time'])} {said}\n")
            return
        update = self._assembler.feed(record)
        if update is None:
            return
        exchange = update.exchange
        if update.record == "response" and exchange.info.verb == "watch":
            self.stream.write(exchange_line(exchange) + " (open)\n")
        elif update.record == "end":
            self.stream.write(exchange_line(exchange) + "\n")

    def flush(self) -> None:
        self.stream.flush()

    def close(self) -> None:
        self.flush()

    def describe(self, error: BaseException) -> str:
        """What the recorder says when printing fails (a closed pipe, a full disk)."""
        return f"console output stopped: {reason(error)}"
