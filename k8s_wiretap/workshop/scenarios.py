"""Scripted stories, run with the real kubectl against a lab, step by step.

They are the workshop's material and the source of the recordings in `recordings/`
(`scripts/record_fixtures.py`): every kind of write the decoders must understand happens in
them on real traffic — client-side apply (create, then a three-way strategic merge patch),
scale, server-side apply (and a second manager's conflict, then forced), a custom resource
patched with a JSON merge patch and a JSON patch, a Secret created and re-applied, a watch
that sees changes, a rollout of a new image with a field removed from the file and one
someone else set, a delete; then (`restart_api_server`) the API server restarts, informers
re-list and re-watch, and a watch from an old resourceVersion gets 410 Gone.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from k8s_wiretap.errors import WiretapError
from k8s_wiretap.workshop import manifest

__all__ = [
    "GREETING",
    "STORIES",
    "Step",
    "Story",
    "environment",
    "kubectl",
    "restart_api_server",
    "run_story",
    "wait_for",
]


@dataclass(frozen=True)
class Step:
    """One kubectl command, and what must be true before the next step runs."""

    title: str
    args: tuple[str, ...]
    stdin: str | None = None
    until: str | None = None  # a jsonpath query on `until_get` that must print `expect`
    until_get: tuple[str, ...] = ()
    expect: str = ""
    background: bool = False  # keep running (e.g. a watch) until the story ends
    refused: str = ""  # the step must fail, saying this (a conflict the story shows)


GREETING = """apiVersion: workshop.example.com/v1
kind: Greeting
metadata: {name: hello}
spec: {message: hello, times: 1}
"""
SECRET = """apiVersion: v1
kind: Secret
metadata: {name: db}
stringData: {password: %s}
"""
PODS_RUNNING = "{range .items[*]}{.status.phase}{' '}{end}"


@dataclass(frozen=True)
class Story:
    name: str
    steps: tuple[Step, ...] = field(default_factory=tuple)


# The third apply: the file changes the image, drops the port it had, and says 3 replicas
# again (after `kubectl scale` made them 2): changed, removed and left-alone fields at once.
NEW_VERSION = (
    manifest("web")
    .replace("replicas: 2", "replicas: 3")
    .replace("nginx:1.25", "nginx:1.27")
    .replace("          ports:\n            - containerPort: 80\n", "")
)

# A second server-side applier (manager `ops`) wants the colour kubectl's apply set.
OPS_SETTINGS = manifest("settings").replace("blue", "red").replace("  size: large\n", "")

APPLY = Story(
    "apply",
    (
        Step("watch pods while everything happens", ("get", "pods", "-w"), background=True),
        Step(
            "apply a 2-replica Deployment (GET 404, then POST)",
            ("apply", "-f", "-"),
            manifest("web"),
            until=PODS_RUNNING,
            until_get=("get", "pods", "-l", "app=web"),
            expect="Running Running ",
        ),
        Step(
            "apply it again with 3 replicas (GET, then a strategic merge patch)",
            ("apply", "-f", "-"),
            manifest("web").replace("replicas: 2", "replicas: 3"),
            until=PODS_RUNNING,
            until_get=("get", "pods", "-l", "app=web"),
            expect="Running Running Running ",
        ),
        Step(
            "scale to 2 (a merge patch of the scale subresource)",
            ("scale", "deployment/web", "--replicas=2"),
            until="{.status.replicas}",
            until_get=("get", "deployment", "web"),
            expect="2",
        ),
        Step(
            "someone else labels it (a field that is in neither file)",
            ("label", "deployment", "web", "team=payments"),
        ),
        Step(
            "apply a new version: a new image, the port left out of the file, 3 replicas",
            ("apply", "-f", "-"),
            NEW_VERSION,
            until="{.status.updatedReplicas}/{.status.replicas}",
            until_get=("get", "deployment", "web"),
            expect="3/3",
        ),
        Step(
            "server-side apply a ConfigMap",
            ("apply", "--server-side", "-f", "-"),
            manifest("settings"),
        ),
        Step(
            "server-side apply it again, changed",
            ("apply", "--server-side", "-f", "-"),
            manifest("settings").replace("blue", "green").replace("  size: large\n", ""),
        ),
        Step(
            "another manager applies a field kubectl owns: 409 Conflict",
            ("apply", "--server-side", "--field-manager=ops", "-f", "-"),
            OPS_SETTINGS,
            refused="conflict",
        ),
        Step(
            "it forces the apply and takes the field over",
            ("apply", "--server-side", "--field-manager=ops", "--force-conflicts", "-f", "-"),
            OPS_SETTINGS,
        ),
        Step(
            "create a custom resource definition",
            ("apply", "-f", "-"),
            manifest("crd"),
            until="{.status.conditions[?(@.type=='Established')].status}",
            until_get=("get", "crd", "greetings.workshop.example.com"),
            expect="True",
        ),
        Step("apply a custom resource", ("apply", "-f", "-"), GREETING),
        Step(
            "apply it again, changed (a JSON merge patch: CRs have no strategic merge)",
            ("apply", "-f", "-"),
            GREETING.replace("times: 1", "times: 2"),
        ),
        Step(
            "patch it with a JSON patch",
            (
                "patch",
                "greeting",
                "hello",
                "--type",
                "json",
                "-p",
                '[{"op": "replace", "path": "/spec/message", "value": "hi"}]',
            ),
        ),
        Step("apply a Secret", ("apply", "-f", "-"), SECRET % "first-password"),
        Step("apply it again with a new value", ("apply", "-f", "-"), SECRET % "second-password"),
        Step("delete the Deployment", ("delete", "deployment", "web", "--wait=true")),
    ),
)

STORIES = {story.name: story for story in (APPLY,)}


def environment(kubeconfig: str, cache: Path) -> dict[str, str]:
    """The story's environment: `kubeconfig`, a private kubectl cache, and the lab's own
    kubectl (`DIR/bin/kubectl`, beside the lab's kubeconfig) first on PATH when the lab has
    one, as `eval "$(k8s-wiretap lab env)"` gives; else the machine's kubectl."""
    env = {**os.environ, "KUBECONFIG": kubeconfig, "KUBECACHEDIR": str(cache)}
    own = Path(kubeconfig).parent / "bin"
    if (own / "kubectl").exists():
        env["PATH"] = f"{own}{os.pathsep}{env.get('PATH', '')}"
    return env


def kubectl(env: dict[str, str], *args: str, stdin: str | None = None, check: bool = True) -> str:
    """kubectl's output; WiretapError if it fails, unless not `check`."""
    result = _run(env, args, stdin)
    if check and result.returncode != 0:
        raise WiretapError(f"kubectl {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


def wait_for(
    env: dict[str, str],
    query: tuple[str, ...],
    want: str,
    timeout: float = 90.0,
    *,
    within: bool = False,
    what: str = "",
) -> None:
    """Until kubectl `query` prints `want` (with `within`: holds it); WiretapError, naming
    `what` (else the query), after `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        said = kubectl(env, *query, check=False)
        if said == want or (within and want in said):
            return
        time.sleep(0.3)
    raise WiretapError(
        f"{what or 'kubectl ' + ' '.join(query)}: not {want!r} within {timeout:.0f} s"
    )


def _run(
    env: dict[str, str], args: tuple[str, ...], stdin: str | None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["kubectl", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def _kubectl(
    env: dict[str, str], args: tuple[str, ...], stdin: str | None, refused: str = ""
) -> str:
    if not refused:
        return kubectl(env, *args, stdin=stdin)
    result = _run(env, args, stdin)
    if result.returncode == 0 or refused not in result.stderr:
        raise WiretapError(f"kubectl {' '.join(args)} was to be refused ({refused})")
    return result.stdout


def _wait(env: dict[str, str], step: Step, timeout: float = 90.0) -> None:
    if step.until is None:
        return
    query = (*step.until_get, "-o", f"jsonpath={step.until}")
    wait_for(env, query, step.expect, timeout, what=step.title)


def run_story(
    name: str | Story,
    kubeconfig: str,
    cache: Path,
    out: TextIO = sys.stderr,
    settle: Callable[[], None] | None = None,
) -> None:
    """Run story `name` (or a Story of its own) against `kubeconfig`; `settle` runs after
    the last step."""
    story = name if isinstance(name, Story) else STORIES[name]
    env = environment(kubeconfig, cache)
    background: list[subprocess.Popen[str]] = []
    try:
        for step in story.steps:
            print(f"-- {step.title}: kubectl {' '.join(step.args)}", file=out, flush=True)
            if step.background:
                background.append(
                    subprocess.Popen(
                        ["kubectl", *step.args],
                        env=env,
                        text=True,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                )
                continue
            _kubectl(env, step.args, step.stdin, step.refused)
            _wait(env, step)
        if settle:
            settle()
    finally:
        for process in background:
            process.terminate()
            process.wait(30)


def restart_api_server(restart: Callable[[str], None], kubeconfig: str, cache: Path) -> None:
    """Restart the API server (`restart`: the lab's) and show what follows: the informers'
    watches end, they re-list and re-watch; after a restart the watch cache starts at
    etcd's current revision, so a watch from an older resourceVersion gets HTTP 200 and
    then ERROR 410 Expired."""
    env = environment(kubeconfig, cache)
    restart("apiserver")
    old = "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1&timeoutSeconds=3"
    _kubectl(env, ("get", "--raw", old), None)
    time.sleep(3)  # the informers re-list and re-watch
