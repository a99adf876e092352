"""`python -m bench [NAME...]`: run the benchmarks (all by default) and print their tables."""

from __future__ import annotations

import sys

from bench import (
    decode_bodies,
    explain_recording,
    patch_replay,
    protobuf_decode,
    proxy_latency,
    tui_first_screen,
    tui_live,
)

BENCHMARKS = {
    "decode_bodies": decode_bodies.main,
    "protobuf_decode": protobuf_decode.main,
    "patch_replay": patch_replay.main,
    "explain_recording": explain_recording.main,
    "proxy_latency": proxy_latency.main,
    "tui_first_screen": tui_first_screen.main,
    "tui_live": tui_live.main,
}


def main(argv: list[str]) -> int:
    names = argv or list(BENCHMARKS)
    for name in names:
        if name not in BENCHMARKS:
            print(f"unknown benchmark {name} (known: {', '.join(BENCHMARKS)})", file=sys.stderr)
            return 2
        BENCHMARKS[name]()
    return 0


raise SystemExit(main(sys.argv[1:]))
