"""Build the control-plane binaries from Debian's `kubernetes` source package, once.

No registry ships kube-apiserver, but Debian's source package (Kubernetes 1.20.2 with its whole
vendor tree) builds offline with Debian's Go. The recipe, verified on this project's machines:
enable deb-src, install golang-go/rsync/etcd-server/make, `apt-get source --download-only
kubernetes`, then the tree's own `make WHAT=...` in a GOPATH layout. The result goes to
`<cache>/kube/<version>/bin`, written through a temporary folder and renamed into place under a
file lock, so two builds racing each other produce one cache and the loser reuses it.

Two changes to the source: small edits make hollow kubelets (kubemark) honour `$TMPDIR`
instead of a hard-coded `/tmp` for their root folder and fake-runtime socket, so that two labs
on one machine do not share (and steal) `/tmp/kubelet_remote.sock`; and the vendored reflect2
is replaced by Debian's fixed version (see `_vendor_reflect2`). Their version is part of the
cache key.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from k8s_wiretap.errors import WiretapError
from k8s_wiretap.lab.binaries import (
    BUILD_TAG,
    BUILT_BINARIES,
    built_cache_root,
    cached_bin_dirs,
    find_binary,
)

__all__ = ["BuildError", "download_source", "ensure_binaries", "lock", "unpack_source"]

# Debian package → a file it installs (present = installed).
TOOLCHAIN = {
    "golang-go": "/usr/bin/go",
    "rsync": "/usr/bin/rsync",
    "make": "/usr/bin/make",
    "etcd-server": "/usr/bin/etcd",
    "golang-github-modern-go-reflect2-dev": "/usr/share/gocode/src/github.com/modern-go/reflect2",
}
REFLECT2 = Path("/usr/share/gocode/src/github.com/modern-go/reflect2")
HEARTBEAT_SECONDS = 30


class BuildError(WiretapError):
    """The build could not run or failed; the message says which step and why."""


@dataclass(frozen=True)
class SourceEdit:
    """Replace `old` by `new` in one file of the source tree; `old` must be there."""

    path: str
    old: str
    new: str


FAKE_OS = "pkg/kubelet/container/testing/os.go"
SOURCE_EDITS = (
    SourceEdit(
        "pkg/kubelet/cri/remote/fake/endpoint.go",
        'const (\n\tdefaultUnixEndpoint = "unix:///tmp/kubelet_remote.sock"\n)',
        'import (\n\t"os"\n\t"path/filepath"\n)\n\n'
        "// k8s-wiretap: in $TMPDIR, so that hollow kubelets can run side by side.\n"
        'var defaultUnixEndpoint = "unix://" + filepath.Join(os.TempDir(), "kubelet_remote.sock")',
    ),
    SourceEdit("test/utils/tmpdir.go", '"io/ioutil"\n', '"io/ioutil"\n\t"os"\n'),
    SourceEdit("test/utils/tmpdir.go", 'baseDir = "/tmp"', "baseDir = os.TempDir()"),
    # The hollow kubelet's fake OS is shared by the pod workers, which start containers in
    # parallel: its unguarded map write killed it ("fatal error: concurrent map writes").
    SourceEdit(
        FAKE_OS,
        'import (\n\t"errors"\n\t"os"\n\t"time"\n)\n',
        'import (\n\t"errors"\n\t"os"\n\t"sync"\n\t"time"\n)\n\n'
        "// k8s-wiretap: pod workers call FakeOS concurrently.\n"
        "var fakeOSMutex sync.Mutex\n",
    ),
    *(
        SourceEdit(FAKE_OS, header, f"{header}\n\tfakeOSMutex.Lock()\n\tdefer fakeOSMutex.Unlock()")
        for header in (
            "func (f *FakeOS) Create(path string) (*os.File, error) {",
            "func (f *FakeOS) Remove(path string) error {",
            "func (f *FakeOS) RemoveAll(path string) error {",
            "func (f *FakeOS) Glob(pattern string) ([]string, error) {",
        )
    ),
)


def ensure_binaries(out: TextIO = sys.stderr) -> Path | None:
    """Make sure every lab binary exists; build what is missing. Returns the built folder."""
    if find_binary("etcd") is None:
        _apt_install(("etcd-server",), out)
    if all(find_binary(name) for name in BUILT_BINARIES):
        return cached_bin_dirs()[0] if cached_bin_dirs() else None
    return build(out)


def build(out: TextIO = sys.stderr) -> Path:
    """Build into the cache unless a complete build is already there."""
    root = built_cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with lock(root / "build.lock", out):
        existing = cached_bin_dirs()
        if existing:
            print(f"reusing binaries in {existing[0]}", file=out)
            return existing[0]
        return _build_locked(root, out)


@contextmanager
def lock(path: Path, out: TextIO) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if missing), saying so when it must wait."""
    with path.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print("another build is running; waiting for it to finish", file=out)
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _build_locked(root: Path, out: TextIO) -> Path:
    work = root / f"work-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    try:
        _ensure_toolchain(out)
        tree, version = _fetch_source(work, out)
        _apply_edits(tree)
        _vendor_reflect2(tree)
        _make(tree, work, out)
        return _install(tree / "_output" / "bin", root / f"{version}-{BUILD_TAG}", out)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _ensure_toolchain(out: TextIO) -> None:
    needed = [package for package, path in TOOLCHAIN.items() if not Path(path).exists()]
    if needed:
        _apt_install(tuple(needed), out)


def _sudo() -> list[str]:
    if os.geteuid() == 0:
        return []
    if shutil.which("sudo"):
        return ["sudo", "-n"]
    raise BuildError(
        "building needs root for apt-get (or passwordless sudo); alternatively provide the "
        "binaries with --bin-dir or KUBEBUILDER_ASSETS"
    )


def _run(argv: list[str], out: TextIO, step: str, **kwargs: object) -> None:
    print(f"[build] {step}: {' '.join(argv)}", file=out, flush=True)
    result = subprocess.run(argv, capture_output=True, text=True, check=False, **kwargs)  # type: ignore[call-overload]
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
        raise BuildError(f"{step} failed (exit {result.returncode}):\n{tail}")


def _apt_install(packages: tuple[str, ...], out: TextIO) -> None:
    if shutil.which("apt-get") is None:
        raise BuildError(
            f"need {', '.join(packages)} but apt-get is not available; install them, or "
            "provide the binaries with --bin-dir or KUBEBUILDER_ASSETS"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    _run([*_sudo(), "apt-get", "update", "-q"], out, "apt-get update", env=env)
    _run([*_sudo(), "apt-get", "install", "-y", "-q", *packages], out, "install", env=env)


def _has_deb_src() -> bool:
    folder = Path("/etc/apt")
    files = [folder / "sources.list", *sorted((folder / "sources.list.d").glob("*"))]
    for file in files:
        if file.is_file() and _mentions_deb_src(file.read_text(errors="replace")):
            return True
    return False


def _mentions_deb_src(text: str) -> bool:
    for line in text.splitlines():
        words = line.split()
        if words[:1] == ["deb-src"] or (words[:1] == ["Types:"] and "deb-src" in words):
            return True
    return False


def _enable_deb_src(out: TextIO) -> None:
    """Add a deb-src twin of Debian's own sources (deb822 or one-line format)."""
    deb822 = Path("/etc/apt/sources.list.d/debian.sources")
    legacy = Path("/etc/apt/sources.list")
    if deb822.is_file():
        text = deb822.read_text().replace("Types: deb\n", "Types: deb-src\n")
        target = Path("/etc/apt/sources.list.d/k8s-wiretap-deb-src.sources")
    elif legacy.is_file():
        lines = [
            ln.replace("deb ", "deb-src ", 1)
            for ln in legacy.read_text().splitlines()
            if ln.startswith("deb ")
        ]
        text = "\n".join(lines) + "\n"
        target = Path("/etc/apt/sources.list.d/k8s-wiretap-deb-src.list")
    else:
        raise BuildError("no Debian apt sources found to enable source packages from")
    print(f"[build] enabling Debian source packages in {target}", file=out)
    subprocess.run(
        [*_sudo(), "tee", str(target)], input=text, text=True, capture_output=True, check=True
    )


def _fetch_source(work: Path, out: TextIO) -> tuple[Path, str]:
    return unpack_source(download_source(work, out), work, out)


def download_source(work: Path, out: TextIO) -> Path:
    """Download Debian's `kubernetes` source package into `work`; returns its .orig.tar.gz."""
    if not _has_deb_src():
        _enable_deb_src(out)
    _run([*_sudo(), "apt-get", "update", "-q"], out, "apt-get update")
    _run(["apt-get", "source", "--download-only", "kubernetes"], out, "download", cwd=work)
    tarballs = sorted(work.glob("kubernetes_*.orig.tar.gz"))
    if not tarballs:
        raise BuildError("apt-get source kubernetes gave no .orig.tar.gz")
    return tarballs[0]


def unpack_source(
    tarball: Path, work: Path, out: TextIO, keep: Callable[[str], bool] | None = None
) -> tuple[Path, str]:
    """Unpack the tree (only the members `keep` accepts); returns it and its version."""
    print(f"[build] unpacking {tarball.name}", file=out, flush=True)
    with tarfile.open(tarball) as archive:
        members = [m for m in archive if keep is None or keep(m.name)]
        archive.extractall(work, members=members, filter="tar")
    trees = [p for p in work.iterdir() if p.is_dir() and p.name.startswith("kubernetes-")]
    if len(trees) != 1:
        raise BuildError(f"unexpected source layout in {work}")
    return trees[0], trees[0].name.removeprefix("kubernetes-")


def _apply_edits(tree: Path) -> None:
    for edit in SOURCE_EDITS:
        path = tree / edit.path
        text = path.read_text()
        if edit.old not in text:
            raise BuildError(f"source edit no longer applies to {edit.path}: {edit.old!r}")
        path.write_text(text.replace(edit.old, edit.new, 1))


def _vendor_reflect2(tree: Path) -> None:
    """Replace the vendored modern-go/reflect2 v1.0.1 with Debian's v1.0.2.

    v1.0.1 reads Go's map internals in a way that broke in Go 1.18: built with Debian's Go
    1.19, kube-apiserver 1.20 dies with SIGSEGV in reflect2's map iteration (json-iterator)
    the first time it encodes a custom resource (seen here: creating any CR killed it).
    v1.0.2 is the upstream fix; go.mod's replace line and vendor/modules.txt name the version.
    """
    vendored = tree / "vendor/github.com/modern-go/reflect2"
    for stale in [*vendored.glob("*.go"), *vendored.glob("*.s")]:
        stale.unlink()
    for fixed in [*REFLECT2.glob("*.go"), *REFLECT2.glob("*.s")]:
        shutil.copy2(fixed, vendored / fixed.name)
    replace = "github.com/modern-go/reflect2 => github.com/modern-go/reflect2 "
    for name, old, new in (
        ("go.mod", replace + "v1.0.1", replace + "v1.0.2"),
        ("vendor/modules.txt", "reflect2 v1.0.1 => ", "reflect2 v1.0.2 => "),
        ("vendor/modules.txt", replace + "v1.0.1", replace + "v1.0.2"),
    ):
        path = tree / name
        text = path.read_text()
        if old not in text:
            raise BuildError(f"{name} no longer names reflect2 as expected: {old!r}")
        path.write_text(text.replace(old, new))


def _make(tree: Path, work: Path, out: TextIO) -> None:
    gopath = tree / ".go"
    (gopath / "src" / "k8s.io").mkdir(parents=True, exist_ok=True)
    (gopath / "src" / "k8s.io" / "kubernetes").symlink_to("../../..")
    home = work / "home"
    home.mkdir()
    env = {
        **os.environ,
        "GOPATH": str(gopath),
        "CGO_ENABLED": "0",
        "HOME": str(home),
        "GOCACHE": str(work / "gocache"),
    }
    targets = " ".join(f"cmd/{name}" for name in BUILT_BINARIES)
    argv = ["make", f"WHAT={targets}"]
    print(f"[build] compiling {targets} (about 8 minutes on 2 cores)", file=out, flush=True)
    _stream(argv, tree, env, out)


def _stream(argv: list[str], cwd: Path, env: dict[str, str], out: TextIO) -> None:
    """Run `argv`, echoing its progress lines and a heartbeat so a long build shows life."""
    started = time.monotonic()
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    done = threading.Event()
    threading.Thread(target=_heartbeat, args=(done, started, out), daemon=True).start()
    lines: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines = [*lines[-29:], line.rstrip()]
        if line.startswith("+++") or line.startswith("    "):
            print(f"[build] {line.rstrip()}", file=out, flush=True)
    done.set()
    if proc.wait() != 0:
        raise BuildError("make failed:\n" + "\n".join(lines[-15:]))
    print(f"[build] compiled in {time.monotonic() - started:.0f} s", file=out, flush=True)


def _heartbeat(done: threading.Event, started: float, out: TextIO) -> None:
    while not done.wait(HEARTBEAT_SECONDS):
        elapsed = int(time.monotonic() - started)
        print(
            f"[build] still compiling ({elapsed // 60}m{elapsed % 60:02d}s)", file=out, flush=True
        )


def _install(built: Path, target: Path, out: TextIO) -> Path:
    staging = target.parent / f"{target.name}.tmp-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "bin").mkdir(parents=True)
    for name in BUILT_BINARIES:
        shutil.copy2(built / name, staging / "bin" / name)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    print(f"[build] binaries in {target / 'bin'}", file=out, flush=True)
    return target / "bin"
