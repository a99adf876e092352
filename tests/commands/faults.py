"""Faults of the real world for a real `k8s-wiretap` subprocess: a disk that takes only so
many bytes of a file (RLIMIT_FSIZE: a write past it fails with EFBIG, as a full disk's does
with ENOSPC), a small tmpfs (ENOSPC itself, as root), and an audit log big enough that an
import of it is still going when a signal comes."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from tests.importers.test_audit_input import EVENT


def limited(*args: str, fsize: int) -> subprocess.CompletedProcess[str]:
    """`k8s-wiretap ARGS` that may write no file past `fsize` bytes (SIGXFSZ ignored, so
    the write fails with EFBIG instead of the process dying)."""

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return subprocess.run(
        [sys.executable, "-m", "k8s_wiretap", *args],
        capture_output=True,
        text=True,
        preexec_fn=limit,
        timeout=300,
        check=False,
    )


def audit_log(path: Path, events: int) -> Path:
    """A gzipped audit log of `events` finished requests, each its own auditID (a few
    hundred KiB on disk for 100,000: an import of it takes seconds)."""
    line = json.dumps({**EVENT, "auditID": "ID"}).replace('"ID"', '"%d"')
    data = "".join(line % number + "\n" for number in range(events)).encode()
    path.write_bytes(gzip.compress(data, compresslevel=1))
    return path


@contextlib.contextmanager
def tmpfs(where: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` ("256k") mounted at `where` (root only), unmounted after."""
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True)


def is_root() -> bool:
    return os.geteuid() == 0
