"""Record a real lab's audit log, at RequestResponse, into recordings/wide-session.audit.log.gz.

    .venv/bin/python scripts/record_audit.py [--out FILE]

A fresh lab of the default release, its audit policy at RequestResponse (`lab up
--audit-level RequestResponse`, in a folder of its own: no other lab is touched), runs the
wide session (k8s_wiretap/workshop/wide.py) with the greeter operator
(scripts/greeter_operator.py) beside it, as scripts/record_wide.py runs it, then is taken
down; its API server's audit log (`DIR/logs/audit.log`) is kept, with two changes, both
said on stderr with their counts:

- the bodies (`requestObject`, `responseObject`) of the resources whose objects carry
  secrets (Secrets, `serviceaccounts/token`, `tokenreviews`: kube/sensitive.py) are dropped,
  and so are mutating webhooks' patch annotations on them: at RequestResponse the log holds
  Secrets' values in the clear, and this file is committed. What is left of those events
  (who, verb, object, status) stays;
- the events of an auditID the log does not finish (no ResponseComplete or Panic: a watch
  still open when the lab went down) are dropped, so that every exchange of the file ends
  in it: `python -m bench audit_import` repeats the file a thousand times and more, and an
  exchange left open in every copy would pile up as no real log's do (a real watch ends
  within the API server's timeout, 5 to 10 minutes).

The file is gzipped (level 9) and must stay under 1 MB (the session takes about a minute
and a half). It is the input of `python -m bench audit_import`. Its contents differ from run
to run (ids, times, resourceVersions), not its shape.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from k8s_wiretap.kube.requestinfo import parse_request
from k8s_wiretap.kube.sensitive import SENSITIVE_RESOURCES
from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.workshop.scenarios import run_story
from k8s_wiretap.workshop.wide import WIDE

OUT = Path(__file__).resolve().parents[1] / "recordings" / "wide-session.audit.log.gz"
LIMIT = 1_000_000  # bytes, gzipped: the repository keeps recordings small
OPERATOR = Path(__file__).resolve().parent / "greeter_operator.py"
BODIES = ("requestObject", "responseObject")
PATCH_ANNOTATION = "patch.webhook.admission.k8s.io/"
ENDS = ("ResponseComplete", "Panic")


def sensitive(event: dict[str, Any]) -> bool:
    """Whether the event's objects may carry secrets, by its objectRef or its request line
    (as the importer tells them: importers/audit.py)."""
    ref = event.get("objectRef") or {}
    by_ref = tuple(str(ref.get(k) or "") for k in ("apiGroup", "resource", "subresource"))
    info = parse_request("GET", str(event.get("requestURI") or "/"))
    by_uri = (info.group, info.resource, info.subresource)
    return by_ref in SENSITIVE_RESOURCES or by_uri in SENSITIVE_RESOURCES


def cleaned(lines: Iterable[bytes]) -> tuple[list[bytes], int, int]:
    """The log's lines without sensitive bodies and unfinished exchanges; with how many
    events lost their bodies and how many were dropped."""
    events = [json.loads(line) for line in lines if line.strip()]
    ended = {e["auditID"] for e in events if e.get("stage") in ENDS}
    kept, stripped = [], 0
    for event in events:
        if event["auditID"] not in ended:
            continue
        if sensitive(event) and any(k in event for k in BODIES):
            stripped += 1
            for key in BODIES:
                event.pop(key, None)
            annotations = event.get("annotations") or {}
            for key in [k for k in annotations if k.startswith(PATCH_ANNOTATION)]:
                del annotations[key]
        kept.append(json.dumps(event, separators=(",", ":")).encode() + b"\n")
    return kept, stripped, len(events) - len(kept)


def session(work: Path) -> Path:
    """Run the wide session on a fresh RequestResponse lab in `work`; its audit log."""
    lab = Lab(work / "lab")
    state = lab.up(UpOptions(build=False, audit_level="RequestResponse"))
    try:
        with (work / "greeter.log").open("w") as log:
            greeter = subprocess.Popen(
                [sys.executable, str(OPERATOR), state.kubeconfig],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            run_story(WIDE, state.kubeconfig, work / "cache", settle=lambda: time.sleep(3))
        finally:
            greeter.terminate()
            greeter.wait(30)
    finally:
        lab.down()
    return work / "lab" / "logs" / "audit.log"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="record a lab's audit log at RequestResponse")
    parser.add_argument("--out", type=Path, default=OUT, help=f"where (default {OUT})")
    args = parser.parse_args(argv)
    with (
        tempfile.TemporaryDirectory(prefix="record-audit-") as scratch,
        session(Path(scratch)).open("rb") as log,
    ):
        lines, stripped, dropped = cleaned(log)
    with gzip.open(args.out, "wb", 9) as out:
        out.writelines(lines)
    size = args.out.stat().st_size
    print(
        f"recorded {args.out}: {len(lines):,} events ({size / 1e6:.2f} MB); bodies dropped "
        f"from {stripped:,} events on sensitive resources; {dropped:,} events of unfinished "
        "exchanges dropped",
        file=sys.stderr,
    )
    if size > LIMIT:
        print(f"{args.out} is over {LIMIT / 1e6:.0f} MB: trim the session", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
