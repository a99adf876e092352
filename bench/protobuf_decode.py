"""Protobuf decoding throughput on real API server traffic: watch events and LIST bodies.

A lab runs a Deployment of PODS replicas on the hollow kubelet; its protobuf pod watch,
replayed from before the Deployment, gives typical Pod MODIFIED events (scheduler binding,
kubelet status updates, with managedFields), and a protobuf LIST of the pods a typical LIST
body. Bodies are decoded with the schema of the lab's release (its `/version`). Targets: at
least 5,000 watch events per second (decode_watch_event, each event's object decoded in full).
Also shown: one Pod with every field set (the compatibility fixture of 1.20, and of the default
release, from its k8s.io/api module), the worst case.

Each figure is the best of RUNS runs of at least a second, in wall-clock time and in CPU
time of this process (the machine's other work only ever slows things down).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from k8s_wiretap.decode.protobuf import decode_object, decode_watch_event
from k8s_wiretap.kube import schema
from k8s_wiretap.kube.client import ApiClient
from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.lab.apimodules import api_testdata, release
from k8s_wiretap.lab.layout import Layout
from k8s_wiretap.lab.readiness import admin_client
from k8s_wiretap.wire.framing import LengthPrefixFramer
from k8s_wiretap.wire.protowire import BYTES, Field, encode
from k8s_wiretap.workshop import manifest

PODS = int(os.environ.get("BENCH_PODS", "20"))
RUNS = 5
PROTOBUF = "application/vnd.kubernetes.protobuf"
FIXTURE_POD = (
    Path(__file__).resolve().parents[1] / "tests/decode/fixtures/testdata-HEAD/core.v1.Pod.pb"
)


def best_rates(work: Callable[[], int]) -> tuple[float, float]:
    """(items per wall-clock second, items per CPU second), best of RUNS runs of >= 1 s."""
    wall_rates, cpu_rates = [], []
    for _ in range(RUNS):
        count = 0
        wall, cpu = time.perf_counter(), time.process_time()
        while time.perf_counter() - wall < 1.0:
            count += work()
        wall_rates.append(count / (time.perf_counter() - wall))
        cpu_rates.append(count / max(time.process_time() - cpu, 1e-9))
    return max(wall_rates), max(cpu_rates)


def kubectl(kubeconfig: str, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(
        ["kubectl", "--kubeconfig", kubeconfig, *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout


def wait_running(client: ApiClient, count: int) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        pods = client.get("/api/v1/namespaces/bench/pods").json()["items"]
        if sum(p.get("status", {}).get("phase") == "Running" for p in pods) >= count:
            return
        time.sleep(0.5)
    raise RuntimeError(f"{count} pods did not start")


def pod_traffic(work: Path) -> tuple[list[bytes], bytes, str]:
    """Pod MODIFIED watch frames and a pod LIST body, in protobuf, from a fresh lab, and the
    lab's gitVersion."""
    lab = Lab(work / "lab")
    state = lab.up(UpOptions(build=False))
    try:
        client = admin_client(Layout(Path(state.kubeconfig).parent, state.ports))
        version = str(client.get("/version").json()["gitVersion"])
        start = client.get("/api/v1/pods?limit=1").json()["metadata"]["resourceVersion"]
        kubectl(state.kubeconfig, "create", "namespace", "bench")
        web = manifest("web").replace("replicas: 2", f"replicas: {PODS}")
        kubectl(state.kubeconfig, "apply", "-n", "bench", "-f", "-", stdin=web)
        wait_running(client, PODS)
        query = f"watch=1&resourceVersion={start}&timeoutSeconds=1"
        stream = client.get(f"/api/v1/namespaces/bench/pods?{query}", accept=PROTOBUF, timeout=30)
        frames = LengthPrefixFramer().feed(stream.body)
        listed = client.get("/api/v1/namespaces/bench/pods", accept=PROTOBUF).body
    finally:
        lab.down()
    modified = [f for f in frames if decode_watch_event(f, release=version)["type"] == "MODIFIED"]
    return modified, listed, version


def fixture_frame(pod: bytes) -> bytes:
    extension = encode([Field(1, BYTES, pod)])
    return encode([Field(1, BYTES, b"MODIFIED"), Field(2, BYTES, extension)])


def row(name: str, unit: str, size: float, rates: tuple[float, float]) -> None:
    wall, cpu = rates
    print(f"| {name} | {size:,.0f} B | {wall:,.0f} {unit}/s | {cpu:,.0f} {unit}/s |")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-protobuf-") as scratch:
        frames, listed, version = pod_traffic(Path(scratch))
    items = len(decode_object(listed, release=version)["items"])
    worst = fixture_frame(FIXTURE_POD.read_bytes())
    newest_pod = api_testdata(release(schema.DEFAULT)) / "HEAD" / "core.v1.Pod.pb"
    worst_newest = fixture_frame(newest_pod.read_bytes())

    def events() -> int:
        for frame in frames:
            decode_watch_event(frame, release=version)
        return len(frames)

    print(
        f"\n{len(frames)} Pod MODIFIED events, LIST of {items} pods, Kubernetes {version}"
        " (Python decoder)\n"
    )
    print("| body | size | wall clock | CPU time |")
    print("|---|---|---|---|")
    row(
        "Pod MODIFIED watch event",
        "events",
        sum(map(len, frames)) / len(frames),
        best_rates(events),
    )
    row(
        f"pod LIST ({items} pods)",
        "objects",
        len(listed),
        best_rates(lambda: len(decode_object(listed, release=version)["items"])),
    )
    row(
        "Pod with every field set (1.20)",
        "events",
        len(worst),
        best_rates(lambda: bool(decode_watch_event(worst, release="1.20"))),
    )
    row(
        f"Pod with every field set ({schema.DEFAULT})",
        "events",
        len(worst_newest),
        best_rates(lambda: bool(decode_watch_event(worst_newest, release=schema.DEFAULT))),
    )
    print("\ntarget: >= 5,000 watch events/s")


if __name__ == "__main__":
    main()
