"""Where records go: a recording file (JSON Lines), or a line per exchange on a console."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.format import header_record
from k8s_wiretap.views.lines import clock, exchange_line

__all__ = ["ConsoleOutput", "FileOutput"]


class FileOutput:
    """Appends records to a new recording file (0600: it holds cluster data)."""

    def __init__(self, path: Path, *, redacted: bool, max_body: int) -> None:
        self.path = path
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        self._file = os.fdopen(fd, "w", encoding="utf-8")
        self.write(header_record(redacted=redacted, max_body=max_body))
        self.flush()

    def write(self, record: dict[str, Any]) -> None:
        self._file.write(json.dumps(record, separators=(",", ":"), ensure_ascii=False))
        self._file.write("\n")

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()


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
