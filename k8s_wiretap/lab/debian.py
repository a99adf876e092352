"""Build Kubernetes 1.20.2 from Debian's `kubernetes` source package, with Debian's Go 1.19.

No registry ships kube-apiserver 1.20, but Debian's source package (Kubernetes 1.20.2 with its
whole vendor tree) builds offline. The recipe, verified on this project's machines: enable
deb-src, install golang-1.19-go/rsync/make/etcd-server, `apt-get source --download-only
kubernetes`, then the tree's own `make WHAT=...` in a GOPATH layout — with Debian's Go 1.19
pinned (golang.py): the tree's make runs the first `go` on PATH, which may be a newer one.

Three changes to the source, named by the release's tag (releases.DEBIAN_TAG):

- the hollow kubelet's root folder and fake-runtime socket follow `$TMPDIR` instead of a
  hard-coded `/tmp`, so that two labs on one machine do not share (and steal)
  `/tmp/kubelet_remote.sock`;
- the vendored reflect2 is replaced by Debian's fixed version (see `_vendor_reflect2`);
- the hollow kubelet's fake OS gets a mutex (see SOURCE_EDITS).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from k8s_wiretap.kube.release import Release
from k8s_wiretap.lab.buildsteps import BuildError, SourceEdit, apply_edits, install, run, stream
from k8s_wiretap.lab.golang import DEBIAN_GO, debian_go_env
from k8s_wiretap.lab.releases import KUBE_BINARIES

__all__ = [
    "SOURCE_EDITS",
    "apt_install",
    "build_debian_release",
    "download_source",
    "make_env",
    "unpack_source",
]

# Debian package → a file it installs (present = installed).
TOOLCHAIN = {
    "golang-1.19-go": str(DEBIAN_GO / "go"),
    "rsync": "/usr/bin/rsync",
    "make": "/usr/bin/make",
    "etcd-server": "/usr/bin/etcd",
    "golang-github-modern-go-reflect2-dev": "/usr/share/gocode/src/github.com/modern-go/reflect2",
}
REFLECT2 = Path("/usr/share/gocode/src/github.com/modern-go/reflect2")

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


def build_debian_release(release: Release, target: Path, work: Path, out: TextIO) -> Path:
    """Build `release` (1.20.2) in `work` and install it at `target`; returns its bin folder."""
    ensure_toolchain(out)
    tree, version = unpack_source(download_source(work, out), work, out)
    if version != str(release):
        raise BuildError(f"Debian's kubernetes source package is {version}, not {release}")
    apply_edits(tree, SOURCE_EDITS)
    _vendor_reflect2(tree)
    _make(tree, work, out)
    return install(tree / "_output" / "bin", KUBE_BINARIES, target, out)


def ensure_toolchain(out: TextIO) -> None:
    needed = [package for package, path in TOOLCHAIN.items() if not Path(path).exists()]
    if needed:
        apt_install(tuple(needed), out)


def _sudo() -> list[str]:
    if os.geteuid() == 0:
        return []
    if shutil.which("sudo"):
        return ["sudo", "-n"]
    raise BuildError(
        "building needs root for apt-get (or passwordless sudo); alternatively provide the "
        "binaries with --bin-dir or KUBEBUILDER_ASSETS"
    )


def apt_install(packages: tuple[str, ...], out: TextIO) -> None:
    if shutil.which("apt-get") is None:
        raise BuildError(
            f"need {', '.join(packages)} but apt-get is not available; install them, or "
            "provide the binaries with --bin-dir or KUBEBUILDER_ASSETS"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    run([*_sudo(), "apt-get", "update", "-q"], out, "apt-get update", env=env)
    run([*_sudo(), "apt-get", "install", "-y", "-q", *packages], out, "install", env=env)


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


def download_source(work: Path, out: TextIO) -> Path:
    """Download Debian's `kubernetes` source package into `work`; returns its .orig.tar.gz."""
    if not _has_deb_src():
        _enable_deb_src(out)
    run([*_sudo(), "apt-get", "update", "-q"], out, "apt-get update")
    run(["apt-get", "source", "--download-only", "kubernetes"], out, "download", cwd=work)
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


def make_env(tree: Path, work: Path, base: dict[str, str]) -> dict[str, str]:
    """The environment of the tree's make: a GOPATH layout, no cgo, Debian's Go 1.19."""
    return {
        **debian_go_env(base),
        "GOPATH": str(tree / ".go"),
        "CGO_ENABLED": "0",
        "HOME": str(work / "home"),
        "GOCACHE": str(work / "gocache"),
    }


def _make(tree: Path, work: Path, out: TextIO) -> None:
    gopath = tree / ".go"
    (gopath / "src" / "k8s.io").mkdir(parents=True, exist_ok=True)
    (gopath / "src" / "k8s.io" / "kubernetes").symlink_to("../../..")
    (work / "home").mkdir()
    env = make_env(tree, work, dict(os.environ))
    targets = " ".join(f"cmd/{name}" for name in KUBE_BINARIES)
    print(
        f"[build] compiling {targets} with {DEBIAN_GO / 'go'} (about 8 minutes on 2 cores)",
        file=out,
        flush=True,
    )
    stream(
        ["make", f"WHAT={targets}"],
        tree,
        env,
        out,
        "compiling",
        show=lambda line: line.startswith("+++") or line.startswith("    "),
    )
