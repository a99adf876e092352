"""`k8s-wiretap lab up|down|status|env|build`."""

from __future__ import annotations

import argparse
import errno
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from k8s_wiretap.errors import UsageError
from k8s_wiretap.kube.release import Release
from k8s_wiretap.lab import build
from k8s_wiretap.lab.components import CBOR_ENV, DEFAULT, ORDER, resolve
from k8s_wiretap.lab.lab import AUDIT_LEVELS, Lab, LabError, UpOptions, default_dir
from k8s_wiretap.lab.layout import Layout
from k8s_wiretap.lab.readiness import admin_client
from k8s_wiretap.lab.releases import (
    CURRENT,
    DEBIAN_RELEASE,
    MODULE_MINIMUM,
    KubeVersionError,
    from_debian,
    parse_spec,
)
from k8s_wiretap.lab.releases import DEFAULT as DEFAULT_VERSION
from k8s_wiretap.lab.versions import resolve_release

__all__ = ["register"]


def register(subparsers: Any) -> None:
    lab = subparsers.add_parser(
        "lab",
        help="run a real control plane on 127.0.0.1 (no containers)",
        description="A real etcd, kube-apiserver, kube-controller-manager, kube-scheduler and "
        "hollow kubelet on 127.0.0.1, for workshops and tests.",
    )
    commands = lab.add_subparsers(dest="lab_command", metavar="COMMAND", required=True)

    up = commands.add_parser("up", help="start the lab and print its admin kubeconfig's path")
    _dir_option(up)
    _version_option(up)
    up.add_argument(
        "--components",
        metavar="LIST",
        help=f"comma-separated subset of {','.join(DEFAULT)} (dependencies added)",
    )
    up.add_argument("--bin-dir", type=Path, help="folder with the binaries (searched first)")
    up.add_argument(
        "--extra-arg",
        action="append",
        default=[],
        metavar="COMPONENT=ARG",
        help="pass ARG to COMPONENT, e.g. scheduler=--v=4 (repeatable)",
    )
    up.add_argument(
        "--no-build", action="store_true", help="fail instead of building missing binaries"
    )
    up.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="how long each start-up step may take (default 120)",
    )
    up.add_argument(
        "--via-proxy",
        action="store_true",
        help="send every component (and the admin kubeconfig) through a wiretap proxy, "
        "each with its own identity",
    )
    up.add_argument(
        "--record",
        type=Path,
        metavar="FILE",
        help="the wiretap's recording (implies --via-proxy; default DIR/recording.jsonl)",
    )
    up.add_argument(
        "--cbor",
        action="store_true",
        help="turn CBOR on (1.32 and later): CBORServingAndStorage on the API server, "
        "ClientsAllowCBOR and ClientsPreferCBOR in its clients (`lab env` shows kubectl's)",
    )
    up.add_argument(
        "--audit-level",
        choices=AUDIT_LEVELS,
        default="Metadata",
        help="what the API server's audit log (DIR/logs/audit.log) holds: Metadata (who "
        "did what; the default), Request (and request bodies), RequestResponse (and "
        "response bodies)",
    )
    up.add_argument(
        "--audit-webhook",
        type=Path,
        metavar="KUBECONFIG",
        help="also send the API server's audit events, batched every second, to the webhook "
        "KUBECONFIG names (what `k8s-wiretap audit-webhook` writes); the log stays",
    )
    up.set_defaults(handler=_up)

    down = commands.add_parser("down", help="stop every process of the lab")
    _dir_option(down)
    down.set_defaults(handler=_down)

    status = commands.add_parser("status", help="show the lab's processes and health")
    _dir_option(status)
    status.set_defaults(handler=_status)

    env = commands.add_parser(
        "env", help="print `export KUBECONFIG=...` (and PATH, for the lab's own kubectl)"
    )
    _dir_option(env)
    env.set_defaults(handler=_env)

    restart = commands.add_parser(
        "restart", help="stop one component and start it again (e.g. the API server)"
    )
    _dir_option(restart)
    restart.add_argument("component", choices=[n for n in ORDER if n != "wiretap"])
    restart.set_defaults(handler=_restart)

    make = commands.add_parser("build", help="build the control-plane binaries unless present")
    _version_option(make, repeat=True)
    make.set_defaults(handler=_build)


def _dir_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dir", type=Path, default=None, help=f"the lab's folder (default {default_dir()})"
    )


def _version_option(parser: argparse.ArgumentParser, repeat: bool = False) -> None:
    parser.add_argument(
        "--kube-version",
        metavar="V",
        action="append" if repeat else "store",
        help=_versions_help() + (" (repeatable: each is built)" if repeat else ""),
    )


def _source(release: Release) -> str:
    return "built from Debian's source" if from_debian(release) else "built from Go modules"


def _versions_help() -> str:
    """What --kube-version takes, from the release data (`lab/releases.py`): the default
    and where each kind of release is built from."""
    default = Release.parse(DEFAULT_VERSION)
    debian = DEBIAN_RELEASE.minor_version
    said = [f"{DEFAULT_VERSION} (the default; {_source(default)})"]
    if debian != DEFAULT_VERSION:
        said.append(f"{debian} ({_source(DEBIAN_RELEASE)})")
    said.append(f"another from {MODULE_MINIMUM.minor_version} on ({_source(MODULE_MINIMUM)})")
    return (
        f"the Kubernetes release: {', '.join(said)}, a patch release such as {CURRENT}.2, or latest"
    )


def _checked_versions(specs: list[str]) -> list[str]:
    """The --kube-version values, each a spelling the lab knows (else exit 2)."""
    for spec in specs:
        try:
            parse_spec(spec)
        except KubeVersionError as error:
            raise UsageError(str(error)) from error
    return specs


def _extra_args(values: list[str]) -> dict[str, list[str]]:
    extra: dict[str, list[str]] = {}
    for value in values:
        name, sep, arg = value.partition("=")
        if not sep or name not in ORDER:
            raise UsageError(
                f"--extra-arg {value!r}: expected COMPONENT=ARG, COMPONENT one of "
                f"{', '.join(ORDER)}"
            )
        extra.setdefault(name, []).append(arg)
    return extra


def _up(args: argparse.Namespace) -> int:
    names = args.components.split(",") if args.components else list(DEFAULT)
    try:
        components = resolve([n.strip() for n in names if n.strip()])
    except ValueError as error:
        raise UsageError(f"--components: {error}") from error
    lab = Lab(args.dir)
    problem = _unmakeable(lab.dir)  # said as --dir's, never as the default --record's
    if problem:
        raise UsageError(f"--dir {lab.dir}: cannot make the folder: {problem}")
    record = args.record or (lab.dir / "recording.jsonl" if args.via_proxy else None)
    if args.bin_dir is not None and not args.bin_dir.is_dir():  # before any release is sought
        raise UsageError(f"--bin-dir {args.bin_dir}: no such folder")
    if args.record is not None and not args.record.absolute().parent.is_dir():
        raise UsageError(f"--record: folder {args.record.absolute().parent} does not exist")
    options = UpOptions(
        components=components,
        bin_dir=args.bin_dir,
        extra_args=_extra_args(args.extra_arg),
        build=not args.no_build,
        timeout=args.timeout,
        record=record,
        kube_version=_checked_versions([args.kube_version])[0] if args.kube_version else None,
        cbor=args.cbor,
        audit_level=args.audit_level,
        audit_webhook=args.audit_webhook,
    )
    state = lab.up(options)
    print(
        f"lab ready: Kubernetes {state.kube_version}, {', '.join(state.components)} "
        f"(API server {state.server})",
        file=sys.stderr,
    )
    if state.recording:
        print(f"recording every client's traffic to {state.recording}", file=sys.stderr)
    print(state.kubeconfig)
    return 0


def _unmakeable(folder: Path) -> str | None:
    """Why `folder` can be no folder of the lab's (None: it is one, or can be made). Nothing
    is made here: a lab refused for another reason after this check leaves nothing behind."""
    for existing in (folder, *folder.absolute().parents):
        if not existing.exists():
            continue
        if not existing.is_dir():
            return os.strerror(errno.ENOTDIR)
        if existing != folder and not os.access(existing, os.W_OK | os.X_OK):
            return os.strerror(errno.EACCES)
        return None
    return None


def _down(args: argparse.Namespace) -> int:
    lab = Lab(args.dir)
    stopped = lab.down()
    if not stopped:
        print(f"no lab running in {lab.dir}", file=sys.stderr)
    return 0


def _status(args: argparse.Namespace) -> int:
    lab = Lab(args.dir)
    state = lab.state()
    if state is None:
        print(f"no lab in {lab.dir}")
        return 1
    print(f"lab in {lab.dir}\n  kubeconfig {state.kubeconfig}\n  API server {state.server}")
    print(f"  Kubernetes {state.kube_version}")
    if state.recording:
        print(f"  recording  {state.recording} (every client through the wiretap)")
    for process in state.processes:
        condition = "running" if process.alive() else "stopped"
        print(f"  {process.name:<20} {condition:<8} pid {process.pid:<8} log {process.log}")
    if state.running() and "apiserver" in state.components:
        print(f"  API server /readyz: {_readyz(lab, state.ports)}")
        print(f"  API server /version: {_server_version(lab, state.ports)}")
    return 0 if state.processes and not state.stopped() else 1


def _readyz(lab: Lab, ports: dict[str, int]) -> str:
    try:
        response = admin_client(Layout(lab.dir, ports)).get("/readyz")
    except OSError as error:
        return f"unreachable ({error})"
    return "ok" if response.status == 200 else f"{response.status}"


def _server_version(lab: Lab, ports: dict[str, int]) -> str:
    try:
        response = admin_client(Layout(lab.dir, ports)).get("/version")
        if response.status == 200:
            return str(response.json().get("gitVersion"))
    except (OSError, ValueError) as error:
        return f"unreachable ({error})"
    return f"{response.status}"


def _env(args: argparse.Namespace) -> int:
    lab = Lab(args.dir)
    state = lab.state()
    if state is None:
        raise UsageError(f"no lab in {lab.dir}; start one with `k8s-wiretap lab up`")
    print(f"export KUBECONFIG={state.kubeconfig}")
    kubectl = Layout(lab.dir, state.ports).bin / "kubectl"
    if kubectl.exists():  # the release's own kubectl, first on PATH
        print(f'export PATH={shlex.quote(str(kubectl.parent))}:"$PATH"')
    if state.cbor:  # kubectl's client-go reads its gates from the environment: offered only,
        # since the default release's kubectl with them cannot read the CBOR Scale `kubectl
        # scale` gets back
        gates = " ".join(f"{name}={value}" for name, value in CBOR_ENV.items())
        print(f"# kubectl in CBOR too (`kubectl scale` then fails): export {gates}")
    return 0


def _restart(args: argparse.Namespace) -> int:
    Lab(args.dir).restart(args.component)
    return 0


def _build(args: argparse.Namespace) -> int:
    for spec in _checked_versions(args.kube_version or [DEFAULT_VERSION]):
        try:
            release = resolve_release(spec)
        except KubeVersionError as error:
            raise LabError(str(error)) from error
        if spec not in (str(release), release.git_version):
            print(f"--kube-version {spec}: Kubernetes {release}", file=sys.stderr)
        folder = build.ensure_binaries(release)
        print(f"Kubernetes {release} binaries ready in {folder}", file=sys.stderr)
    return 0
