"""`k8s-wiretap demo`: the `kubectl apply` story on a real control plane, start to finish.

Starts a lab in a folder of its own, applies a 2-replica Deployment with the real kubectl,
waits for the pods to run on the hollow node, scales to 3, shows the result and stops the lab.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from k8s_wiretap.errors import WiretapError
from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.paths import state_dir
from k8s_wiretap.workshop import manifest

__all__ = ["register", "run_demo"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("demo", help="tell the `kubectl apply` story on a real lab")
    parser.add_argument(
        "--dir",
        type=Path,
        default=None,
        help=f"lab folder for the demo (default {state_dir() / 'demo'})",
    )
    parser.add_argument("--keep", action="store_true", help="leave the lab running at the end")
    parser.set_defaults(handler=lambda args: run_demo(args.dir, keep=args.keep))


def _say(text: str) -> None:
    print(f"\n\033[1m== {text}\033[0m", flush=True)


def _kubectl(kubeconfig: str, *args: str, stdin: str | None = None) -> str:
    argv = ["kubectl", *args]
    print(f"$ {' '.join(argv)}", flush=True)
    env = {**os.environ, "KUBECONFIG": kubeconfig}
    result = subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env, check=False)
    print(result.stdout, end="", flush=True)
    if result.returncode != 0:
        raise WiretapError(f"kubectl {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


def _wait_running(kubeconfig: str, count: int, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    env = {**os.environ, "KUBECONFIG": kubeconfig}
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
    raise WiretapError(f"{count} pods did not reach Running within {timeout:.0f} s")


def run_demo(directory: Path | None, keep: bool = False) -> int:
    lab = Lab(directory or state_dir() / "demo")
    lab.down()
    _say(f"Starting a real control plane in {lab.dir}")
    state = lab.up(UpOptions())
    kubeconfig = state.kubeconfig
    try:
        _say("kubectl apply: a Deployment with 2 replicas")
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as file:
            file.write(manifest("web"))
        _kubectl(kubeconfig, "apply", "-f", file.name)
        _wait_running(kubeconfig, 2)
        _say(
            "deployment controller -> ReplicaSet -> replicaset controller -> Pods -> "
            "scheduler binds them to node-1 -> kubelet reports Running"
        )
        _kubectl(kubeconfig, "get", "deploy,rs,pods", "-o", "wide")
        _say("kubectl scale to 3")
        _kubectl(kubeconfig, "scale", "deployment/web", "--replicas=3")
        _wait_running(kubeconfig, 3)
        _kubectl(kubeconfig, "get", "pods", "-o", "wide")
        os.unlink(file.name)
    finally:
        if keep:
            _say(f"Lab left running: export KUBECONFIG={kubeconfig}")
        else:
            _say("Stopping the lab")
            lab.down(sys.stdout)
    return 0
