"""The package as a person installs it: `python -m build` makes an sdist and, from it, a
wheel; the wheel goes into a fresh virtualenv outside the checkout with the lock's
constraints (`pip install -c constraints.txt`, as `pipx install` would put it), and the
installed commands run from another folder, where no `recordings/` or `addons/` exists.

Marked `lab`: it builds, reaches the package index for what pip's cache lacks, and takes a
minute or two (one build and one install for the module)."""

from __future__ import annotations

import os
import select
import socket
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from mitmproxy import io

from tests.views.test_contentview import flow_of, protobuf_pod

pytestmark = pytest.mark.lab

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "k8s_wiretap"
# What the package carries beside its code: the committed recordings, audit log, facts and
# walkthroughs, and the mitmproxy scripts.
CARRIED = ("*.jsonl.gz", "*.walkthrough.yaml", "facts.json", "*.audit.log.gz")


def carried() -> list[str]:
    """The package-relative names of the data files the wheel must hold."""
    names = [
        path.relative_to(ROOT).as_posix()
        for pattern in CARRIED
        for path in (PACKAGE / "recordings").glob(pattern)
    ]
    names += [path.relative_to(ROOT).as_posix() for path in (PACKAGE / "addons").glob("*.py")]
    return sorted(names)


@dataclass(frozen=True)
class Installed:
    wheel: Path
    sdist: Path
    venv: Path
    elsewhere: Path  # a folder of no checkout: the commands run there

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)

    def env(self) -> dict[str, str]:
        """The environment without the checkout on the path, the venv's bin first."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        return env

    def run(self, *argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv,
            capture_output=True,
            text=True,
            cwd=self.elsewhere,
            env=self.env(),
            timeout=timeout,
            check=False,
        )

    def wiretap(self, *args: str) -> subprocess.CompletedProcess[str]:
        done = self.run(self.bin("k8s-wiretap"), *args)
        assert done.returncode == 0, (args, done.stderr)
        return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    """Build once (sdist, then the wheel from the sdist), install once."""
    base = tmp_path_factory.mktemp("package")
    dist, venv, elsewhere = base / "dist", base / "venv", base / "elsewhere"
    elsewhere.mkdir()
    built = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (wheel,) = dist.glob("k8s_wiretap-*.whl")
    (sdist,) = dist.glob("k8s_wiretap-*.tar.gz")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = subprocess.run(
        [
            str(venv / "bin" / "pip"),
            "install",
            "-q",
            "-c",
            str(ROOT / "constraints.txt"),
            str(wheel),
        ],
        capture_output=True,
        text=True,
        cwd=elsewhere,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        timeout=900,
        check=False,
    )
    assert pip.returncode == 0, pip.stderr[-3000:]
    yield Installed(wheel, sdist, venv, elsewhere)


def test_the_wheel_and_the_sdist_carry_the_recordings_walkthroughs_and_addons(
    installed: Installed,
) -> None:
    expected = carried()
    assert len(expected) > 10  # the recordings, their walkthroughs, the two scripts
    with zipfile.ZipFile(installed.wheel) as wheel:
        in_wheel = set(wheel.namelist())
    assert set(expected) <= in_wheel
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in in_wheel)
    with tarfile.open(installed.sdist) as sdist:
        top = sdist.getnames()[0].split("/")[0]
        in_sdist = {name.removeprefix(f"{top}/") for name in sdist.getnames()}
    assert set(expected) <= in_sdist
    assert {"LICENSE", "README.md", "CHANGELOG.md", "pyproject.toml"} <= in_sdist


def test_it_runs_from_the_virtualenv_not_the_checkout(installed: Installed) -> None:
    """`recordings` lists the installed files, each by name and full path."""
    listed = dict(line.split() for line in installed.wiretap("recordings").stdout.splitlines())
    site = installed.venv / "lib"
    assert "wide-session" in listed and "apply-story" in listed
    for path in map(Path, listed.values()):
        assert path.is_relative_to(site) and path.is_file(), path
    version = installed.wheel.name.split("-")[1]
    assert installed.wiretap("--version").stdout == f"k8s-wiretap {version}\n"


def test_the_demo_and_every_walkthrough_as_text(installed: Installed) -> None:
    demo = installed.wiretap("demo").stdout  # not a terminal: the narration, printed
    assert demo.startswith("What happens when you kubectl apply (apply-story.jsonl.gz)\n")
    assert "\n== 1/" in demo and "PATCH" in demo
    listing = installed.wiretap("walkthrough", "--list").stdout.splitlines()
    stories = sorted((PACKAGE / "recordings").glob("*.walkthrough.yaml"), key=_story)
    assert len(listing) == len(stories) > 1
    for line, path in zip(listing, stories, strict=True):
        name = _story(path)
        spec = yaml.safe_load(path.read_text())
        recording = spec.get("recording") or f"{name}.jsonl.gz"
        assert line.split()[0] == name and f" {spec['title']} (" in line
        told = installed.wiretap("walkthrough", name, "--text").stdout
        assert told.startswith(f"{spec['title']} ({recording})\n") and "\n== 1/" in told, name


def _story(path: Path) -> str:
    return path.name.removesuffix(".walkthrough.yaml")


def test_explain_export_and_history_of_a_bundled_recording_by_name(installed: Installed) -> None:
    story = installed.wiretap("explain", "wide-session").stdout
    checkout = subprocess.run(
        [
            sys.executable,
            "-m",
            "k8s_wiretap",
            "explain",
            str(PACKAGE / "recordings" / "wide-session.jsonl.gz"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert checkout.returncode == 0, checkout.stderr
    assert story == checkout.stdout and "\n== kubectl " in story
    picture = installed.elsewhere / "chain.svg"
    installed.wiretap("export", "apply-story", "--svg", str(picture))
    drawn = picture.read_text()
    assert "<svg " in drawn and drawn.rstrip().endswith("</svg>") and "kubectl apply" in drawn
    history = installed.wiretap("history", "history-session", "deploy/web").stdout
    assert history.startswith("Deployment default/web: ")


def test_the_addon_decodes_a_protobuf_pod_in_mitmdump(installed: Installed) -> None:
    """`mitmdump -s "$(k8s-wiretap addon --path contentview)" -r FLOWS`: the installed
    script, in the installed mitmproxy, shows a protobuf Pod as the server's JSON."""
    script = Path(installed.wiretap("addon", "--path", "contentview").stdout.strip())
    assert script.is_relative_to(installed.venv) and script.is_file()
    recorder = Path(installed.wiretap("addon", "--path").stdout.strip())
    assert recorder.name == "wiretap.py" and recorder.is_file()
    pod = protobuf_pod()
    assert pod.response_body is not None and pod.response_body.data[:4] == b"k8s\x00"
    flows = installed.elsewhere / "pod.mitm"
    with flows.open("wb") as file:
        io.FlowWriter(file).add(flow_of(pod, pod.response_body.data))
    mitmdump = [installed.bin("mitmdump"), "-n", "-r", str(flows), "--flow-detail", "4"]
    shown = installed.run(*mitmdump, "-s", str(script), "-s", str(recorder), timeout=120)
    assert shown.returncode == 0, shown.stderr
    name = pod.path.rsplit("/", 1)[1]
    assert '"kind": "Pod"' in shown.stdout and '"apiVersion": "v1"' in shown.stdout
    assert f'"name": "{name}"' in shown.stdout and '"containers": [' in shown.stdout
    plain = installed.run(*mitmdump, timeout=120)
    assert plain.returncode == 0 and '"containers": [' not in plain.stdout  # the script did it


def test_the_kubectl_plugin_is_installed(installed: Installed) -> None:
    """kubectl finds `kubectl-wiretap` on PATH and runs it as `kubectl wiretap`."""
    plugin = installed.venv / "bin" / "kubectl-wiretap"
    assert plugin.is_file() and os.access(plugin, os.X_OK)
    done = installed.run("kubectl", "wiretap", "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == installed.wiretap("--version").stdout
    assert "usage: k8s-wiretap lab up" in installed.wiretap("lab", "up", "--help").stdout


def test_serve_serves_a_bundled_recording(installed: Installed) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [installed.bin("k8s-wiretap"), "serve", "replay", "apply-story", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=installed.elsewhere,
        env=installed.env(),
    )
    try:
        assert server.stdout is not None
        ready, _, _ = select.select([server.stdout], [], [], 60)
        said = server.stdout.readline() if ready else ""
        assert f"on http://127.0.0.1:{port}/?token=" in said, said
        address = said.split(" on ", 1)[1].split()[0]
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(address, timeout=5) as page:
                    assert page.status == 200 and "apply-story" in page.read().decode()
                break
            except OSError:
                assert time.monotonic() < deadline, "serve did not answer"
                time.sleep(0.3)
    finally:
        server.terminate()
        server.wait(timeout=30)
