"""Record the wide session (k8s_wiretap/workshop/wide.py) into recordings/wide-session.jsonl.gz.

    .venv/bin/python scripts/record_wide.py [--out FILE]

The session runs against a fresh lab of the default release whose every client talks
through the wiretap (`lab up --via-proxy`): kubectl's traffic and the whole control
plane's (controller manager, scheduler, hollow kubelet), redacted as every recording is.
The greeter (scripts/greeter_operator.py), a third-party operator, runs from before the
first step to after the last with the lab's admin kubeconfig, kubectl's, so its traffic goes
through the wiretap too. It takes about a minute and a half. The recording is the input of
`python -m bench explain_coverage`; a recording over 3 MB gzipped is refused (trim the
session).
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.workshop.scenarios import run_story
from k8s_wiretap.workshop.wide import WIDE

OUT = Path(__file__).resolve().parents[1] / "recordings" / "wide-session.jsonl.gz"
LIMIT = 3_000_000  # bytes, gzipped: the repository keeps recordings small
OPERATOR = Path(__file__).resolve().parent / "greeter_operator.py"


@contextmanager
def greeter(kubeconfig: str, log: Path) -> Iterator[None]:
    """The greeter operator running against `kubeconfig` (its output in `log`) while the
    block runs, then stopped; had it stopped on its own, that is an error, with its log."""
    with log.open("w") as sink:
        process = subprocess.Popen(
            [sys.executable, str(OPERATOR), kubeconfig], stdout=sink, stderr=subprocess.STDOUT
        )
    try:
        yield
    finally:
        stopped = process.poll() is not None
        process.terminate()
        process.wait(30)
        if stopped:
            print(f"the greeter operator stopped early:\n{log.read_text()}", file=sys.stderr)
    if stopped:
        raise RuntimeError("the greeter operator stopped before the session ended")


def record(out: Path) -> int:
    """Record the session into `out`; returns its size in bytes."""
    with tempfile.TemporaryDirectory(prefix="record-wide-") as scratch:
        work = Path(scratch)
        lab = Lab(work / "lab")
        state = lab.up(UpOptions(build=False, record=work / "wide.jsonl"))
        try:
            with greeter(state.kubeconfig, work / "greeter.log"):
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
