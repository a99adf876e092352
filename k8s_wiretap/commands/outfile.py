"""The one rule for a file an output is written to (`export --FORMAT OUT`, the pictures a
Markdown handout writes beside OUT).

- `-` is stdout, for a format that may go there (`formats.Format.stdout`).
- OUT is never the recording, and never replaces an existing file unless `--overwrite`
  says so: nothing overwrites a user's file unasked. Both are checked before anything is
  read or written (`check`), and again as OUT is made (`new_file`): something that
  appeared meanwhile is not replaced either.
- OUT is written 0600 (it holds what the recording holds) under a temporary name beside it
  and renamed to OUT once complete (`capture.outputs.whole_file`): a full disk, an I/O
  error or a signal leaves no OUT (an existing one as it was). A symlink at OUT is
  replaced, never followed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from k8s_wiretap.capture.outputs import reason, recording_problem, whole_file
from k8s_wiretap.errors import UsageError, WiretapError

__all__ = ["OVERWRITE", "STDOUT", "check", "new_file", "said"]

STDOUT = Path("-")
OVERWRITE = "--overwrite"  # the option that lets an OUT replace an existing file


def check(label: str, path: Path, recording: Path, *, overwrite: bool) -> None:
    """UsageError (`label PATH ...`) when `path` may not be written: it is the recording, its
    folder is missing, or it exists and `overwrite` was not given."""
    if _same(path, recording):
        raise UsageError(f"{label} {path} is the recording")
    problem = recording_problem(path, overwrite=overwrite, hint=OVERWRITE)
    if problem:
        raise UsageError(f"{label} {problem}")


def _same(out: Path, recording: Path) -> bool:
    """Whether `out` is the recording (the same file, or the same path once resolved)."""
    try:
        return os.path.samefile(out, recording)
    except OSError:
        return out.resolve() == recording.resolve()


@contextmanager
def new_file(label: str, path: Path, *, overwrite: bool) -> Iterator[BinaryIO]:
    """A new file, 0600, that becomes `path` once the block ends without an error. An OUT
    that cannot be made is a usage error (exit 2), one that cannot be written whole (a full
    disk) a failure (exit 1): `label PATH: why (PATH not written)`; neither leaves OUT."""
    opened = False
    try:
        with whole_file(path, overwrite=overwrite) as out:
            opened = True
            yield out
    except OSError as error:
        kind = WiretapError if opened else UsageError
        raise kind(f"{label} {path}: {reason(error)} ({path} not written)") from error


def said(what: str, where: Path | str) -> None:
    """Say on stderr what was written where (a file, a collector's address), once it is:
    `k8s-wiretap: WHAT to WHERE`."""
    print(f"k8s-wiretap: {what} to {where}", file=sys.stderr)
