"""`python -m bench compare --peer CHECKOUT [--rounds N] [NAME...] [-- OPTIONS]`: the
benchmarks of this checkout beside those of another, run alternately in one run.

Each round runs every named benchmark (all but the TUI ones by default) once here and once
in the peer, each checkout with its own `.venv/bin/python -m bench NAME OPTIONS` in its own
folder; the order flips every round (this, peer; peer, this; ...), so that the machine's
drift and warm caches favour neither. The figures are read from the text each benchmark
prints (its table as it has always printed it: a peer of older code parses the same).

Per figure: the median over the rounds here and in the peer, and the ratio of the two as a
cost, this over peer for times and memory, peer over this for rates: above 1.00 this
checkout is slower (or bigger), below 1.00 faster; then the lowest and highest of the
rounds' own ratios (each round's pair run back to back), how far the noise goes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


@dataclass(frozen=True, slots=True)
class Figure:
    name: str
    value: float
    higher_is_better: bool = False


def numbers(text: str) -> list[float]:
    return [float(n.replace(",", "")) for n in NUMBER.findall(text)]


def piped_rows(text: str, first: str) -> Iterator[dict[str, str]]:
    """The rows of each `|`-separated table (outer pipes or not) whose header's first cell
    starts with `first`, as {column: cell}."""
    header: list[str] | None = None
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if "|" in line else []
        if not cells:
            header = None
        elif cells[0].startswith(first):
            header = cells
        elif (
            header is not None
            and len(cells) == len(header)
            and not all(set(c) <= set("-:") for c in cells)
        ):
            yield dict(zip(header, cells, strict=True))


def decode_bodies(text: str) -> Iterator[Figure]:
    for row in piped_rows(text, "what"):
        yield Figure(f"{row['what']}, /s", numbers(row["per second"])[0], True)
    if found := re.search(r"object history .*: ([\d.]+) s", text):
        yield Figure("object history, s", float(found[1]))


def protobuf_decode(text: str) -> Iterator[Figure]:
    for row in piped_rows(text, "body"):
        yield Figure(f"{row['body']}, /s wall clock", numbers(row["wall clock"])[0], True)
        yield Figure(f"{row['body']}, /s CPU time", numbers(row["CPU time"])[0], True)


def patch_replay(text: str) -> Iterator[Figure]:
    if found := re.search(r"median ([\d,]+), min ([\d,]+), max ([\d,]+)", text):
        yield Figure("replays/s, median of 5", numbers(found[1])[0], True)
        yield Figure("replays/s, best of 5", numbers(found[3])[0], True)


def explain_recording(text: str) -> Iterator[Figure]:
    for line in text.splitlines():
        cells = line.split()
        if len(cells) == 7 and all(NUMBER.fullmatch(c) for c in cells):
            count, _mb, _s, rate, cpu, per_cpu, peak = (numbers(c)[0] for c in cells)
            yield Figure(f"{count:,.0f} exchanges, /s", rate, True)
            yield Figure(f"{count:,.0f} exchanges, CPU s", cpu)
            yield Figure(f"{count:,.0f} exchanges, /CPU s", per_cpu, True)
            yield Figure(f"{count:,.0f} exchanges, peak RSS MB", peak)


def proxy_latency(text: str) -> Iterator[Figure]:
    for row in piped_rows(text, "target"):
        for kind, cell in row.items():
            if kind != "target":
                median, p90 = numbers(cell)[:2]
                yield Figure(f"{row['target']}, {kind} median ms", median)
                yield Figure(f"{row['target']}, {kind} p90 ms", p90)
    for found in re.finditer(r"^(k8s-wiretap .*?), (.+?): ([\d.]+)x", text, re.MULTILINE):
        yield Figure(f"{found[1]}, {found[2]} (ratio)", float(found[3]))


def tui_first_screen(text: str) -> Iterator[Figure]:
    for row in piped_rows(text, "exchanges"):
        count = numbers(row["exchanges"])[0]
        for column, cell in row.items():
            if column not in ("exchanges", "file MB"):
                yield Figure(f"{count:,.0f} exchanges, {column}", numbers(cell)[0])


def tui_live(text: str) -> Iterator[Figure]:
    for row in piped_rows(text, "key ms"):
        key = numbers(row["key ms, median (worst)"])
        yield Figure("key ms, median", key[0])
        yield Figure("key ms, worst", key[1])
        yield Figure("caught up, s", numbers(row["caught up"])[0])
        for column in ("rows", "ended", "events", "explained"):
            yield Figure(f"{column} (by the end)", numbers(row[column])[0], True)
        yield Figure("peak RSS MB", numbers(row["peak RSS"])[0])


PARSERS: dict[str, Callable[[str], Iterator[Figure]]] = {
    "decode_bodies": decode_bodies,
    "protobuf_decode": protobuf_decode,
    "patch_replay": patch_replay,
    "explain_recording": explain_recording,
    "proxy_latency": proxy_latency,
    "tui_first_screen": tui_first_screen,
    "tui_live": tui_live,
}
DEFAULT = [name for name in PARSERS if not name.startswith("tui_")]


def run(checkout: Path, name: str, options: list[str], log: Path | None, tag: str) -> str:
    """One benchmark in `checkout` with its own venv; its standard output."""
    python = checkout / ".venv" / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    started = time.monotonic()
    done = subprocess.run(
        [str(python), "-m", "bench", name, *options],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
    )
    took = time.monotonic() - started
    print(f"  {tag:>4} {name}: {took:.0f} s", file=sys.stderr, flush=True)
    if log is not None:
        (log / f"{name}-{tag}-{int(time.time())}.txt").write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: bench {name} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def figures(name: str, output: str) -> dict[str, Figure]:
    found = {f.name: f for f in PARSERS[name](output)}
    if not found:
        raise SystemExit(f"bench {name} printed no figure this driver reads:\n{output}")
    return found


def cost(this: float, peer: float, higher_is_better: bool) -> float:
    """Above 1: this is slower (or bigger)."""
    this, peer = (peer, this) if higher_is_better else (this, peer)
    if this == peer:
        return 1.0
    return this / peer if peer else float("inf")


def shown(value: float) -> str:
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"


def report(name: str, rounds: list[tuple[dict[str, Figure], dict[str, Figure]]]) -> list[str]:
    lines = [f"\n{name}, {len(rounds)} rounds, medians\n"]
    lines += ["| figure | this | peer | ratio | rounds' ratios |", "|---|---|---|---|---|"]
    names = list(dict.fromkeys(n for this, peer in rounds for n in [*this, *peer]))
    for figure in names:
        pairs = [(t[figure], p[figure]) for t, p in rounds if figure in t and figure in p]
        if not pairs:
            lines.append(f"| {figure} | (in one checkout only) | | | |")
            continue
        better = pairs[0][0].higher_is_better
        this = statistics.median(t.value for t, _ in pairs)
        peer = statistics.median(p.value for _, p in pairs)
        each = [cost(t.value, p.value, better) for t, p in pairs]
        lines.append(
            f"| {figure} | {shown(this)} | {shown(peer)} | {cost(this, peer, better):.2f}x "
            f"| {min(each):.2f} to {max(each):.2f} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    argv = list(argv or [])
    options = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(prog="python -m bench compare", description=__doc__)
    parser.add_argument("--peer", type=Path, required=True, help="the other checkout")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--log", type=Path, default=None, help="keep every run's output here")
    parser.add_argument("--json", type=Path, default=None, help="write every figure here")
    parser.add_argument("names", nargs="*", default=DEFAULT, metavar="NAME")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in PARSERS]
    if unknown or (options and len(args.names) != 1):
        parser.error(f"one or more NAME of {', '.join(PARSERS)}; options after -- go to one")
    peer = args.peer.resolve()
    if args.log is not None:
        args.log.mkdir(parents=True, exist_ok=True)
    print(f"this: {HERE}\npeer: {peer}\nbenchmark options: {' '.join(options) or '-'}")
    results: dict[str, list[tuple[dict[str, Figure], dict[str, Figure]]]] = {}
    for number in range(args.rounds):
        print(f"round {number + 1} of {args.rounds}", file=sys.stderr, flush=True)
        for name in args.names:
            order = [("this", HERE), ("peer", peer)]
            got = {
                tag: figures(name, run(checkout, name, options, args.log, tag))
                for tag, checkout in (order if number % 2 == 0 else order[::-1])
            }
            results.setdefault(name, []).append((got["this"], got["peer"]))
    print(
        "\nratio: this over peer for times and memory, peer over this for rates (/s): "
        "above 1.00 this checkout is slower"
    )
    for name, rounds in results.items():
        print("\n".join(report(name, rounds)))
    if args.json is not None:
        raw = {
            name: [{"this": this, "peer": peer} for this, peer in rounds]
            for name, rounds in results.items()
        }
        args.json.write_text(
            json.dumps(raw, default=lambda f: [f.value, f.higher_is_better], indent=1)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
