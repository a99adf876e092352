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
from _pytest.nodeid import coerce_node_id
from hypothesis import HealthCheck, settings

from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.lab.state import LabState

# Property tests assert what happens, not how fast: Hypothesis's 200 ms deadline an example
# and its "too slow" health check are timed tests, which fail on a loaded machine (CI runs
# four workers on two cores).
settings.register_profile("wiretap", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("wiretap")


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
LAB_FIXTURES = frozenset(
    {"lab", "kubectl", "tapped", "story", "story_1_20", "k8s_source", "browser"}
)


# The session fixtures that start a lab, record a story, launch a browser or start a Dask
# cluster, in the order their tests are handed out when the suite runs in parallel
# (pytest-xdist, `make test`): the tests of each form one group that one worker runs, so
# each starts once.
SHARED = ("lab", "tapped", "story", "story_1_20", "browser", "k8s_source", "dask_cluster")

# The session `lab`'s tests are too many for one worker (the run's longest path): these
# modules take it in groups of their own, `lab-2` and `lab-3`, so that two more workers each
# start a lab of theirs (a session fixture is one per worker) and the three run side by side.
# Whole modules move (a module's tests may build on each other's objects); the groups are
# balanced by the modules' measured times (docs/development.md, "The suite in parallel").
LAB_GROUPS = {
    "tests/proxy/test_recording_failures.py": "lab-2",
    "tests/proxy/test_workers.py": "lab-2",
    "tests/patch/test_lab_replay.py": "lab-2",
    "tests/importers/test_audit.py": "lab-2",
    "tests/importers/test_mitmflows.py": "lab-3",
    "tests/decode/test_proto_lab.py": "lab-3",
    "tests/explain/test_kubectl_commands.py": "lab-3",
    "tests/explain/test_who.py": "lab-3",
    "tests/proxy/test_remote.py": "lab-3",
    "tests/proxy/test_upstream_loss.py": "lab-3",
    "tests/explain/test_subresources.py": "lab-3",
    "tests/views/test_contentview_lab.py": "lab-3",
    "tests/proxy/test_exec_credentials.py": "lab-3",
    "tests/explain/test_failures.py": "lab-3",
}


@pytest.hookimpl(tryfirst=True)  # before xdist's, which reads the groups into the ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark `lab` every test whose fixtures need the lab (modules that start labs, proxies or
    other programs of their own say so with `pytestmark = pytest.mark.lab`); in a parallel
    run (`--dist loadgroup`), group and order them too (`parallel_groups`)."""
    for item in items:
        if LAB_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.lab)
    if getattr(config.option, "loadgroup", False):
        parallel_groups(items)


def parallel_groups(items: list[pytest.Item]) -> None:
    """Put each test in the xdist group one worker runs whole, and the groups in the order
    the workers take them (`--no-loadscope-reorder`: collection order).

    A test that uses a shared lab (`SHARED`) is in that fixture's group, so the session
    fixture starts once in the run (the `lab` once in each of its groups: `LAB_GROUPS`);
    any other test is in its module's group, so a module-scoped fixture (a lab of the
    module's own, a recording loaded once) is made once.
    The shared labs come first, then modules that start labs of their own, then the rest:
    the long waits on labs begin at once, and the tests that need only a core fill the
    workers' idle time around them."""
    ranks: dict[str, int] = {}
    for item in items:
        group, rank = _group(item)
        marked = item.get_closest_marker("xdist_group")
        if not marked:
            item.add_marker(pytest.mark.xdist_group(group))
        name = marked.args[0] if marked and marked.args[0] not in SHARED else group
        # pytest-xdist reads the group from the id's `@NAME` suffix; it writes that into
        # `item._nodeid`, which pytest 9.2 no longer reads (the id is `item._id`): so here
        item._id = coerce_node_id(f"{item.nodeid}@{name}")
        ranks[item.nodeid] = rank
    items.sort(key=lambda item: ranks[item.nodeid])


def _group(item: pytest.Item) -> tuple[str, int]:
    """The xdist group of `item` and its rank in the order of handing out (lowest first)."""
    names = getattr(item, "fixturenames", ())
    marked = item.get_closest_marker("xdist_group")  # one taken by `getfixturevalue`
    module = item.nodeid.split("::")[0]
    for rank, shared in enumerate(SHARED):
        if shared in names or (marked and marked.args == (shared,)):
            return (LAB_GROUPS.get(module, shared) if shared == "lab" else shared), rank
    return module, len(SHARED) + (0 if item.get_closest_marker("lab") else 1)


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


@pytest.fixture(scope="session")
def tapped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabState]:
    """A lab whose every client talks through the wiretap, recording (`lab up --via-proxy`),
    with the workshop's `web` Deployment applied through it, its two pods Running on node-1,
    and the kubelet's node lease taken: what `--via-proxy` records of a control plane at work
    (tests/lab/test_via_proxy.py and test_current_release.py read it)."""
    from k8s_wiretap.workshop import manifest

    folder = tmp_path_factory.mktemp("tapped")
    lab = Lab(folder / "lab")
    state = lab.up(UpOptions(build=False, record=folder / "control-plane.jsonl"))
    try:
        client = Kubectl(state.kubeconfig, folder / "cache")
        client("apply", "-f", "-", stdin=manifest("web"))
        pods = (
            "get",
            "pods",
            "-o",
            "jsonpath={range .items[*]}{.spec.nodeName}/{.status.phase} {end}",
        )
        running = ["node-1/Running", "node-1/Running"]
        wait_until(lambda: client(*pods).split() == running, 90, "2 pods Running via the wiretap")
        lease = ("get", "lease", "-n", "kube-node-lease", "node-1", "--ignore-not-found")
        # the kubelet takes its lease one renew interval (10 s) after it registers
        wait_until(lambda: "node-1" in client(*lease), 60, "the kubelet's node lease")
        yield state
    finally:
        lab.down()


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
    """Kubernetes 1.20 sources: K8S_SOURCE, else the cached tree of Debian's source package,
    which `make test` fetches before the suite (`make api-source`); no test fetches it."""
    from k8s_wiretap.lab.apisource import cached_api_source

    found = os.environ.get("K8S_SOURCE") or cached_api_source()
    if not found:
        pytest.fail("no Kubernetes 1.20 sources in the cache: run `make api-source`")
    return Path(found)


@pytest.fixture(scope="session")
def dask_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Dask cluster on loopback, once for the run: `dask scheduler` (a free port, no
    dashboard) and two `dask worker ADDRESS --nthreads 1` from the virtualenv's bin, running
    this checkout's package (bench/daskcluster.py); yields the scheduler's address once it
    has both workers, and stops every process of theirs at the end, whatever the tests did."""
    from bench.daskcluster import cluster

    with cluster(tmp_path_factory.mktemp("dask"), workers=2) as address:
        yield address
