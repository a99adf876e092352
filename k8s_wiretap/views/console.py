"""The console view: one line per exchange as traffic happens (`proxy --no-tui`)."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.views.lines import clock, exchange_line

__all__ = ["ConsoleOutput"]


class ConsoleOutput:
    """One line per finished exchange (views/lines.py), and every note, as they happen.

    A watch gets a line when it opens too, since it may stay open for an hour.
    """

    def __init__(self, stream: TextIO = sys.stdout) -> None:
        self.stream = stream
        self._open: dict[str, Exchange] = {}

    def write(self, record: dict[str, Any]) -> None:
        kind = record["record"]
        if kind == "request":
            self._open[record["id"]] = Exchange(record["id"], record)
        elif kind == "note":
            self.stream.write(f"{clock(record['time'])} {record['level']}: {record['message']}\n")
        elif kind in ("response", "end") and record["id"] in self._open:
            exchange = self._open[record["id"]]
            if kind == "response":
                exchange.response = record
                if exchange.info.verb == "watch":
                    self.stream.write(exchange_line(exchange) + " (open)\n")
                return
            exchange.end = record
            del self._open[record["id"]]
            self.stream.write(exchange_line(exchange) + "\n")

    def flush(self) -> None:
        self.stream.flush()

    def close(self) -> None:
        self.flush()
