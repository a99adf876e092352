"""Where records go: a new recording file (JSON Lines). Views add outputs of their own."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from k8s_wiretap.capture.format import header_record

__all__ = ["FileOutput"]


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
