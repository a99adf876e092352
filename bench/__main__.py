"""`python -m bench [NAME...]`: run the benchmarks (all by default) and print their tables.

`python -m bench NAME --option ...` runs one benchmark with its own options (`python -m
bench explain_recording --sizes 10000 100000`), as `python -m bench.NAME --option ...` does.

`python -m bench compare --peer CHECKOUT [NAME...] [-- OPTIONS]` runs them alternately here
and in another checkout, and prints each figure's ratio (`bench/compare.py`).
"""

from __future__ import annotations

import inspect
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
    if argv[:1] == ["compare"]:
        from bench import compare

        return compare.main(argv[1:])
    split = next((i for i, arg in enumerate(argv) if arg.startswith("-")), len(argv))
    names, options = argv[:split] or list(BENCHMARKS), argv[split:]
    for name in names:
        if name not in BENCHMARKS:
            print(f"unknown benchmark {name} (known: {', '.join(BENCHMARKS)})", file=sys.stderr)
            return 2
    if options and len(names) != 1:
        print("options go to one benchmark: python -m bench NAME --option ...", file=sys.stderr)
        return 2
    for name in names:
        run = BENCHMARKS[name]
        if not options:
            run()
        elif inspect.signature(run).parameters:
            run(options)  # type: ignore[call-arg]
        else:
            print(f"{name} takes no options", file=sys.stderr)
            return 2
    return 0


raise SystemExit(main(sys.argv[1:]))
