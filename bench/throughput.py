"""Throughput under load: requests per second and latency p50/p99 of GET of one ConfigMap,
16 keep-alive connections for 10 s per target, through kubectl proxy, bare mitmdump (reverse
mode), k8s-wiretap recording (`proxy --quiet --record FILE`, one run per `--workers` count
when the proxy has that option) and direct, interleaved round by round so that the machine's
noise hits all alike.

The load comes from bench/loadgen (Go, standard library only), built once into
~/.cache/k8s-wiretap/tools. Each wiretap run is a fresh proxy with a recording of its own:
after the run the exchanges recorded are counted against the requests the load generator
made (a 1 s warm-up included), and a difference is reported.

Goals (issue): wiretap at least 0.5x kubectl proxy's requests per second on 2 cores (with
workers); median latency at most 1.0x bare mitmdump's and p99 at most 1.2x.

`python -m bench throughput [--rounds 3] [--seconds 10] [--connections 16] [--workers 1,2]`
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.proxy_latency import BIN, process
from k8s_wiretap.capture.reader import iter_records
from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.proxy.server import free_port

LOADGEN_SOURCE = Path(__file__).resolve().parent / "loadgen"
TOOLS = Path.home() / ".cache" / "k8s-wiretap" / "tools"


def loadgen() -> Path:
    """bench/loadgen built once (again when its source is newer than the binary)."""
    binary = TOOLS / "loadgen"
    newest = max(p.stat().st_mtime for p in LOADGEN_SOURCE.iterdir())
    if not binary.exists() or binary.stat().st_mtime < newest:
        TOOLS.mkdir(parents=True, exist_ok=True)
        subprocess.run(["go", "build", "-o", str(binary), "."], cwd=LOADGEN_SOURCE, check=True)
    return binary


@dataclass(frozen=True)
class Client:
    """How the load generator reaches one target: its base URL and TLS flags."""

    base: str
    flags: tuple[str, ...] = ()

    def run(self, mode: str, path: str, *options: str) -> Any:
        argv = [str(loadgen()), mode, "-url", self.base + path, *self.flags, *options]
        done = subprocess.run(argv, check=True, capture_output=True, text=True)
        return json.loads(done.stdout)


def direct_client(server: str, pki: Path) -> Client:
    flags = ("-ca", str(pki / "ca.crt"), "-cert", str(pki / "admin.crt"))
    return Client(server, (*flags, "-key", str(pki / "admin.key")))


def has_workers() -> bool:
    """Whether `k8s-wiretap proxy` takes --workers."""
    help_text = subprocess.run(
        [str(BIN / "k8s-wiretap"), "proxy", "--help"], capture_output=True, text=True
    ).stdout
    return "--workers" in help_text


@contextmanager
def wiretap(kubeconfig: str, record: Path, workers: int | None) -> Iterator[Client]:
    """A fresh k8s-wiretap recording to `record`, for one run."""
    port = free_port()
    argv = [str(BIN / "k8s-wiretap"), "proxy", "--kubeconfig", kubeconfig, "--quiet"]
    argv += ["--listen", f"127.0.0.1:{port}", "--record", str(record)]
    argv += ["--confdir", str(record.parent / "confdir")]
    if workers is not None:
        argv += ["--workers", str(workers)]
    with process(argv, port):
        yield Client(f"http://127.0.0.1:{port}")


def recorded(record: Path, path: str) -> tuple[int, int]:
    """Exchanges to `path` ended in the recording (every part of it: `rec.jsonl`,
    `rec.jsonl.1`, ... one per worker, read as one), and the other exchanges in it."""
    ids: set[Any] = set()
    ours = others = 0
    for line in iter_records(record, []):
        if line["record"] == "request" and line.get("path") == path:
            ids.add(line["id"])
        elif line["record"] == "end":
            if line["id"] in ids:
                ours += 1
            else:
                others += 1
    return ours, others


def start_peers(stack: ExitStack, work: Path, server: str, kubeconfig: str) -> dict[str, Client]:
    pki = work / "lab" / "pki"
    (work / "admin.pem").write_bytes(
        (pki / "admin.crt").read_bytes() + (pki / "admin.key").read_bytes()
    )
    mitm, kubectl = free_port(), free_port()
    upstream = server.removeprefix("https://")
    mitmdump = [
        str(BIN / "mitmdump"),
        "-q",
        "--mode",
        f"reverse:https://{upstream}@127.0.0.1:{mitm}",
    ]
    mitmdump += ["--set", f"confdir={work / 'mitm'}"]
    mitmdump += ["--set", f"client_certs={work / 'admin.pem'}"]
    mitmdump += ["--set", f"ssl_verify_upstream_trusted_ca={pki / 'ca.crt'}"]
    stack.enter_context(process(mitmdump, mitm))
    stack.enter_context(
        process(["kubectl", "--kubeconfig", kubeconfig, "proxy", "--port", str(kubectl)], kubectl)
    )
    return {
        "direct": direct_client(server, pki),
        "mitmdump": Client(f"http://127.0.0.1:{mitm}"),
        "kubectl proxy": Client(f"http://127.0.0.1:{kubectl}"),
    }


def arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench throughput")
    parser.add_argument("--rounds", type=int, default=int(os.environ.get("BENCH_ROUNDS", "3")))
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--workers", default="1,2", help="worker counts, when --workers exists")
    return parser.parse_args(argv or [])


def main(argv: list[str] | None = None) -> None:
    args = arguments(argv)
    worker_counts: list[int | None] = (
        [int(n) for n in args.workers.split(",")] if has_workers() else [None]
    )
    if worker_counts == [None]:
        print("k8s-wiretap proxy has no --workers: one process", file=sys.stderr)
    load = ("-c", str(args.connections), "-d", f"{args.seconds}s")
    path = "/api/v1/namespaces/bench/configmaps/cm-0"
    with tempfile.TemporaryDirectory(prefix="bench-") as scratch, ExitStack() as stack:
        work = Path(scratch)
        lab = Lab(work / "lab")
        state = lab.up(UpOptions(components=("apiserver",), build=False))
        stack.callback(lab.down)
        kubectl = ["kubectl", "--kubeconfig", state.kubeconfig]
        subprocess.run([*kubectl, "create", "namespace", "bench"], check=True, capture_output=True)
        subprocess.run(
            [*kubectl, "-n", "bench", "create", "configmap", "cm-0", "--from-literal=key=value"],
            check=True,
            capture_output=True,
        )
        peers = start_peers(stack, work, state.server, state.kubeconfig)
        results: dict[str, list[dict[str, Any]]] = {}
        lost: list[str] = []
        for round_ in range(args.rounds):
            for name, client in peers.items():
                client.run("get", path, "-c", str(args.connections), "-d", "1s")  # warm-up
                results.setdefault(name, []).append(client.run("get", path, *load))
            for workers in worker_counts:
                name = "k8s-wiretap" + (f" x{workers}" if workers is not None else "")
                folder = work / f"run-{round_}-{workers}"
                folder.mkdir()
                with wiretap(state.kubeconfig, folder / "rec.jsonl", workers) as client:
                    warm = client.run("get", path, "-c", str(args.connections), "-d", "1s")
                    result = client.run("get", path, *load)
                made = result["made"] = warm["requests"] + result["requests"]
                result["recorded"], others = recorded(folder / "rec.jsonl", path)
                if others:
                    print(f"{name}: {others} other exchanges recorded", file=sys.stderr)
                if result["recorded"] != made:
                    lost.append(
                        f"{name} round {round_ + 1}: {made} requests, {result['recorded']} recorded"
                    )
                results.setdefault(name, []).append(result)
            print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr)
        report(results, args, lost)


def report(
    results: dict[str, list[dict[str, Any]]], args: argparse.Namespace, lost: list[str]
) -> None:
    print(
        f"\nGET of one ConfigMap, {args.connections} connections, {args.seconds:g} s per run, "
        f"{args.rounds} interleaved rounds, {os.cpu_count()} cores: median of the rounds\n"
    )
    print("| target | requests/s | p50 | p99 | errors | recorded / made (warm-ups too) |")
    print("|---|---|---|---|---|---|")
    medians: dict[str, dict[str, float]] = {}
    for name, runs in results.items():
        figure = {k: statistics.median(r[k] for r in runs) for k in ("rps", "p50_ms", "p99_ms")}
        medians[name] = figure
        errors = sum(r["errors"] for r in runs)
        counted = "—"
        if "recorded" in runs[0]:
            counted = f"{sum(r['recorded'] for r in runs)} / {sum(r['made'] for r in runs)}"
        print(
            f"| {name} | {figure['rps']:.0f} | {figure['p50_ms']:.2f} ms "
            f"| {figure['p99_ms']:.2f} ms | {errors} | {counted} |"
        )
    print()
    for name, runs in results.items():
        if not name.startswith("k8s-wiretap"):
            continue
        ratios = [r["rps"] / k["rps"] for r, k in zip(runs, results["kubectl proxy"], strict=True)]
        p50 = [r["p50_ms"] / m["p50_ms"] for r, m in zip(runs, results["mitmdump"], strict=True)]
        p99 = [r["p99_ms"] / m["p99_ms"] for r, m in zip(runs, results["mitmdump"], strict=True)]
        print(
            f"{name}: requests/s / kubectl proxy {statistics.median(ratios):.2f}x "
            f"(rounds {min(ratios):.2f}-{max(ratios):.2f}; goal >= 0.5x); "
            f"p50 / mitmdump {statistics.median(p50):.2f}x (goal <= 1.0x); "
            f"p99 / mitmdump {statistics.median(p99):.2f}x (goal <= 1.2x)"
        )
    for line in lost:
        print(f"NOT RECORDED: {line}")
    if not lost:
        print("every request made through k8s-wiretap was recorded")
    print(json.dumps(medians))


if __name__ == "__main__":
    main(sys.argv[1:])
