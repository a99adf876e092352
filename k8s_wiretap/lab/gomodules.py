"""Build a current Kubernetes release (1.30 and later) from its Go modules, etcd too.

The `k8s.io/kubernetes` module points its staging modules (k8s.io/api, client-go, apiserver,
kubelet, ...) at `./staging/...` with `replace`, which does not apply when it is a dependency.
So, as projects that build on k8s.io/kubernetes do, the build writes a small module of its own
(`<work>/kube`): go.mod requires k8s.io/kubernetes at the release and pins every staging module
the release's go.mod replaces to its published `v0.<minor>.<patch>`; tools.go imports the five
commands under a build tag no build sets, so `go mod tidy` records what they need. Then:

- `go mod vendor`: a private copy of every package the commands compile. Go refuses
  `-overlay` for files in the module cache ("Files beneath GOMODCACHE must not be replaced"),
  so the hollow kubelet's changes (MODULE_EDITS) are made in that copy;
- one `go build -mod=vendor -o <out>/` of kube-apiserver, kube-controller-manager,
  kube-scheduler, kubemark and kubectl, as the release's own build does it (CGO_ENABLED=0,
  -trimpath, `-s -w`, tags selinux,notest,grpcnotrace, the version stamped with -X);
- etcd, at the version the release is tested with (its hack/lib/etcd.sh), from
  `go.etcd.io/etcd/server/v3`, whose root package is the etcd command, in a module of its own
  so that its dependency versions are etcd's own.

A release whose module no longer has `cmd/kubemark` (Kubernetes removed it from the main
repository in 1.38) is built without it, and the lab runs the hollow kubelet of the
newest older release that has one (`hollow`, given by build.py): a kubelet may be up to three
minors older than its API server (the version skew policy), and the hollow kubelet's part in
the lab (a node, its lease, pod status) is the same.

The Go module and build caches are the toolchain's usual ones: a second build is fast.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from k8s_wiretap.kube.release import Release
from k8s_wiretap.lab.buildsteps import BuildError, SourceEdit, apply_edits, install, run, stream
from k8s_wiretap.lab.golang import (
    LOCAL,
    download_toolchain,
    go_requirement,
    go_version,
    module_go,
    module_go_env,
    module_toolchain,
)
from k8s_wiretap.lab.releases import built

__all__ = [
    "COMMANDS",
    "MODULE_EDITS",
    "build_module_release",
    "etcd_version",
    "kube_go_mod",
    "module_edits",
    "shipped_commands",
    "staging_modules",
]

KUBERNETES = "k8s.io/kubernetes"
COMMANDS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubemark", "kubectl")
HOLLOW = "kubemark"  # the hollow kubelet
ETCD_SERVER = "go.etcd.io/etcd/server/v3"  # its root package is the etcd command
BUILD_TAGS = "selinux,notest,grpcnotrace"  # what the release's hack/lib/golang.sh uses
VERSION_PACKAGES = ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version")

_VENDOR_KUBE = "vendor/k8s.io/kubernetes"
_FAKE_OS = f"{_VENDOR_KUBE}/pkg/kubelet/container/testing/os.go"
# The hollow kubelet's fake runtime: in k8s.io/cri-client now, in the main module in 1.30.
FAKE_RUNTIME = ("vendor/k8s.io/cri-client/pkg/fake", f"{_VENDOR_KUBE}/pkg/kubelet/cri/remote/fake")
_LOCKED = "\n\t// k8s-wiretap: pod workers call this concurrently.\n\tf.FilesLock.Lock()\n" + (
    "\tdefer f.FilesLock.Unlock()"
)
_ENDPOINT_IN_TMPDIR = """// k8s-wiretap: the fake runtime's socket in $TMPDIR,
// removed with the lab's runtime folder.

package fake

import (
\t"os"
\t"path/filepath"
)

func init() {
\tdefaultUnixEndpoint = "unix://" + filepath.Join(os.TempDir(), "kubelet_remote_%v.sock")
}
"""


def module_edits(fake_runtime: str = FAKE_RUNTIME[0]) -> tuple[SourceEdit, ...]:
    """What the build changes in the vendored source; `fake_runtime` is where the release
    keeps the fake runtime (FAKE_RUNTIME). Of 1.20's three changes, a current hollow kubelet
    still needs the $TMPDIR one and part of the FakeOS one (reflect2 is fixed upstream):"""
    return (
        # Its root folder (hollow-kubelet.*, with static-pods and pod-logs) is still made in a
        # hard-coded /tmp and never removed; in $TMPDIR it goes with the lab's runtime folder.
        SourceEdit(
            f"{_VENDOR_KUBE}/test/utils/tmpdir.go", 'baseDir = "/tmp"', "baseDir = os.TempDir()"
        ),
        # The fake runtime's socket has a random name now (no more sharing, no more stealing),
        # but it is still in /tmp, left behind by every hollow kubelet that is stopped.
        SourceEdit(
            f"{fake_runtime}/endpoint.go",
            'const (\n\tdefaultUnixEndpoint = "unix:///tmp/kubelet_remote_%v.sock"\n)',
            'var (\n\tdefaultUnixEndpoint = "unix:///tmp/kubelet_remote_%v.sock"\n)',
        ),
        SourceEdit(f"{fake_runtime}/k8s_wiretap_endpoint.go", "", _ENDPOINT_IN_TMPDIR),
        # FakeOS guards its Files map with FilesLock now (the concurrent map write that killed
        # 1.20's hollow kubelet is gone), but Remove and RemoveAll still append to Removes from
        # the pod workers without it: a data race on a slice. Take the lock there too.
        *(
            SourceEdit(_FAKE_OS, header, header + _LOCKED)
            for header in (
                "func (f *FakeOS) Remove(path string) error {",
                "func (f *FakeOS) RemoveAll(path string) error {",
            )
        ),
    )


MODULE_EDITS = module_edits()


def build_module_release(
    release: Release, target: Path, work: Path, out: TextIO, hollow: Callable[[], Path]
) -> Path:
    """Build `release` in `work` and install it at `target`; returns its bin folder.
    `hollow` gives a kubemark binary for a release that ships none (built or cached)."""
    started = time.monotonic()
    source = _download(release, work, out)
    commands = shipped_commands(source)
    go, toolchain = module_toolchain(go_requirement((source / "go.mod").read_text()))
    env = module_go_env(go, dict(os.environ), toolchain)
    running = f"go{_dotted(go_version(str(go)))}" if toolchain == LOCAL else toolchain
    print(f"[build] Kubernetes {release} with {go} ({running}, GOTOOLCHAIN={toolchain})", file=out)
    kube = work / "kube"
    kube.mkdir()
    (kube / "go.mod").write_text(kube_go_mod(release, (source / "go.mod").read_text()))
    _tools(kube, [f"{KUBERNETES}/cmd/{name}" for name in commands])
    _tidy(go, kube, env, out)
    run([str(go), "mod", "vendor"], out, "vendoring", cwd=kube, env=env)
    if HOLLOW in commands:  # the edits are the hollow kubelet's
        fake_runtime = next((f for f in FAKE_RUNTIME if (kube / f).is_dir()), FAKE_RUNTIME[0])
        apply_edits(kube, module_edits(fake_runtime))
    binaries = work / "out"
    binaries.mkdir()
    _compile(go, kube, env, binaries, [f"{KUBERNETES}/cmd/{n}" for n in commands], release, out)
    hollow_from = "" if HOLLOW in commands else _copy_hollow(hollow(), binaries, out)
    etcd = etcd_version(source)
    _build_etcd(go, etcd, work, env, binaries, out)
    folder = install(binaries, built(release), target, out)
    seconds = time.monotonic() - started
    (target / "release.json").write_text(
        json.dumps(
            {"kubernetes": str(release), "etcd": etcd, "seconds": round(seconds)}
            | ({"kubemark": hollow_from} if hollow_from else {})
        )
        + "\n"
    )
    print(f"[build] Kubernetes {release} and etcd {etcd} built in {seconds:.0f} s", file=out)
    return folder


def shipped_commands(source: Path) -> list[str]:
    """Those of COMMANDS the release's module has (`cmd/<name>`), in COMMANDS' order."""
    return [name for name in COMMANDS if (source / "cmd" / name).is_dir()]


def _copy_hollow(kubemark: Path, binaries: Path, out: TextIO) -> str:
    """Put an older release's kubemark beside the build; the folder it came from."""
    shutil.copy2(kubemark, binaries / HOLLOW)
    print(f"[build] no cmd/{HOLLOW} in this release: the hollow kubelet is {kubemark}", file=out)
    return str(kubemark.parent.parent.name)


def _dotted(version: tuple[int, ...] | None) -> str:
    return ".".join(map(str, version or ()))


def _download(release: Release, work: Path, out: TextIO) -> Path:
    """The release's module source in the module cache (fetched if missing)."""
    go = module_go()
    env = module_go_env(go, dict(os.environ))
    print(f"[build] fetching {KUBERNETES}@{release.git_version}", file=out, flush=True)
    argv = [str(go), "mod", "download", "-json", f"{KUBERNETES}@{release.git_version}"]
    answer = json.loads(run(argv, out, "download", cwd=work, env=env, ok=_download_answer))
    toolchain = download_toolchain(answer, go)
    if toolchain:  # its go.mod asks for a newer Go: download it with that one
        env = module_go_env(go, dict(os.environ), toolchain)
        answer = json.loads(
            run(argv, out, f"download (GOTOOLCHAIN={toolchain})", cwd=work, env=env)
        )
    folder = answer.get("Dir")
    if not folder:
        raise BuildError(f"go mod download {KUBERNETES}@{release.git_version} gave no source")
    return Path(folder)


def _download_answer(status: int, stdout: str) -> bool:
    """Whether a failed download's answer is one `download_toolchain` may read."""
    return status == 1 and '"GoMod"' in stdout


def staging_modules(kubernetes_go_mod: str) -> list[str]:
    """The modules the release's go.mod replaces with its own ./staging folders."""
    return re.findall(r"^\s*(\S+)\s+=>\s+\./staging/", kubernetes_go_mod, re.M)


def kube_go_mod(release: Release, kubernetes_go_mod: str) -> str:
    """go.mod of the build's own module: the release, and each staging module pinned."""
    go = re.search(r"^go (\S+)$", kubernetes_go_mod, re.M)
    # A dependency's godebug lines do not apply: carry them, so the defaults are the release's.
    godebug = re.findall(r"^godebug .*$", kubernetes_go_mod, re.M)
    lines = [
        "// Generated by k8s-wiretap to build Kubernetes from its Go modules.",
        "module k8s-wiretap.invalid/kube",
        "",
        f"go {go.group(1) if go else '1.22'}",
        *godebug,
        "",
        f"require {KUBERNETES} {release.git_version}",
        "",
        "replace (",
        *(
            f"\t{module} => {module} {release.staging_version}"
            for module in staging_modules(kubernetes_go_mod)
        ),
        ")",
        "",
    ]
    return "\n".join(lines)


def _tools(module: Path, packages: list[str]) -> None:
    imports = "".join(f'\t_ "{package}"\n' for package in packages)
    (module / "tools.go").write_text(
        "//go:build tools\n\n// The commands this module builds (the tools idiom).\n"
        f"package tools\n\nimport (\n{imports})\n"
    )


def _tidy(go: Path, module: Path, env: dict[str, str], out: TextIO) -> None:
    stream(
        [str(go), "mod", "tidy"],
        module,
        env,
        out,
        f"resolving modules in {module}",
        unit="modules downloaded",
    )


def _ldflags(release: Release) -> str:
    values = {
        "gitVersion": release.git_version,
        "gitMajor": str(release.major),
        "gitMinor": str(release.minor),
        # No commit: the module has no git history. client-go then says
        # "kubernetes/unknown" in its User-Agent, as any build from the module does.
        "gitTreeState": "clean",
        "buildDate": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    stamps = [
        f"-X {package}.{key}={value}"
        for package in VERSION_PACKAGES
        for key, value in values.items()
    ]
    return " ".join(["-s", "-w", *stamps])


def _compile(
    go: Path,
    module: Path,
    env: dict[str, str],
    binaries: Path,
    packages: list[str],
    release: Release,
    out: TextIO,
) -> None:
    argv = [
        str(go),
        "build",
        "-mod=vendor",
        "-trimpath",
        f"-tags={BUILD_TAGS}",
        f"-ldflags={_ldflags(release)}",
        "-v",
        "-o",
        f"{binaries}{os.sep}",
        *packages,
    ]
    print(
        f"[build] compiling {', '.join(p.rsplit('/', 1)[1] for p in packages)} "
        "(measured here: about 14 minutes on 2 cores the first time)",
        file=out,
        flush=True,
    )
    stream(argv, module, env, out, "compiling Kubernetes", unit="packages compiled")


def etcd_version(source: Path) -> str:
    """The etcd version the release is tested with, from its hack/lib/etcd.sh."""
    script = source / "hack/lib/etcd.sh"
    match = re.search(
        r"^ETCD_VERSION=\$\{ETCD_VERSION:-(\d+\.\d+\.\d+)\}", script.read_text(), re.M
    )
    if not match:
        raise BuildError(f"{script} no longer names the etcd version as ETCD_VERSION=...")
    return match.group(1)


def _build_etcd(
    go: Path, version: str, work: Path, env: dict[str, str], binaries: Path, out: TextIO
) -> None:
    module = work / "etcd"
    module.mkdir()
    (module / "go.mod").write_text(
        "// Generated by k8s-wiretap to build etcd from its Go module.\n"
        f"module k8s-wiretap.invalid/etcd\n\ngo 1.22\n\nrequire {ETCD_SERVER} v{version}\n"
    )
    _tools(module, [ETCD_SERVER])
    _tidy(go, module, env, out)
    argv = [
        str(go),
        "build",
        "-trimpath",
        "-ldflags=-s -w",
        "-v",
        "-o",
        str(binaries / "etcd"),
        ETCD_SERVER,
    ]
    print(f"[build] compiling etcd {version}", file=out, flush=True)
    stream(argv, module, env, out, f"compiling etcd {version}", unit="packages compiled")
    if not shutil.which(str(binaries / "etcd")):
        raise BuildError(f"building etcd {version} made no binary")
