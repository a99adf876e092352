"""Decoding throughput on real recorded traffic (recordings/apply-story.jsonl.gz).

- JSON exchanges: every exchange whose request or response body is JSON (kubectl's GETs,
  LISTs, applies; discovery), both bodies decoded. Target: 10,000 exchanges per second.
- protobuf watch events: every event of the controllers' and the kubelet's protobuf watches,
  decoded to objects. Target: 5,000 events per second.
- patch replays: every PATCH replayed with before, after, diff and the server check.
  Target: 2,000 per second.

Each figure is the best of 5 runs (the machine's noise only ever slows things down).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from k8s_wiretap.capture.reader import load
from k8s_wiretap.decode.body import decode_body
from k8s_wiretap.decode.watch import exchange_events
from k8s_wiretap.explain.analysis import Analysis

RECORDING = Path(__file__).resolve().parents[1] / "recordings" / "apply-story.jsonl.gz"
RUNS = 5


def best_rate(work: Callable[[], int]) -> float:
    rates = []
    for _ in range(RUNS):
        started = time.perf_counter()
        count = work()
        rates.append(count / (time.perf_counter() - started))
    return max(rates)


def main() -> None:
    recording = load(RECORDING)
    exchanges = recording.exchanges
    json_exchanges = [
        e
        for e in exchanges
        if any(b and b.data[:1] in (b"{", b"[") for b in (e.request_body, e.response_body))
    ]

    def json_work() -> int:
        for exchange in json_exchanges:
            for body, header in (
                (exchange.request_body, "content-type"),
                (exchange.response_body, "content-type"),
            ):
                if body:
                    decode_body(body.data, exchange.request_header(header))
        return len(json_exchanges)

    watches = [
        e for e in exchanges if e.watch_events() and "protobuf" in e.response_header("content-type")
    ]
    events = sum(len(e.watch_events()) for e in watches)

    def watch_work() -> int:
        for exchange in watches:
            exchange_events(exchange)
        return events

    patches = [e for e in exchanges if e.info.verb == "patch"]
    analysis = Analysis.of(recording)
    started = time.perf_counter()
    _ = analysis.history  # decodes every object the recording shows, once
    history_seconds = time.perf_counter() - started

    def patch_work() -> int:
        for exchange in patches:
            replay = analysis.replay(exchange)
            assert replay is not None
            replay.to_json()
        return len(patches)

    sizes = sorted(len(b.data) for e in json_exchanges for b in (e.response_body,) if b)
    print(f"\ndecoding throughput, best of {RUNS} runs, recording {RECORDING.name}\n")
    print("| what | items | per second | target |")
    print("|---|---|---|---|")
    print(
        f"| JSON exchanges (median response {sizes[len(sizes) // 2]} B) | "
        f"{len(json_exchanges)} | {best_rate(json_work):,.0f} | 10,000 |"
    )
    print(f"| protobuf watch events | {events} | {best_rate(watch_work):,.0f} | 5,000 |")
    print(
        f"| patch replays: before, after, diff, server check | {len(patches)} | "
        f"{best_rate(patch_work):,.0f} | 2,000 |"
    )
    print(
        f"\nobject history of the whole recording ({len(exchanges)} exchanges): "
        f"{history_seconds:.2f} s"
    )
