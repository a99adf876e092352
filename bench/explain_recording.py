"""`k8s-wiretap explain --format json` over large recordings built from real traffic.

The recording of the apply story (recordings/apply-story.jsonl.gz) is repeated — every
record of it, each repetition with fresh exchange ids and its times moved past the one
before — into recordings of 10,000 and 100,000 exchanges. Each is explained by the real
command in a process of its own, output to /dev/null; the figures are exchanges per second
(wall clock, start-up included) and the process's peak resident memory. Linear time means
the same rate at both sizes.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from k8s_wiretap.capture.reader import read_records

RECORDING = Path(__file__).resolve().parents[1] / "recordings" / "apply-story.jsonl.gz"
SIZES = (10_000, 100_000)


def build(path: Path, exchanges: int) -> int:
    """Write a recording of about `exchanges` exchanges; returns how many it holds."""
    records, _ = read_records(RECORDING)
    header, body = records[0], records[1:]
    times = [float(r["time"]) for r in body if "time" in r]
    span = max(times) - min(times) + 1.0
    per_copy = sum(1 for r in body if r["record"] == "request")
    copies = -(-exchanges // per_copy)
    with path.open("w") as out:
        out.write(json.dumps(header) + "\n")
        for copy in range(copies):
            for record in body:
                shifted = dict(record)
                if "id" in shifted:
                    shifted["id"] = f"{shifted['id']}-{copy}"
                if "time" in shifted:
                    shifted["time"] = float(shifted["time"]) + copy * span
                out.write(json.dumps(shifted, separators=(",", ":")) + "\n")
    return copies * per_copy


def explain(path: Path) -> tuple[float, int]:
    """Seconds for `k8s-wiretap explain PATH --format json`, and its peak RSS in bytes."""
    command = [sys.executable, "-m", "k8s_wiretap", "explain", str(path), "--format", "json"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, check=True)
    elapsed = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return elapsed, max(peak, before) * 1024


def main() -> None:
    print("explain --format json over repeated real exchanges")
    columns = ("exchanges", 10), ("file MB", 8), ("seconds", 8), ("exchanges/s", 12)
    print(" ".join(f"{name:>{width}}" for name, width in columns), f"{'peak RSS MB':>12}")
    with tempfile.TemporaryDirectory(prefix="k8s-wiretap-bench-") as folder:
        for size in SIZES:
            path = Path(folder) / f"explain-{size}.jsonl"
            count = build(path, size)
            seconds, peak = explain(path)
            megabytes = path.stat().st_size / 1e6
            print(
                f"{count:>10,} {megabytes:>8.0f} {seconds:>8.1f} {count / seconds:>12,.0f} "
                f"{peak / 1e6:>12,.0f}"
            )
            path.unlink()


if __name__ == "__main__":
    main()
