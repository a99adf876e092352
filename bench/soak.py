"""Soak: a whole control plane through the wiretap (`lab up --via-proxy`) beside a direct lab,
for the same time (SOAK_SECONDS, 600 by default), each running the workshop's `web`
Deployment.

Every 2 s, in each lab, straight to the API server (not through the wiretap): whether node-1
is Ready, and the renewTime of node-1's lease (kube-node-lease) and of the leader-election
leases of kube-controller-manager and kube-scheduler (kube-system). Afterwards: the largest
gap between the renewals seen of each lease (node lease: renewed every 10 s, lasts 40 s;
leader leases: renewed every 2 s, last 15 s), leader changes, the samples with the node not
Ready, and the components' error lines (klog `E...`) that the tapped lab logged and the
direct lab did not (the messages compared with their numbers taken out).

`make soak` or `python -m bench soak`; `SOAK_SECONDS=60` for a short one.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from k8s_wiretap.capture.reader import iter_records
from k8s_wiretap.kube.client import ApiClient
from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.workshop import manifest

SECONDS = float(os.environ.get("SOAK_SECONDS", "600"))
SAMPLE = 2.0
LEASES = {
    "node-1 (kube-node-lease)": (
        "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-1",
        40.0,
    ),
    "kube-controller-manager": (
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager",
        15.0,
    ),
    "kube-scheduler": (
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler",
        15.0,
    ),
}
KLOG = re.compile(rb"^E\d{4} [\d:.]+\s+\d+ [^\]]*\] ?(.*)$")
STRUCTURED = re.compile(r'^("[^"]*")(?:.*?( err="[^"]*"))?')  # klog's message and its err=
NUMBERS = re.compile(r"\b[0-9a-f]{8}-[0-9a-f-]{27}\b|\d+(\.\d+)?")


def kind_of(message: str) -> str:
    """An error line's kind: a structured line's message and err= (not the pod names and
    ids beside them), any other line with its numbers taken out."""
    structured = STRUCTURED.match(message)
    if structured:
        message = structured.group(1) + (structured.group(2) or "")
    return NUMBERS.sub("#", message)[:160]


@dataclass
class Watch:
    """What was seen of one lab."""

    name: str
    client: ApiClient
    renewals: dict[str, list[float]] = field(default_factory=dict)
    holders: dict[str, set[str]] = field(default_factory=dict)
    not_ready: int = 0
    failed: int = 0
    why: str = ""  # the first failed sample's error
    samples: int = 0

    def sample(self) -> None:
        self.samples += 1
        try:
            node = self.client.get("/api/v1/nodes/node-1").json()
            ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
            self.not_ready += not (ready and ready[0]["status"] == "True")
            for lease, (path, _) in LEASES.items():
                spec = self.client.get(path).json()["spec"]
                renewed = datetime.fromisoformat(spec["renewTime"]).timestamp()
                seen = self.renewals.setdefault(lease, [])
                if not seen or seen[-1] != renewed:
                    seen.append(renewed)
                self.holders.setdefault(lease, set()).add(spec.get("holderIdentity", ""))
        except (OSError, ValueError, KeyError, TypeError) as error:
            self.failed += 1
            self.why = self.why or f"{type(error).__name__}: {error}"


def client_of(state: LabState) -> ApiClient:
    pki = Path(state.kubeconfig).parent / "pki"
    return ApiClient(state.server, pki / "ca.crt", pki / "admin.crt", pki / "admin.key")


EXAMPLES: dict[str, str] = {}  # an error kind → its first line in full


def errors(logs: Path) -> dict[str, Counter[str]]:
    """Per component, its klog error lines with their numbers taken out, counted."""
    found: dict[str, Counter[str]] = {}
    for log in sorted(logs.glob("*.log")):
        if log.name == "audit.log":
            continue
        counter: Counter[str] = Counter()
        for line in log.read_bytes().splitlines():
            match = KLOG.match(line)
            if match:
                message = match.group(1).decode(errors="replace")
                kind = kind_of(message)
                counter[kind] += 1
                EXAMPLES.setdefault(kind, message[:400])
        found[log.stem] = counter
    return found


def start(work: Path, name: str, record: Path | None) -> tuple[Lab, LabState]:
    lab = Lab(work / name)
    state = lab.up(UpOptions(build=False, record=record))
    subprocess.run(
        ["kubectl", "--kubeconfig", state.kubeconfig, "apply", "-f", "-"],
        input=manifest("web"),
        text=True,
        check=True,
        capture_output=True,
    )
    return lab, state


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="soak-") as scratch, ExitStack() as stack:
        work = Path(scratch)
        record = work / "control-plane.jsonl"
        labs: dict[str, tuple[Lab, LabState]] = {}
        for name, rec in (("tapped", record), ("direct", None)):
            lab, state = start(work, name, rec)
            stack.callback(lab.down)
            labs[name] = (lab, state)
        watches = [Watch(name, client_of(state)) for name, (_, state) in labs.items()]
        print(f"soak: both labs up, {SECONDS:g} s", file=sys.stderr)
        began = time.monotonic()
        while time.monotonic() - began < SECONDS:
            tick = time.monotonic()
            for watch in watches:
                watch.sample()
            time.sleep(max(0.0, SAMPLE - (time.monotonic() - tick)))
        stopped = {
            n: [p.name for p in s.stopped()]
            for n, (lab, _) in labs.items()
            if (s := lab.state()) is not None
        }
        report(
            watches,
            {n: Path(s.kubeconfig).parent / "logs" for n, (_, s) in labs.items()},
            stopped,
            record,
        )


def gaps(renewals: list[float]) -> list[float]:
    return [b - a for a, b in itertools.pairwise(renewals)]


def report(
    watches: list[Watch], logs: dict[str, Path], stopped: dict[str, list[str]], record: Path
) -> None:
    print(f"\nsoak: {SECONDS:g} s, sampled every {SAMPLE:g} s, {os.cpu_count()} cores\n")
    print("| lab | samples | node not Ready | failed samples | processes exited |")
    print("|---|---|---|---|---|")
    for watch in watches:
        print(
            f"| {watch.name} | {watch.samples} | {watch.not_ready} | {watch.failed} "
            f"| {', '.join(stopped.get(watch.name, [])) or 'none'} |"
        )
    for watch in watches:
        if watch.why:
            print(f"{watch.name}: first failed sample: {watch.why}")
    print("\n| lease | lab | renewals seen | largest gap | lasts | holders |")
    print("|---|---|---|---|---|---|")
    for lease, (_, lasts) in LEASES.items():
        for watch in watches:
            seen = watch.renewals.get(lease, [])
            largest = max(gaps(seen), default=float("nan"))
            late = " LATE" if largest >= lasts else ""
            print(
                f"| {lease} | {watch.name} | {len(seen)} | {largest:.1f} s{late} | {lasts:g} s "
                f"| {len(watch.holders.get(lease, set()))} |"
            )
    found = {name: errors(folder) for name, folder in logs.items()}
    print("\n| component | error lines, tapped | direct | kinds only in tapped |")
    print("|---|---|---|---|")
    only: list[tuple[str, str, int]] = []
    for component, counter in found["tapped"].items():
        direct = found["direct"].get(component, Counter())
        extra = [(component, m, n) for m, n in counter.items() if m not in direct]
        only += extra
        print(f"| {component} | {sum(counter.values())} | {sum(direct.values())} | {len(extra)} |")
    for component, counter in found["tapped"].items():
        for kind, count in counter.most_common(3):
            print(f"most common, {component} (tapped): x{count}: {kind}")
    for component, message, count in sorted(only, key=lambda e: -e[2])[:20]:
        print(f"tapped only: {component} x{count}: {EXAMPLES.get(message, message)}")
    exchanges = sum(1 for r in iter_records(record, []) if r["record"] == "end")
    print(f"\nthe wiretap recorded {exchanges} exchanges ({record.stat().st_size >> 20} MiB)")


if __name__ == "__main__":
    main()
