"""Where records go: a new recording file (JSON Lines). Views add outputs of their own."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from k8s_wiretap.capture.format import header_record

__all__ = ["FileOutput", "reason", "recording_problem"]


def reason(error: BaseException) -> str:
    """Why an output failed, in a few words ("No space left on device")."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__


def recording_problem(path: Path, *, overwrite: bool, hint: str) -> str | None:
    """Why a new recording cannot be written at `path` (None if it can), to say before
    anything starts; `hint` tells how to replace an existing file."""
    if not path.parent.is_dir():
        return f"folder {path.parent} does not exist"
    if path.is_dir():
        return f"{path} is a folder"
    if not overwrite and os.path.lexists(path):
        return f"{path} exists ({hint})"
    return None


class FileOutput:
    """Appends records to a new recording file (0600: it holds cluster data).

    The file must not exist (`O_EXCL`: nothing that appeared since a check is replaced)
    unless `overwrite`, which empties an existing one. `header`: fields the header adds
    (a part's, `parts.py`). Open it only once the proxy is sure
    to run: opening is what creates or empties the file.
    """

    def __init__(
        self,
        path: Path,
        *,
        redacted: bool,
        max_body: int,
        overwrite: bool = False,
        header: dict[str, Any] | None = None,
    ) -> None:
        self.path = path
        replace = os.O_TRUNC if overwrite else os.O_EXCL
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | replace, 0o600)
        self._file = os.fdopen(fd, "w", encoding="utf-8")
        self.write(header_record(redacted=redacted, max_body=max_body, **(header or {})))
        self.flush()

    def write(self, record: dict[str, Any]) -> None:
        self._file.write(json.dumps(record, separators=(",", ":"), ensure_ascii=False))
        self._file.write("\n")

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def describe(self, error: BaseException) -> str:
        """What the recorder says when this file fails (see `capture.recorder.Output`)."""
        return f"recording stopped: {self.path}: {reason(error)}"
