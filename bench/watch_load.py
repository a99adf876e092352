"""Watches under load: 100 concurrent watches of the ConfigMaps of one namespace through
k8s-wiretap (`proxy --quiet --record FILE`) while a writer creates ConfigMaps at a fixed rate
straight against the API server for 60 s, with one direct watch as the control.

Per step: what the writer achieved (ConfigMaps created per second against the rate asked),
the ConfigMaps each watcher saw ADDED against those created (every event must reach every
client; a watch the server ends early is watched again from the last resourceVersion
seen, as an informer does, and counted as resumed), the watch events in the recording
against those the watchers read, the lag of
each event (its receive time minus the time its ConfigMap was written, in an annotation)
at p50/p99 per watcher, and the proxy's RSS at most (every process of it, sampled every
0.5 s). Each step is a fresh namespace and a fresh proxy.

The rate steps up from 200 a second (doubling) while a step holds — no event lost, the
recording complete, no watch resumed, the worst watcher's p99 lag within 1 s or 5x the
direct watch's, the writer within 5% of the rate — and, if 200 fails, down (halving), to
the highest rate that holds. The load generator is bench/loadgen (Go), as for bench/throughput.py.

`python -m bench watch_load [--rates 200,400,...] [--seconds 60] [--watchers 100]
[--workers N]`
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from bench.proxy_latency import BIN, wait_listening
from bench.throughput import Client, direct_client, has_workers, loadgen
from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.proxy.server import free_port

DRAIN = 30.0  # seconds the watchers keep reading after the writer stops
LAG_LIMIT_MS = 1000.0


def tree_rss(pid: int) -> int:
    """The resident memory of `pid` and its descendants, in bytes."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) * 1024
    return total


class RssPeak(threading.Thread):
    """The largest RSS of a process tree, sampled every 0.5 s until stopped."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak, self.done = pid, 0, threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.5):
            self.peak = max(self.peak, tree_rss(self.pid))


@contextmanager
def proxy(argv: list[str], port: int) -> Iterator[int]:
    """The proxy running, listening on `port`; its pid."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, proc)
        yield proc.pid
    finally:
        proc.terminate()
        proc.wait(60)


def watchers(client: Client, path: str, count: int, seconds: float) -> subprocess.Popen[str]:
    """`count` watches of `path` for `seconds`; returns once every watch has its headers."""
    argv = [str(loadgen()), "watch", "-url", client.base + path, *client.flags]
    argv += ["-n", str(count), "-d", f"{seconds}s"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    if line.strip() != "ready":
        raise RuntimeError(f"watchers did not start: {line}{proc.stderr.read()}")
    return proc


def finished(proc: subprocess.Popen[str]) -> list[dict[str, Any]]:
    out, err = proc.communicate(timeout=600)
    if proc.returncode:
        raise RuntimeError(f"loadgen watch failed: {err}")
    result: list[dict[str, Any]] = json.loads(out)
    return result


def step(
    rate: int, args: argparse.Namespace, kubeconfig: str, direct: Client, work: Path
) -> dict[str, Any]:
    namespace = f"watch-{rate}"
    subprocess.run(
        ["kubectl", "--kubeconfig", kubeconfig, "create", "namespace", namespace],
        check=True,
        capture_output=True,
    )
    collection = f"/api/v1/namespaces/{namespace}/configmaps"
    watch = f"{collection}?watch=1&timeoutSeconds=3600"
    folder = work / f"step-{rate}"
    folder.mkdir()
    port = free_port()
    argv = [str(BIN / "k8s-wiretap"), "proxy", "--kubeconfig", kubeconfig, "--quiet"]
    argv += ["--listen", f"127.0.0.1:{port}", "--record", str(folder / "rec.jsonl")]
    argv += ["--confdir", str(work / "confdir")]
    if args.workers is not None:
        argv += ["--workers", str(args.workers)]
    with proxy(argv, port) as proxy_pid:
        peak = RssPeak(proxy_pid)
        peak.start()
        seconds = args.seconds + DRAIN
        control = watchers(direct, watch, 1, seconds)
        tapped = watchers(Client(f"http://127.0.0.1:{port}"), watch, args.watchers, seconds)
        written = direct.run(
            "write", collection, "-rate", str(rate), "-d", f"{args.seconds}s", "-prefix", "cm"
        )
        through, control_result = finished(tapped), finished(control)[0]
        peak.done.set()
        peak.join()
    recorded = sum(p.read_bytes().count(b'"record":"event"') for p in folder.glob("rec.jsonl*"))
    for path in folder.glob("rec.jsonl*"):
        path.unlink()  # a step's recording is large; its count is what matters
    return verdict(rate, written, control_result, through, recorded, peak.peak)


def verdict(
    rate: int,
    written: dict[str, Any],
    control: dict[str, Any],
    through: list[dict[str, Any]],
    recorded: int,
    rss: int,
) -> dict[str, Any]:
    counts = [w["events"] for w in through]
    lost = sum(written["created"] - n for n in counts)
    p99s = [w["lag_p99_ms"] for w in through]
    worst = max(p99s, default=0.0)
    resumed = sum(w["resumed"] for w in through)
    why = next((w["error"] for w in [control, *through] if w.get("error")), "")
    lag_ok = worst <= max(LAG_LIMIT_MS, 5 * control["lag_p99_ms"])
    rate_ok = written["achieved_rate"] >= 0.95 * rate
    received = sum(w["received"] for w in through)
    complete = control["events"] == written["created"] and lost == 0 and recorded >= received
    return {
        "rate": rate,
        "created": written["created"],
        "write_errors": written["errors"],
        "achieved": written["achieved_rate"],
        "direct_events": control["events"],
        "direct_resumed": control["resumed"],
        "direct_p99_ms": control["lag_p99_ms"],
        "min_events": min(counts, default=0),
        "max_events": max(counts, default=0),
        "lost": lost,
        "resumed": resumed,
        "first_error": why[:200],
        "recorded": recorded,
        "received": received,
        "p50_median_ms": statistics.median(w["lag_p50_ms"] for w in through),
        "p99_median_ms": statistics.median(p99s),
        "p99_worst_ms": worst,
        "rss_mib": rss / 2**20,
        "holds": complete and lag_ok and rate_ok and resumed == 0 and not control["resumed"],
        "writer_limited": not rate_ok,
    }


def arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench watch_load")
    parser.add_argument("--rates", default="", help="the rates to run (default: step up)")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--watchers", type=int, default=100)
    parser.add_argument("--workers", type=int, default=None, help="proxy --workers N")
    args = parser.parse_args(argv or [])
    if args.workers is not None and not has_workers():
        parser.error("k8s-wiretap proxy has no --workers")
    return args


def rates(args: argparse.Namespace, done: list[dict[str, Any]]) -> int | None:
    """The next rate to run: the list given, else up from 200 while it holds, else down."""
    if args.rates:
        given = [int(r) for r in args.rates.split(",")]
        return given[len(done)] if len(done) < len(given) else None
    if not done:
        return 200
    last = done[-1]
    held = [r["rate"] for r in done if r["holds"]]
    failed = [r["rate"] for r in done if not r["holds"]]
    if last["holds"]:
        return None if last["writer_limited"] or failed else last["rate"] * 2
    if held or last["rate"] <= 25:
        return None
    return int(last["rate"]) // 2


def main(argv: list[str] | None = None) -> None:
    args = arguments(argv)
    with tempfile.TemporaryDirectory(prefix="bench-") as scratch, ExitStack() as stack:
        work = Path(scratch)
        lab = Lab(work / "lab")
        state = lab.up(UpOptions(components=("apiserver",), build=False))
        stack.callback(lab.down)
        direct = direct_client(state.server, work / "lab" / "pki")
        done: list[dict[str, Any]] = []
        while (rate := rates(args, done)) is not None:
            done.append(step(rate, args, state.kubeconfig, direct, work))
            print(json.dumps(done[-1]), file=sys.stderr)
        report(done, args)


def report(done: list[dict[str, Any]], args: argparse.Namespace) -> None:
    workers = "the proxy's default" if args.workers is None else str(args.workers)
    print(
        f"\n{args.watchers} watches through k8s-wiretap (workers: {workers}) and 1 direct, "
        f"ConfigMaps written for {args.seconds:g} s per step, {os.cpu_count()} cores\n"
    )
    print(
        "| rate asked | achieved | events direct | per watcher (min-max) | missed | resumed "
        "| recorded / received | lag p50 | lag p99 (median, worst) | direct p99 | RSS max "
        "| holds |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in done:
        print(
            f"| {r['rate']}/s | {r['achieved']:.0f}/s | {r['direct_events']} "
            f"| {r['min_events']}-{r['max_events']} | {r['lost']} "
            f"| {r['resumed']} (direct {r['direct_resumed']}) "
            f"| {r['recorded']} / {r['received']} | {r['p50_median_ms']:.0f} ms "
            f"| {r['p99_median_ms']:.0f} ms, {r['p99_worst_ms']:.0f} ms "
            f"| {r['direct_p99_ms']:.0f} ms | {r['rss_mib']:.0f} MiB "
            f"| {'yes' if r['holds'] else 'no'} |"
        )
    for r in done:
        if r["first_error"]:
            print(f"{r['rate']}/s: first early end: {r['first_error']}")
    held = [r["rate"] for r in done if r["holds"]]
    print(f"\nhighest write rate that holds: {max(held)}/s" if held else "\nno rate held")
    print(json.dumps(done))


if __name__ == "__main__":
    main(sys.argv[1:])
