"""`k8s-wiretap explain --format json` over large recordings built from real traffic.

A committed recording (by default recordings/apply-story.jsonl.gz, else the first
apply-story recording there is; `--recording PATH` for another) is repeated — every record
of it, each repetition with fresh exchange ids and its times moved past the one before —
into recordings of 10,000 and 100,000 exchanges (`--sizes`; `--sizes 1000000` for the
million). Each is explained by the real command in a process of its own, output to
/dev/null; the figures are exchanges per second (wall clock, start-up included), the CPU
seconds that process used and exchanges per CPU second (what a busy machine changes
least), and its peak resident memory. Linear time means the same rate at every size; bounded
memory, the same peak.

Every body of a repetition is one the first copy had, so after the first copy the decode
cache (`decode/cache.py`) answers for all of them: the figures measure the explanation
(who, summaries, etcd, chains, apply fields, patch replays), the watch events' decoding
and the JSON, with far fewer body decodes than new traffic needs (in one real recording
about 60% of the bodies are new). `--no-cache` turns the cache off in the explaining
process, so that every body is decoded: the other bound.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from k8s_wiretap.capture.reader import iter_records

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"
SIZES = (10_000, 100_000)


def default_recording() -> Path:
    """The apply story as committed: apply-story.jsonl.gz, else any apply-story-*."""
    preferred = RECORDINGS / "apply-story.jsonl.gz"
    if preferred.exists():
        return preferred
    found = sorted(RECORDINGS.glob("apply-story*.jsonl*"))
    if not found:
        raise SystemExit(f"no apply-story recording in {RECORDINGS}")
    return found[0]


def build(source: Path, path: Path, exchanges: int) -> int:
    """Write a recording of about `exchanges` exchanges; returns how many it holds."""
    warnings: list[str] = []
    records = list(iter_records(source, warnings))
    header, body = records[0], records[1:]
    times = [float(r["time"]) for r in body if "time" in r]
    span = max(times) - min(times) + 1.0
    per_copy = sum(1 for r in body if r["record"] == "request")
    copies = -(-exchanges // per_copy)
    with path.open("w") as out:
        out.write(json.dumps(header) + "\n")
        for copy in range(copies):
            lines = []
            for record in body:
                shifted = dict(record)
                if "id" in shifted:
                    shifted["id"] = f"{shifted['id']}-{copy}"
                if "time" in shifted:
                    shifted["time"] = float(shifted["time"]) + copy * span
                lines.append(json.dumps(shifted, separators=(",", ":")) + "\n")
            out.writelines(lines)
    return copies * per_copy


NO_CACHE = (
    "import sys, k8s_wiretap.explain.analysis as a; a.DECODED.limit = 0; "
    "from k8s_wiretap.cli import main; sys.exit(main(sys.argv[1:]))"
)


def explain(path: Path, *, cache: bool = True) -> tuple[float, float, int]:
    """Seconds for `k8s-wiretap explain PATH --format json` (wall clock, and the CPU
    seconds its process used: on a shared machine the steadier figure), its peak RSS."""
    words = ["explain", str(path), "--format", "json"]
    return measured(words, path.parent) if cache else measured(words, path.parent, NO_CACHE)


def measured(words: list[str], folder: Path, code: str = "") -> tuple[float, float, int]:
    """`k8s-wiretap WORDS` (or `python -c CODE WORDS`) run to its end, output discarded:
    seconds (wall clock, CPU) and its own peak RSS (`audit_import.run`: VmHWM, read at its
    exit; a child's ru_maxrss carries its parent's peak)."""
    from bench.audit_import import run

    found = run("-c", code, words, folder) if code else run("-m", "k8s_wiretap", words, folder)
    return found.seconds, found.cpu, found.peak


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recording", type=Path, default=None, help="the recording repeated")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--keep", type=Path, default=None, help="build the files in this folder")
    parser.add_argument("--no-cache", action="store_true", help="decode every body")
    args = parser.parse_args(argv or [])
    source = args.recording or default_recording()
    cached = "" if not args.no_cache else ", no decode cache"
    print(f"explain --format json over repeated real exchanges ({source.name}{cached})")
    columns = [("exchanges", 10), ("file MB", 8), ("seconds", 8), ("exchanges/s", 12)]
    columns += [("CPU s", 8), ("per CPU s", 10), ("peak RSS MB", 12)]
    print(" ".join(f"{name:>{width}}" for name, width in columns))
    with tempfile.TemporaryDirectory(prefix="k8s-wiretap-bench-") as temporary:
        folder = args.keep or Path(temporary)
        for size in args.sizes:
            path = folder / f"explain-{size}.jsonl"
            count = build(source, path, size)
            seconds, cpu, peak = explain(path, cache=not args.no_cache)
            megabytes = path.stat().st_size / 1e6
            print(
                f"{count:>10,} {megabytes:>8.0f} {seconds:>8.1f} {count / seconds:>12,.0f} "
                f"{cpu:>8.1f} {count / cpu:>10,.0f} {peak / 1e6:>12,.0f}",
                flush=True,
            )
            if args.keep is None:
                path.unlink()


if __name__ == "__main__":
    main(sys.argv[1:])
