"""Shared fixtures: a real lab for the whole session, and the real kubectl."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.lab.state import LabState


class Kubectl:
    """The real kubectl against one kubeconfig (or `server`), with a private cache."""

    def __init__(
        self, kubeconfig: str, cache: Path, server: str | None = None, binary: str = "kubectl"
    ) -> None:
        self.env = {**os.environ, "KUBECONFIG": kubeconfig, "KUBECACHEDIR": str(cache)}
        self.server = ["--server", server] if server else []
        self.binary = binary

    def run(
        self, *args: str, stdin: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [self.binary, *self.server, *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env,
            timeout=120,
            check=False,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"{self.binary} {' '.join(args)} failed: {result.stderr}")
        return result

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [self.binary, *self.server, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env,
        )

    def __call__(self, *args: str, stdin: str | None = None) -> str:
        return self.run(*args, stdin=stdin).stdout


def cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`k8s-wiretap ARGS` as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "k8s_wiretap", *args],
        capture_output=True,
        text=True,
        env=env or dict(os.environ),
        timeout=timeout,
        check=False,
    )


def load_script(name: str) -> ModuleType:
    """`scripts/<name>.py`, imported as module `name` (the scripts are not a package)."""
    path = Path(__file__).resolve().parent.parent / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Wait for something that must happen at all; fail with `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def lab_processes(directory: Path) -> list[int]:
    """Pids of live processes whose command line mentions `directory` (a lab's own)."""
    marker = str(directory).encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state not in ("Z", "X"):
            pids.append(int(entry.name))
    return pids


# Fixtures that start the lab, or need its binaries, the Kubernetes sources or Debian's
# Chromium (`browser`, in tests/views/tui/test_serve.py): a test that uses one, directly or
# through another fixture, is marked `lab` (so `make unit` leaves it out).
LAB_FIXTURES = frozenset({"lab", "kubectl", "story", "story_1_20", "k8s_source", "browser"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `lab` every test whose fixtures need the lab (modules that start labs, proxies or
    other programs of their own say so with `pytestmark = pytest.mark.lab`)."""
    for item in items:
        if LAB_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.lab)


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabState]:
    """A full lab (etcd, API server, controller manager, scheduler, hollow kubelet)."""
    instance = Lab(tmp_path_factory.mktemp("lab"))
    state = instance.up(UpOptions(build=False))
    yield state
    instance.down()


@pytest.fixture(scope="session")
def kubectl(lab: LabState, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    return Kubectl(lab.kubeconfig, tmp_path_factory.mktemp("kubecache"))


def record_story(folder: Path, kube_version: str | None = None) -> Path:
    """The workshop's apply story, recorded now on a lab of `kube_version` (the default
    release if None) whose every client talks through the wiretap, then an API server
    restart (the same story as recordings/apply-story*.jsonl.gz)."""
    from k8s_wiretap.workshop.scenarios import restart_api_server, run_story

    lab = Lab(folder / "lab")
    options = UpOptions(build=False, record=folder / "story.jsonl", kube_version=kube_version)
    state = lab.up(options)
    try:
        run_story("apply", state.kubeconfig, folder / "cache", settle=lambda: time.sleep(2))
        restart_api_server(lab.restart, state.kubeconfig, folder / "cache")
    finally:
        lab.down()
    return folder / "story.jsonl"


@pytest.fixture(scope="session")
def story(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The apply story recorded now on the default release (kube.release.CURRENT)."""
    return record_story(tmp_path_factory.mktemp("story"))


@pytest.fixture(scope="session")
def story_1_20(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The apply story recorded now on 1.20 (with the machine's kubectl): the 1.20 lab's
    smaller set — lab up, the proxy, decoding and patch replay — rests on it."""
    return record_story(tmp_path_factory.mktemp("story-1.20"), "1.20")


@pytest.fixture(scope="session")
def k8s_source() -> Path:
    """Kubernetes 1.20 sources: K8S_SOURCE, else Debian's source package (cached once)."""
    from k8s_wiretap.lab.apisource import api_source

    return Path(os.environ.get("K8S_SOURCE") or api_source())
