"""Record the wide session (k8s_wiretap/workshop/wide.py) into recordings/wide-session.jsonl.gz.

    .venv/bin/python scripts/record_wide.py [--out FILE]

The session runs against a fresh lab of the default release whose every client talks
through the wiretap (`lab up --via-proxy`): kubectl's traffic and the whole control
plane's (controller manager, scheduler, hollow kubelet), redacted as every recording is.
It takes about three minutes. The recording is the input of `python -m bench
explain_coverage`; a recording over 3 MB gzipped is refused (trim the session).
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import sys
import tempfile
import time
from pathlib import Path

from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.workshop.scenarios import run_story
from k8s_wiretap.workshop.wide import WIDE

OUT = Path(__file__).resolve().parents[1] / "recordings" / "wide-session.jsonl.gz"
LIMIT = 3_000_000  # bytes, gzipped: the repository keeps recordings small


def record(out: Path) -> int:
    """Record the session into `out`; returns its size in bytes."""
    with tempfile.TemporaryDirectory(prefix="record-wide-") as scratch:
        work = Path(scratch)
        lab = Lab(work / "lab")
        state = lab.up(UpOptions(build=False, record=work / "wide.jsonl"))
        try:
            run_story(WIDE, state.kubeconfig, work / "cache", settle=lambda: time.sleep(3))
        finally:
            lab.down()
        with (work / "wide.jsonl").open("rb") as source, gzip.open(out, "wb", 9) as sink:
            shutil.copyfileobj(source, sink)
    return out.stat().st_size


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="record the wide session")
    parser.add_argument("--out", type=Path, default=OUT, help=f"where (default {OUT})")
    args = parser.parse_args(argv)
    size = record(args.out)
    print(f"recorded {args.out} ({size / 1e6:.2f} MB)", file=sys.stderr)
    if size > LIMIT:
        print(f"{args.out} is over {LIMIT / 1e6:.0f} MB: trim the session", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
