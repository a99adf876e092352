"""`k8s-wiretap demo`: the `kubectl apply` story, told on real traffic.

Without a cluster (`make demo`): the walkthrough of the bundled recording
(`k8s-wiretap walkthrough`, commands/walkthrough.py), in the TUI, or printed when stdout is
not a terminal.

`--live` starts a lab whose every client talks through the wiretap (`lab up --via-proxy`), applies a
2-replica Deployment with the real kubectl, applies it again with 3 replicas (the three-way
strategic merge patch), waits for the pods to run on the hollow node, and then shows, from
the recording, who said what: kubectl's GET and PATCH, the deployment controller updating the
ReplicaSet, the ReplicaSet controller creating the pod, the scheduler's binding and the
kubelet's status report — told by the explanation layer, as `k8s-wiretap explain` tells a
recording (views/story.py): the patch, field by field, its replay, and the tree of what it
set off, hop by hop.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from k8s_wiretap.capture.reader import load
from k8s_wiretap.errors import UsageError, WiretapError
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.explainer import Explainer
from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.paths import state_dir
from k8s_wiretap.views.story import write_story
from k8s_wiretap.views.tui.walkthrough.chapters import load as load_walkthrough
from k8s_wiretap.wire.words import counted
from k8s_wiretap.workshop import manifest

__all__ = ["register", "run_demo"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="the `kubectl apply` story: the walkthrough of the bundled recording, "
        "or --live on a lab of its own",
    )
    parser.add_argument(
        "--live",
        action="store_true",
        help="run the story on a real lab (needs the control-plane binaries and kubectl)",
    )
    parser.add_argument(
        "--dir",
        type=Path,
        default=None,
        help=f"--live: lab folder for the demo (default {state_dir() / 'demo'})",
    )
    parser.add_argument(
        "--keep", action="store_true", help="--live: leave the lab running at the end"
    )
    parser.set_defaults(handler=_demo)


def _demo(args: argparse.Namespace) -> int:
    if args.live:
        return run_demo(args.dir, keep=args.keep)
    if args.dir is not None or args.keep:
        raise UsageError("--dir and --keep are for the lab of `demo --live`")
    from k8s_wiretap.commands.walkthrough import interactive, run_walkthrough

    return run_walkthrough(load_walkthrough(), text=not interactive())


def _say(text: str) -> None:
    """A heading of the demo's story: bold on a terminal, plain into a pipe or a file, or
    where NO_COLOR is set (https://no-color.org)."""
    heading = f"== {text}"
    if sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
        heading = f"\033[1m{heading}\033[0m"
    print(f"\n{heading}", flush=True)


def _kubectl(env: dict[str, str], *args: str, stdin: str | None = None) -> str:
    print(f"$ kubectl {' '.join(args)}", flush=True)
    result = subprocess.run(
        ["kubectl", *args], input=stdin, capture_output=True, text=True, env=env, check=False
    )
    print(result.stdout, end="", flush=True)
    if result.returncode != 0:
        raise WiretapError(f"kubectl {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


def _wait_running(env: dict[str, str], count: int, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        phases = subprocess.run(
            [
                "kubectl",
                "get",
                "pods",
                "-l",
                "app=web",
                "-o",
                "jsonpath={range .items[*]}{.status.phase}{'\\n'}{end}",
            ],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        ).stdout.split()
        if phases.count("Running") >= count:
            return
        time.sleep(0.5)
    raise WiretapError(f"{counted(count, 'pod')} did not reach Running within {timeout:.0f} s")


def _show_story(recording_path: Path, since: float) -> None:
    """The second apply's story, as `explain` tells it: the explanation layer's words."""
    recording = load(recording_path)
    explainer = Explainer(Analysis.of(recording))
    applies = [
        a
        for a in explainer.actions()
        if a.title == "kubectl apply" and a.exchanges and a.exchanges[0].time >= since
    ]
    write_story(explainer, sys.stdout, actions=applies)
    components: dict[str, int] = {}
    for exchange in recording.exchanges:
        name = exchange.component.split("/")[0]
        components[name] = components.get(name, 0) + 1
    print(
        f"\n{counted(len(recording.exchanges), 'exchange')} recorded in all: "
        + ", ".join(f"{n} {c}" for c, n in sorted(components.items(), key=lambda i: -i[1]))
    )


def run_demo(directory: Path | None, keep: bool = False) -> int:
    lab = Lab(directory or state_dir() / "demo")
    lab.down()
    record = lab.dir / "demo.jsonl"
    _say(f"A real control plane in {lab.dir}, every client talking through the wiretap")
    state = lab.up(UpOptions(record=record))
    env = {**os.environ, "KUBECONFIG": state.kubeconfig, "KUBECACHEDIR": str(lab.dir / "cache")}
    try:
        _say("kubectl apply: a Deployment with 2 replicas")
        _kubectl(env, "apply", "-f", "-", stdin=manifest("web"))
        _wait_running(env, 2)
        _kubectl(env, "get", "deploy,rs,pods", "-o", "wide")
        _say("kubectl apply again, now with 3 replicas")
        since = time.time()
        _kubectl(
            env, "apply", "-f", "-", stdin=manifest("web").replace("replicas: 2", "replicas: 3")
        )
        _wait_running(env, 3)
        _kubectl(env, "get", "pods", "-o", "wide")
        time.sleep(0.5)  # let the kubelet's last status report reach the recording
        _say("What each component said to the API server for that second apply")
        _show_story(record, since)
    finally:
        if keep:
            _say(f"Lab left running: export KUBECONFIG={state.kubeconfig}")
        else:
            _say("Stopping the lab")
            lab.down()
        print(f"recording: {record}")
    return 0
