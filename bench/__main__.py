"""`python -m bench [NAME...]`: run the benchmarks (all but the soak and the watches under
load by default) and print their tables.

`python -m bench NAME --option ...` runs one benchmark with its own options (`python -m
bench explain_recording --sizes 10000 100000`), as `python -m bench.NAME --option ...` does.

`python -m bench compare --peer CHECKOUT [NAME...] [-- OPTIONS]` runs them alternately here
and in another checkout, and prints each figure's ratio (`bench/compare.py`).
"""

from __future__ import annotations

import inspect
import sys

from bench import (
    audit_import,
    dask_overhead,
    decode_bodies,
    explain_coverage,
    explain_recording,
    object_history,
    patch_replay,
    protobuf_decode,
    proxy_latency,
    soak,
    throughput,
    tui_first_screen,
    tui_live,
    tui_object_history,
    watch_load,
)

BENCHMARKS = {
    "decode_bodies": decode_bodies.main,
    "protobuf_decode": protobuf_decode.main,
    "patch_replay": patch_replay.main,
    "explain_recording": explain_recording.main,
    "explain_coverage": explain_coverage.main,
    "audit_import": audit_import.main,
    "dask_overhead": dask_overhead.main,
    "object_history": object_history.main,
    "proxy_latency": proxy_latency.main,
    "tui_first_screen": tui_first_screen.main,
    "tui_live": tui_live.main,
    "tui_object_history": tui_object_history.main,
    "throughput": throughput.main,
    "watch_load": watch_load.main,
    "soak": soak.main,
}
# Run only when named: the soak (`make soak`) takes 10 minutes, the watches' step-up as long.
NAMED_ONLY = ("watch_load", "soak")


def main(argv: list[str]) -> int:
    if argv[:1] == ["compare"]:
        from bench import compare

        return compare.main(argv[1:])
    split = next((i for i, arg in enumerate(argv) if arg.startswith("-")), len(argv))
    names = argv[:split] or [name for name in BENCHMARKS if name not in NAMED_ONLY]
    options = argv[split:]
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
