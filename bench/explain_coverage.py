"""How well a wide session is explained: `python -m bench explain_coverage [--recording PATH]`
(`python -m bench.explain_coverage [PATH]` the same); `--samples` does it for each public
audit-log sample of tests/importers/data/samples.json, imported as `k8s-wiretap import
audit` imports it, one row a sample.

The recording (by default recordings/wide-session.jsonl.gz, the wide session of
k8s_wiretap/workshop/wide.py recorded by scripts/record_wide.py with the whole control plane
through the wiretap) is explained as `k8s-wiretap explain --format json` explains it (the
stream of `explain/stream.py`, in process), and counted:

- exchanges;
- unattributed: no "who" (the component `unknown`, or none);
- unknown actors: summaries that tell `unknown` as who did it (opening with it, or
  `unknown's`): an identity with no user agent is that user, never "unknown";
- on a generic rule: the summary came from the catch-all rules `write`, `read` or `other`
  of kube/data/explanations.yaml (each explanation names its rule), among all exchanges and
  among the writes;
- controller writes with a named cause: of the writes (create, update, patch, delete,
  deletecollection, whatever their answer) by the controller manager's controllers and the
  scheduler, those whose `caused_by` names the watch event behind them or whose `reason`
  names a retry, a timer or a start-up (counted apart too); the kubelet's writes counted
  apart;
- the generic kinds left: who, verb and resource (with its subresource) of every exchange
  on a generic rule, counted, most first;
- summaries that contradict the request (`contradiction`), each listed: a failure (4xx,
  5xx) whose summary says neither its code nor what that code means (a 404 "not found", a
  409 "conflict"), a success said as a failure, a subresource the summary does not name (an
  eviction must say evict, a TokenRequest token), a read said as a write, a write as
  another (a delete as a create, a patch as a delete), a Namespace named as if it were in
  itself (`shop/shop`). Words are what it checks: a false claim in the right words (a
  wrong reason, a wrong cause) is for the tests of each rule to catch.

The goal: 0 unattributed, 0 unknown actors, generic ≤ 2%
and none among the writes, ≥ 95% of controller writes with a cause, no contradiction. The
figures are reported, not asserted: the exit status is 0.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.reader import iter_records
from k8s_wiretap.explain.explainer import Explainer
from k8s_wiretap.explain.stream import explained
from k8s_wiretap.kube.verbs import WRITES

ROOT = Path(__file__).resolve().parents[1]
RECORDING = ROOT / "recordings" / "wide-session.jsonl.gz"
SAMPLES = ROOT / "tests" / "importers" / "data"
GENERIC = frozenset({"write", "read", "other"})  # the catch-all rules' ids
CONTROLLERS = ("controller-manager", "scheduler")  # components whose writes need a cause


@dataclass(frozen=True)
class Said:
    """What the benchmark needs of one explained exchange."""

    id: str
    component: str
    verb: str
    resource: str  # resource/subresource, or the path of a non-resource request
    status: int | None
    rule: str
    cause: bool  # caused_by names an event
    reason: bool  # or the reason names a retry, a timer, a start-up
    summary: str
    namespace: str = ""

    @property
    def generic(self) -> bool:
        return self.rule in GENERIC

    @property
    def write(self) -> bool:
        return self.verb in WRITES

    @property
    def by_controller(self) -> bool:
        return self.component.split("/", 1)[0] in CONTROLLERS


def said(explainer: Explainer, exchange: Exchange) -> Said:
    """One exchange as `explain --format json` explains it (its who, rule and cause)."""
    info = exchange.info
    resource = info.resource + (f"/{info.subresource}" if info.subresource else "")
    return Said(
        exchange.id,
        explainer.analysis.who(exchange).component,
        info.verb,
        resource if info.is_resource_request else exchange.path.split("?", 1)[0],
        exchange.status,
        (explanation := explainer.summaries.explain(exchange)).rule,
        explainer.chains.caused_by(exchange) is not None,
        explainer.chains.reason(exchange) is not None,
        explanation.summary,
        info.namespace,
    )


FAILED = {  # what the summary of a failure with this status says, besides its code
    403: ("forbidden",),
    404: ("not found", "finds no", "is gone", "already gone"),
    408: ("timed out",),
    409: ("conflict", "already exists"),
    410: ("expired", "gone"),
    413: ("too large",),
    422: ("invalid",),
    429: ("refused", "too many"),
    504: ("timed out",),
}
FAILED_ANY = ("refused", "error", "unavailable", "failed", "no answer")  # any other code
SUCCEEDED_NOT = ("forbidden (", "not found (", "conflict (", "invalid (", "refused (")

NAMED = {  # a subresource's summary names what it is by one of these
    "eviction": ("evict",),
    "token": ("token",),
    "binding": ("bind",),
    "status": ("status", "report", "stopped", "condition"),
    "scale": ("scale", "replicas"),
    "ephemeralcontainers": ("ephemeral", "debug"),
    "resize": ("resize",),
    "approval": ("approv", "deni"),
    "finalize": ("finaliz",),
    "log": ("log",),
}
SAID_AS = {  # verbs a summary must not say of an exchange of these verbs
    "create": (" deletes ", " delete "),
    "delete": (" creates ", " create "),
    "deletecollection": (" creates ", " create "),
    "patch": (" creates ", " deletes "),
    "update": (" creates ", " deletes "),
    "get": (" creates ", " deletes ", " patches ", " updates "),
    "list": (" creates ", " deletes ", " patches ", " updates "),
    "watch": (" creates ", " deletes ", " patches ", " updates "),
}


def contradiction(s: Said) -> str | None:
    """What in `s`'s summary the request contradicts (see the module's docstring), if any."""
    text = f" {s.summary.lower()} "
    status = s.status or 0
    said = str(status) in text or any(w in text for w in FAILED.get(status, FAILED_ANY))
    if status >= 400 and not said:
        return f"a {status} said as a success"
    if 200 <= status < 300 and any(w in text for w in SUCCEEDED_NOT):
        return f"a {status} said as a failure"
    subresource = s.resource.partition("/")[2]
    named = NAMED.get(subresource)
    if named and not any(w in text for w in named):
        return f"the {subresource} subresource is not named"
    done = text.split(", so ", 1)[0]  # what it did, not what follows from it
    wrong = [w.strip() for w in SAID_AS.get(s.verb, ()) if w in done]
    if wrong:
        return f"a {s.verb} said as '{wrong[0]}'"
    if s.resource == "namespaces" and s.namespace and f"{s.namespace}/{s.namespace}" in text:
        return "a Namespace named as if it were in itself"
    return None


def unknown_actor(summary: str) -> bool:
    """Whether a summary tells `unknown` as who did it: opening with it (`unknown creates
    ...`, `unknown: get ...`, `unknown's informer ...`), or `by unknown`."""
    text = summary.lower()
    return text.startswith(("unknown ", "unknown:", "unknown's")) or " by unknown" in text


def explain(path: Path) -> list[Said]:
    """Every exchange of the recording at `path`, explained, in time order."""
    out: list[Said] = []
    warnings: list[str] = []
    explained(iter_records(path, warnings), said, out.append)
    return out


@dataclass
class Coverage:
    """The counts the benchmark reports."""

    exchanges: int = 0
    unattributed: int = 0
    unknown_actors: int = 0
    generic: int = 0
    writes: int = 0
    generic_writes: int = 0
    controller_writes: int = 0
    controller_caused: int = 0
    controller_by_event: int = 0
    kubelet_writes: int = 0
    kubelet_caused: int = 0
    kinds: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    contradictions: list[tuple[Said, str]] = field(default_factory=list)


def coverage(explained_: Iterable[Said]) -> Coverage:
    """Count what `explained_` says (see the module's docstring)."""
    c = Coverage()
    for s in explained_:
        c.exchanges += 1
        c.unattributed += s.component in ("", "unknown")
        c.unknown_actors += unknown_actor(s.summary)
        c.writes += s.write
        if s.generic:
            c.generic += 1
            c.generic_writes += s.write
            c.kinds[(s.component, s.verb, s.resource)] += 1
        if s.write and s.by_controller:
            c.controller_writes += 1
            c.controller_caused += s.cause or s.reason
            c.controller_by_event += s.cause
        wrong = contradiction(s)
        if wrong is not None:
            c.contradictions.append((s, wrong))
        if s.write and s.component == "kubelet":
            c.kubelet_writes += 1
            c.kubelet_caused += s.cause or s.reason
    return c


def _share(part: int, whole: int) -> str:
    return f"{part:,} of {whole:,} ({100 * part / whole:.1f}%)" if whole else "0 of 0"


def table(c: Coverage) -> list[str]:
    """The benchmark's report, line by line."""
    rows = [
        ("exchanges", f"{c.exchanges:,}", ""),
        ("unattributed (no who)", _share(c.unattributed, c.exchanges), "0"),
        ("unknown actors", _share(c.unknown_actors, c.exchanges), "0"),
        ("on a generic rule", _share(c.generic, c.exchanges), "≤ 2%"),
        ("writes on a generic rule", _share(c.generic_writes, c.writes), "0"),
        (
            "controller writes with a cause",
            _share(c.controller_caused, c.controller_writes),
            "≥ 95%",
        ),
        ("  of which by a watch event", _share(c.controller_by_event, c.controller_writes), ""),
        ("kubelet writes with a cause", _share(c.kubelet_caused, c.kubelet_writes), ""),
        ("generic kinds (who verb resource)", f"{len(c.kinds):,}", "0"),
        ("summaries that contradict it", f"{len(c.contradictions):,}", "0"),
    ]
    lines = [f"{'figure':<36} {'measured':<26} goal"]
    lines += [f"{name:<36} {value:<26} {goal}".rstrip() for name, value, goal in rows]
    lines += ["", f"{'count':>5}  generic kind (who verb resource)"]
    for (who, verb, resource), count in c.kinds.most_common():
        lines.append(f"{count:>5}  {who} {verb} {resource}")
    if c.contradictions:
        lines += ["", "contradictions (why: who verb resource status: summary)"]
    for s, why in c.contradictions:
        lines.append(f"  {why}: {s.component} {s.verb} {s.resource} {s.status}: {s.summary}")
    return lines


def imported(log: Path, out: Path) -> None:
    """`k8s-wiretap import audit LOG -o OUT`, as a user runs it."""
    argv = [sys.executable, "-m", "k8s_wiretap", "import", "audit", str(log), "-o", str(out)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{log}: import audit exited {done.returncode}: {done.stderr.strip()}")


def sample_rows() -> list[str]:
    """One row a sample of samples.json: its exchanges, unattributed, unknown actors,
    generic and contradicting summaries (a markdown table, as docs/benchmarks.md holds it)."""
    samples = json.loads((SAMPLES / "samples.json").read_text())
    rows = [
        "| sample | shape | exchanges | unattributed | unknown actors | generic | contradicting |"
    ]
    rows.append("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for number, sample in enumerate(samples):
            out = Path(folder) / f"{number}.jsonl"
            imported(SAMPLES / sample["file"], out)
            c = coverage(explain(out))
            rows.append(
                f"| {sample['file']} | {sample['shape']} | {c.exchanges} | {c.unattributed} "
                f"| {c.unknown_actors} | {c.generic} | {len(c.contradictions)} |"
            )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench explain_coverage")
    parser.add_argument("recording", nargs="?", type=Path, help="(as --recording)")
    parser.add_argument("--recording", dest="option", type=Path, default=RECORDING)
    parser.add_argument("--samples", action="store_true", help="each audit-log sample")
    args = parser.parse_args(argv or [])
    if args.samples:
        print("\n".join(sample_rows()))
        return
    recording = args.recording or args.option
    print(f"explain coverage: {recording.name}")
    for line in table(coverage(explain(recording))):
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
