"""Record the stories of k8s_wiretap/workshop/scenarios.py into recordings/*.jsonl.gz.

    .venv/bin/python scripts/record_fixtures.py [STORY...]

Each story runs against a fresh lab whose every client talks through the wiretap
(`lab up --via-proxy`), so its recording holds kubectl's traffic and the whole control
plane's (controller manager, scheduler, hollow kubelet; protobuf included). The recordings
are redacted as always. Tests decode these committed recordings, and the same stories live.
"""

from __future__ import annotations

import gzip
import shutil
import sys
import tempfile
import time
from pathlib import Path

from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.workshop.scenarios import STORIES, restart_api_server, run_story

OUT = Path(__file__).resolve().parents[1] / "recordings"


def record(name: str) -> Path:
    with tempfile.TemporaryDirectory(prefix="record-") as scratch:
        work = Path(scratch)
        lab = Lab(work / "lab")
        state = lab.up(UpOptions(build=False, record=work / f"{name}.jsonl"))
        try:
            run_story(name, state.kubeconfig, work / "cache", settle=lambda: time.sleep(3))
            restart_api_server(lab.restart, state.kubeconfig, work / "cache")
        finally:
            lab.down()
        target = OUT / f"{name}-story.jsonl.gz"
        with (work / f"{name}.jsonl").open("rb") as source, gzip.open(target, "wb", 9) as sink:
            shutil.copyfileobj(source, sink)
        return target


def main(names: list[str]) -> int:
    for name in names or list(STORIES):
        print(f"recorded {record(name)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
