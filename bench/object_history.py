"""`k8s-wiretap history` of one object in large recordings built from real traffic.

The recorded history session (recordings/history-session.jsonl.gz: one Deployment changed
by apply, scale, label, set image and a server-side apply, and the controllers' status
writes) is repeated as `explain_recording` repeats a recording — fresh exchange ids, times
moved on — into recordings of 10,000 and 100,000 exchanges (`--sizes`). On each, in
processes of their own, one after the other: the history of Deployment default/web's
`spec.replicas` (`history REC deploy/web --field spec.replicas`, which reads the recording
as a stream), and beside it the peer, `explain REC --format json`, the stream every
exchange is explained by. The figures: seconds (wall clock, start-up included), CPU
seconds, peak resident memory, and the ratio of each to the peer's. Bounded memory is the
same peak at every size.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from bench.explain_recording import RECORDINGS, build, measured

SOURCE = RECORDINGS / "history-session.jsonl.gz"
SIZES = (10_000, 100_000)
HISTORY = ("history", "{path}", "deploy/web", "--field", "spec.replicas")
PEER = ("explain", "{path}", "--format", "json")


def run(words: tuple[str, ...], path: Path) -> tuple[float, float, int]:
    """Seconds (wall clock, CPU) and peak RSS of `k8s-wiretap WORDS` on `path`."""
    return measured([w.format(path=path) for w in words], path.parent)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    args = parser.parse_args(argv or [])
    print(f"history deploy/web --field spec.replicas, repeated {SOURCE.name}, beside explain")
    columns = [("exchanges", 10), ("command", 8), ("seconds", 8), ("CPU s", 7)]
    columns += [("peak RSS MB", 12), ("x explain", 10), ("RSS x", 6)]
    print(" ".join(f"{name:>{width}}" for name, width in columns))
    with tempfile.TemporaryDirectory(prefix="k8s-wiretap-bench-") as folder:
        for size in args.sizes:
            path = Path(folder) / f"history-{size}.jsonl"
            count = build(SOURCE, path, size)
            mine = run(HISTORY, path)
            peer = run(PEER, path)
            for name, (seconds, cpu, peak) in (("history", mine), ("explain", peer)):
                print(
                    f"{count:>10,} {name:>8} {seconds:>8.1f} {cpu:>7.1f} {peak / 1e6:>12,.0f} "
                    f"{cpu / peer[1]:>10.2f} {peak / peer[2]:>6.2f}",
                    flush=True,
                )
            path.unlink()


if __name__ == "__main__":
    main(sys.argv[1:])
