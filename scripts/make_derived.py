"""Make again what is made from the committed recordings (`make snapshots`, which `make
recordings` ends with), or say what differs from them:

- `recordings/facts.json`: each recording's sha256 and counts (exchanges, etcd records), and
  the facts that only the explanation knows, which tests compare with: the components of the
  wide session, the size of the deepest chain a kubectl command set off in the apply story;
- `docs/pictures/*.svg`: the pictures docs/pictures.md shows, each made by the command
  `EXAMPLES` names (the sequence's range found by what it is, never typed in);
- the example outputs docs quote of a command on a committed recording (`DOC_EXAMPLES`): the
  fenced block after the command's line is what the command prints.

    .venv/bin/python scripts/make_derived.py [--check]

`--check` writes nothing, prints what differs and exits 1 when anything does (tests run the
same comparisons: tests/test_derived.py, tests/views/test_pictures.py). The TUI's snapshots
are made by their own tests with K8S_WIRETAP_UPDATE_SNAPSHOTS=1 (docs/development.md).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from functools import cache, partial
from pathlib import Path
from typing import Any

from k8s_wiretap.capture.reader import iter_records
from k8s_wiretap.views.json import write_json

ROOT = Path(__file__).resolve().parents[1]
RECORDINGS = ROOT / "recordings"
FACTS = RECORDINGS / "facts.json"
PICTURES = ROOT / "docs" / "pictures"
STORY = "recordings/apply-story.jsonl.gz"
WIDE = "recordings/wide-session.jsonl.gz"
SEQUENCE_LENGTH = 25  # kubectl's create of the Deployment and the 24 exchanges after it
EXCHANGE_RECORDS = frozenset({"request", "response", "event", "end"})

# docs/FILE: the command lines (run in the repository, the clock in UTC) whose output the
# fenced block after `$ LINE` quotes
DOC_EXAMPLES = {
    "docs/history.md": [
        "k8s-wiretap history recordings/history-session.jsonl.gz deploy/web --field spec.replicas"
    ],
}


@cache
def explained(recording: str) -> list[dict[str, Any]]:
    """`explain --format json`'s lines of a recording, in its order."""
    out = io.BytesIO()
    write_json(iter_records(ROOT / recording, []), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


# -- facts ------------------------------------------------------------------------------------
def counts(path: Path) -> dict[str, Any]:
    """A recording's sha256, its exchanges (the ids of its exchange records) and etcd records,
    counted from its lines as tests/recorded.py counts them."""
    data = path.read_bytes()
    records = [json.loads(line) for line in gzip.decompress(data).splitlines() if line.strip()]
    ids = {r.get("id") for r in records if r.get("record") in EXCHANGE_RECORDS}
    return {
        "sha256": hashlib.sha256(data).hexdigest(),
        "exchanges": len(ids),
        "etcd records": sum(1 for r in records if r.get("record") == "etcd"),
    }


def deepest_kubectl_chain(rows: list[dict[str, Any]]) -> int:
    """How many exchanges the deepest chain a kubectl command set off holds: its hops and
    everything below its last (what `export --picture chain` draws by default)."""
    by_id = {r["id"]: r for r in rows}
    rooted = [r for r in rows if by_id[r["chain"][0]]["component"] == "kubectl"]
    target = max(rooted, key=lambda r: len(r["chain"]))["chain"]
    return sum(1 for r in rows if r["id"] in target or r["chain"][: len(target)] == target)


def facts() -> dict[str, dict[str, Any]]:
    """Every committed recording's facts, by file name."""
    made = {path.name: counts(path) for path in sorted(RECORDINGS.glob("*.jsonl.gz"))}
    made[Path(STORY).name]["deepest kubectl chain"] = deepest_kubectl_chain(explained(STORY))
    made[Path(WIDE).name]["components"] = len({r["component"] for r in explained(WIDE)})
    return made


def facts_text() -> str:
    return json.dumps(facts(), indent=2, sort_keys=True) + "\n"


# -- pictures ---------------------------------------------------------------------------------
def sequence_range() -> str:
    """FROM:TO (1-based, explain's order) from kubectl's create of the Deployment on."""
    rows = explained(STORY)
    first = next(
        n
        for n, r in enumerate(rows, 1)
        if r["component"] == "kubectl" and r["verb"] == "create" and r["resource"] == "deployments"
    )
    return f"{first}:{first + SEQUENCE_LENGTH - 1}"


def examples() -> dict[str, list[str]]:
    """docs/pictures/NAME.svg: the `export` arguments that make it."""
    return {
        "chain": [STORY, "--picture", "chain"],
        "map": [WIDE, "--picture", "map"],
        "sequence": [STORY, "--picture", "sequence", "--range", sequence_range()],
    }


def picture(argv: list[str], out: Path) -> str:
    run(["export", *argv, "--svg", str(out), "--overwrite"])
    return out.read_text()


# -- docs' examples ---------------------------------------------------------------------------
def run(argv: list[str]) -> str:
    """`k8s-wiretap ARGV` in the repository, the clock in UTC: its stdout."""
    env = {**os.environ, "TZ": "UTC"}
    done = subprocess.run(
        [sys.executable, "-m", "k8s_wiretap", *argv],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env=env,
    )
    if done.returncode != 0:
        raise SystemExit(f"k8s-wiretap {' '.join(argv)}: {done.stderr.strip()}")
    return done.stdout


def with_output(doc: str, line: str, output: str) -> str:
    """`doc` with the fenced block that begins `$ LINE` holding `output`."""
    start = doc.index(f"```\n$ {line}\n") + len(f"```\n$ {line}\n")
    end = doc.index("```\n", start)
    return doc[:start] + output.rstrip() + "\n" + doc[end:]


def doc_text(name: str) -> str:
    """docs/NAME as the commands make it."""
    doc = (ROOT / name).read_text()
    for line in DOC_EXAMPLES[name]:
        doc = with_output(doc, line, run(line.split()[1:]))
    return doc


# -- all --------------------------------------------------------------------------------------
def made(scratch: Path) -> dict[Path, Callable[[], str]]:
    """Each file made from the recordings, with how to make its text."""
    files: dict[Path, Callable[[], str]] = {FACTS: facts_text}
    for name, argv in examples().items():
        files[PICTURES / f"{name}.svg"] = partial(picture, argv, scratch / f"{name}.svg")
    for name in DOC_EXAMPLES:
        files[ROOT / name] = partial(doc_text, name)
    return files


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="make what is made from the recordings")
    parser.add_argument("--check", action="store_true", help="write nothing; say what differs")
    check = parser.parse_args(argv).check
    differ = []
    with tempfile.TemporaryDirectory(prefix="derived-") as scratch:
        for path, make in made(Path(scratch)).items():
            text = make()
            if path.exists() and path.read_text() == text:
                continue
            differ.append(path.relative_to(ROOT))
            if not check:
                path.write_text(text)
    verb = "differs from the recordings" if check else "made again"
    for path in differ:
        print(f"{path}: {verb}", file=sys.stderr)
    return 1 if check and differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
