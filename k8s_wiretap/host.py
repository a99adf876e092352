"""What this machine gives the process: `cores()`, the one count of cores that the proxy's
workers (`--workers`) and the partitions' jobs (`--jobs`) default to."""

from __future__ import annotations

import os

__all__ = ["cores"]


def cores() -> int:
    """The cores this process may run on: its CPU affinity (`os.process_cpu_count()` of
    Python 3.13), every core where the platform cannot say."""
    counted = getattr(os, "process_cpu_count", None)
    if counted is not None:
        return int(counted() or 1)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
