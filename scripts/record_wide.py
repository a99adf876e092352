"""Record the wide session (k8s_wiretap/workshop/wide.py) into recordings/wide-session.jsonl.gz,
with `--story history` the history session (k8s_wiretap/workshop/history.py) into
recordings/history-session.jsonl.gz, with `--story kubelet` the kubelet's life
(k8s_wiretap/workshop/kubelet.py) into recordings/kubelet-life.jsonl.gz.

    .venv/bin/python scripts/record_wide.py [--story wide|history|kubelet] [--out FILE]

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
from contextlib import contextmanager, nullcontext
from pathlib import Path

from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.lab.layout import runtime_dir
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.workshop.history import HISTORY
from k8s_wiretap.workshop.kubelet import KUBELET, kubelet_life
from k8s_wiretap.workshop.scenarios import Story, run_story
from k8s_wiretap.workshop.wide import WIDE

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"
STORIES = {"wide": WIDE, "history": HISTORY, "kubelet": KUBELET}  # the greeter: wide only
OUT = {"wide": "wide-session", "history": "history-session", "kubelet": "kubelet-life"}
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


def record(story: Story, out: Path) -> int:
    """Record `story` into `out`; returns its size in bytes."""
    with tempfile.TemporaryDirectory(prefix="record-wide-") as scratch:
        work = Path(scratch)
        lab = Lab(work / "lab")
        state = lab.up(UpOptions(build=False, record=work / "session.jsonl"))
        try:
            beside = greeter(state.kubeconfig, work / "greeter.log") if story is WIDE else None
            with beside or nullcontext():
                if story is KUBELET:
                    _kubelet_life(lab, state, work / "cache")
                else:
                    run_story(story, state.kubeconfig, work / "cache", settle=_settle)
        finally:
            lab.down()
        with (work / "session.jsonl").open("rb") as source, gzip.open(out, "wb", 9) as sink:
            shutil.copyfileobj(source, sink)
    return out.stat().st_size


def _settle() -> None:
    time.sleep(3)  # the last status writes reach the recording


def _kubelet_life(lab: Lab, state: LabState, cache: Path) -> None:
    """The kubelet's story, given the lab's parts: the hollow kubelet's static pod folder
    (in its $TMPDIR, the lab's runtime folder) and its process to stop."""
    (static_pods,) = runtime_dir(lab.dir).glob("hollow-kubelet.*/static-pods*")
    kubelet = next(p for p in state.processes if p.name == "kubelet")

    def stop() -> None:
        if not kubelet.stop():
            raise RuntimeError("the kubelet had stopped before its time")

    kubelet_life(state.kubeconfig, cache, static_pods, stop)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="record the wide or the history session")
    parser.add_argument("--story", choices=sorted(STORIES), default="wide")
    parser.add_argument(
        "--out", type=Path, help="where (default recordings/STORY-session.jsonl.gz)"
    )
    args = parser.parse_args(argv)
    args.out = args.out or RECORDINGS / f"{OUT[args.story]}.jsonl.gz"
    size = record(STORIES[args.story], args.out)
    print(f"recorded {args.out} ({size / 1e6:.2f} MB)", file=sys.stderr)
    if size > LIMIT:
        print(f"{args.out} is over {LIMIT / 1e6:.0f} MB: trim the session", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
