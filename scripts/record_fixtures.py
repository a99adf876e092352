"""Record the stories of k8s_wiretap/workshop/scenarios.py into recordings/*.jsonl.gz.

    .venv/bin/python scripts/record_fixtures.py [--kube-version V] [STORY...]

Each story runs against a fresh lab whose every client talks through the wiretap
(`lab up --via-proxy`), so its recording holds kubectl's traffic and the whole control
plane's (controller manager, scheduler, hollow kubelet; protobuf included), driven by that
release's own kubectl. The recordings are redacted as always. On the default release a
story is written to `recordings/NAME-story.jsonl.gz`; on another release to
`recordings/NAME-story-MINOR.jsonl.gz` (the 1.20 one is kept as a regression input).
Tests decode these committed recordings, and the same stories live.
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
from k8s_wiretap.lab.releases import DEFAULT
from k8s_wiretap.lab.versions import resolve_release
from k8s_wiretap.workshop.scenarios import STORIES, restart_api_server, run_story

OUT = Path(__file__).resolve().parents[1] / "recordings"


def target(name: str, minor: str) -> Path:
    suffix = "" if minor == resolve_minor(DEFAULT) else f"-{minor}"
    return OUT / f"{name}-story{suffix}.jsonl.gz"


def resolve_minor(spec: str) -> str:
    return resolve_release(spec, lookup=False).minor_version


def record_into(name: str, version: str, recording: Path, work: Path) -> None:
    """Run story `name` on a fresh lab of `version` (in `work`), every client through the
    wiretap, then an API server restart; the recording goes to `recording` (JSON lines)."""
    release = resolve_release(version, lookup=False)
    lab = Lab(work / "lab")
    options = UpOptions(build=False, record=recording, kube_version=str(release))
    state = lab.up(options)
    try:
        run_story(name, state.kubeconfig, work / "cache", settle=lambda: time.sleep(3))
        restart_api_server(lab.restart, state.kubeconfig, work / "cache")
    finally:
        lab.down()


def record(name: str, version: str) -> Path:
    with tempfile.TemporaryDirectory(prefix="record-") as scratch:
        work = Path(scratch)
        record_into(name, version, work / f"{name}.jsonl", work)
        out = target(name, resolve_minor(version))
        with (work / f"{name}.jsonl").open("rb") as source, gzip.open(out, "wb", 9) as sink:
            shutil.copyfileobj(source, sink)
        return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="record the workshop stories")
    parser.add_argument("--kube-version", default=DEFAULT, help=f"release (default {DEFAULT})")
    parser.add_argument("stories", nargs="*", metavar="STORY", help=", ".join(STORIES))
    args = parser.parse_args(argv)
    unknown = sorted(set(args.stories) - set(STORIES))
    if unknown:
        parser.error(f"unknown story {', '.join(unknown)} (known: {', '.join(STORIES)})")
    for name in args.stories or list(STORIES):
        print(f"recorded {record(name, args.kube_version)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
