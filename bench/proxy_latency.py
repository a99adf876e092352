"""Per-request latency of GET and LIST against the lab: direct, bare mitmdump, kubectl proxy,
and k8s-wiretap recording, interleaved in one run so that machine noise hits all alike;
and k8s-wiretap with its TUI open: a second wiretap (`proxy --quiet --record FILE`, as
`proxy` on a terminal runs it) with the replay app following its recording in a process of
its own, headless (`--follower FILE`), as the terminal's TUI does beside the proxy.

Every proxy listens on plain HTTP on 127.0.0.1 and reaches the API server with the same
admin client certificate; the client is one keep-alive HTTP/1.1 connection per target
(direct: HTTPS with that certificate). Target (issue 3): k8s-wiretap's median within 1.15x
of bare mitmdump's.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.proxy.server import free_port

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "400"))
WARMUP = 30
CONFIGMAPS = 50
BIN = Path(sys.executable).parent


def wait_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{process.args!r} did not listen")


@contextmanager
def process(argv: list[str], port: int | None) -> Iterator[None]:
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if port is not None:
            wait_listening(port, proc)
        yield
    finally:
        proc.terminate()
        proc.wait(30)


def http_target(port: int) -> Callable[[], http.client.HTTPConnection]:
    return lambda: http.client.HTTPConnection("127.0.0.1", port, timeout=30)


def direct_target(server: str, pki: Path) -> Callable[[], http.client.HTTPConnection]:
    context = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    context.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
    host, port = server.removeprefix("https://").split(":")
    return lambda: http.client.HTTPSConnection(host, int(port), context=context, timeout=30)


def timed(connection: http.client.HTTPConnection, path: str) -> float:
    started = time.perf_counter()
    connection.request("GET", path, headers={"Accept": "application/json"})
    response = connection.getresponse()
    response.read()
    elapsed = time.perf_counter() - started
    if response.status != 200:
        raise RuntimeError(f"{path}: {response.status}")
    return elapsed


def measure(
    targets: dict[str, Callable[[], http.client.HTTPConnection]], paths: dict[str, str]
) -> dict[str, dict[str, list[float]]]:
    connections = {name: make() for name, make in targets.items()}
    samples: dict[str, dict[str, list[float]]] = {n: {p: [] for p in paths} for n in targets}
    for round_ in range(WARMUP + ROUNDS):
        for kind, path in paths.items():
            for name, connection in connections.items():
                elapsed = timed(connection, path)
                if round_ >= WARMUP:
                    samples[name][kind].append(elapsed)
    return samples


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-") as scratch, ExitStack() as stack:
        work = Path(scratch)
        lab = Lab(work / "lab")
        state = lab.up(UpOptions(components=("apiserver",), build=False))
        stack.callback(lab.down)
        pki = work / "lab" / "pki"
        namespace = "/api/v1/namespaces/bench"
        subprocess.run(
            ["kubectl", "--kubeconfig", state.kubeconfig, "create", "namespace", "bench"],
            check=True,
            capture_output=True,
        )
        for i in range(CONFIGMAPS):
            subprocess.run(
                [
                    "kubectl",
                    "--kubeconfig",
                    state.kubeconfig,
                    "-n",
                    "bench",
                    "create",
                    "configmap",
                    f"cm-{i}",
                    f"--from-literal=key={'x' * 200}",
                ],
                check=True,
                capture_output=True,
            )
        (work / "admin.pem").write_bytes(
            (pki / "admin.crt").read_bytes() + (pki / "admin.key").read_bytes()
        )
        upstream = state.server.removeprefix("https://")
        names = ("mitmdump", "kubectl proxy", "k8s-wiretap", "k8s-wiretap + TUI")
        ports = {name: free_port() for name in names}
        stack.enter_context(
            process(
                [
                    str(BIN / "mitmdump"),
                    "-q",
                    "--mode",
                    f"reverse:https://{upstream}@127.0.0.1:{ports['mitmdump']}",
                    "--set",
                    f"confdir={work / 'mitm'}",
                    "--set",
                    f"client_certs={work / 'admin.pem'}",
                    "--set",
                    f"ssl_verify_upstream_trusted_ca={pki / 'ca.crt'}",
                ],
                ports["mitmdump"],
            )
        )
        stack.enter_context(
            process(
                [
                    "kubectl",
                    "--kubeconfig",
                    state.kubeconfig,
                    "proxy",
                    "--port",
                    str(ports["kubectl proxy"]),
                ],
                ports["kubectl proxy"],
            )
        )
        stack.enter_context(
            process(
                [
                    str(BIN / "k8s-wiretap"),
                    "proxy",
                    "--kubeconfig",
                    state.kubeconfig,
                    "--listen",
                    f"127.0.0.1:{ports['k8s-wiretap']}",
                    "--record",
                    str(work / "bench.jsonl"),
                    "--confdir",
                    str(work / "wiretap"),
                    "--no-tui",
                ],
                ports["k8s-wiretap"],
            )
        )
        stack.enter_context(live(state.kubeconfig, ports["k8s-wiretap + TUI"], work))
        targets = {
            "direct": direct_target(state.server, pki),
            **{name: http_target(port) for name, port in ports.items()},
        }
        paths = {
            "GET": f"{namespace}/configmaps/cm-0",
            f"LIST ({CONFIGMAPS} objects)": f"{namespace}/configmaps",
        }
        report(measure(targets, paths), work / "bench.jsonl")


@contextmanager
def live(kubeconfig: str, port: int, work: Path) -> Iterator[None]:
    """A wiretap recording to a file, and the TUI following that file in a process of its
    own: what `k8s-wiretap proxy` runs on a terminal (`commands/live.py`)."""
    record = work / "live.jsonl"
    argv = [str(BIN / "k8s-wiretap"), "proxy", "--kubeconfig", kubeconfig, "--quiet"]
    argv += ["--listen", f"127.0.0.1:{port}", "--record", str(record)]
    with process([*argv, "--confdir", str(work / "wiretap-live")], port):
        deadline = time.monotonic() + 30
        while not record.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        follower = [sys.executable, "-m", "bench.proxy_latency", "--follower", str(record)]
        with process(follower, None):
            time.sleep(3)  # the app is up and following
            yield


def follower(path: Path) -> None:
    """The replay app following `path`, headless, until terminated."""
    import asyncio
    import signal

    from k8s_wiretap.views.tui import ReplayApp

    async def run() -> None:
        app = ReplayApp(path, follow=True)
        async with app.run_test(size=(120, 40)):
            stop = asyncio.Event()
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
            await stop.wait()

    asyncio.run(run())


def report(samples: dict[str, dict[str, list[float]]], recording: Path) -> None:
    kinds = list(next(iter(samples.values())))
    print(
        f"\nper-request latency, median (p90), {ROUNDS} interleaved rounds, "
        f"{os.cpu_count()} cores\n"
    )
    print("| target | " + " | ".join(kinds) + " |")
    print("|---|" + "---|" * len(kinds))
    medians = {}
    for name, by_kind in samples.items():
        cells = []
        for kind in kinds:
            values = sorted(by_kind[kind])
            median = statistics.median(values)
            medians[(name, kind)] = median
            p90 = values[int(len(values) * 0.9)]
            cells.append(f"{median * 1000:.2f} ms ({p90 * 1000:.2f})")
        print(f"| {name} | " + " | ".join(cells) + " |")
    for kind in kinds:
        ratio = medians[("k8s-wiretap", kind)] / medians[("mitmdump", kind)]
        print(f"\nk8s-wiretap / mitmdump, {kind}: {ratio:.2f}x (target <= 1.15x)")
        tui = medians[("k8s-wiretap + TUI", kind)] / medians[("k8s-wiretap", kind)]
        print(f"k8s-wiretap with the TUI open / --no-tui, {kind}: {tui:.2f}x")
    lines = recording.read_text().count('"record":"end"')
    print(f"k8s-wiretap recorded {lines} exchanges")
    print(json.dumps({f"{n} {k}": round(v * 1000, 3) for (n, k), v in medians.items()}))


if __name__ == "__main__" and sys.argv[1:2] == ["--follower"]:
    follower(Path(sys.argv[2]))
