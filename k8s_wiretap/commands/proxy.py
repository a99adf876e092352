"""`k8s-wiretap proxy`, `run` and `kubeconfig`: the wiretap in front of a kubeconfig's cluster.

On a terminal `proxy` opens the TUI live (`live.py`: the proxy in a process of its own, the
TUI following its recording); `--no-tui`, or no terminal, prints one line per exchange.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mitmproxy.utils import human

from k8s_wiretap.capture.reader import load
from k8s_wiretap.capture.recorder import DEFAULT_MAX_BODY
from k8s_wiretap.commands.live import run_live
from k8s_wiretap.commands.warn import warn
from k8s_wiretap.errors import UsageError
from k8s_wiretap.host import cores
from k8s_wiretap.kube.kubeconfig import ClusterAccess, load_kubeconfig, write_kubeconfig
from k8s_wiretap.proxy import workers
from k8s_wiretap.proxy.clientauth import client_authority, client_ca_paths, issue_client
from k8s_wiretap.proxy.guard import HANDSHAKE_TIMEOUT, MAX_CLIENT_CONNECTIONS
from k8s_wiretap.proxy.limits import REQUEST_TIMEOUT
from k8s_wiretap.proxy.routes import Route
from k8s_wiretap.proxy.server import (
    VERSION_AGENT,
    ProxyServer,
    ProxySettings,
    default_confdir,
    free_port,
    proxy_ca_pem,
)
from k8s_wiretap.proxy.upstream import DEFAULT_ACCEPT_HOSTS
from k8s_wiretap.views.console import ConsoleOutput
from k8s_wiretap.views.lines import exchange_line
from k8s_wiretap.views.otlp import OtlpOutput, traces_url
from k8s_wiretap.wire.words import counted

__all__ = ["register"]

OTLP_ENDPOINT_ENV = "K8S_WIRETAP_OTLP_ENDPOINT"  # --otlp-endpoint's default


def register(subparsers: Any) -> None:
    proxy = subparsers.add_parser(
        "proxy",
        help="a recording proxy in front of the API server",
        description="Listen (plain HTTP or TLS on the same port) and forward to the context's "
        "API server, recording every exchange. Point clients at it with "
        "`kubectl --server http://127.0.0.1:8001` or `k8s-wiretap kubeconfig`.",
    )
    _cluster_options(proxy)
    proxy.add_argument(
        "--listen",
        default="127.0.0.1:8001",
        metavar="HOST:PORT",
        help="where to listen (default 127.0.0.1:8001; an address other machines reach "
        "needs --allow-remote)",
    )
    proxy.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a --listen (or --routes listen) address other machines can reach; "
        "clients from them must present a client certificate of the proxy's client CA "
        "(`k8s-wiretap kubeconfig --proxy HOST:PORT` writes a kubeconfig with one)",
    )
    proxy.add_argument(
        "--routes",
        type=Path,
        metavar="FILE",
        help="JSON list of {name, listen, kubeconfig[, context]}: one listener "
        "per client identity (what `lab up --via-proxy` uses)",
    )
    _recording_options(proxy)
    view = proxy.add_mutually_exclusive_group()
    view.add_argument(
        "--no-tui",
        action="store_true",
        help="print one line per exchange instead of opening the TUI (what it does anyway "
        "when stdin or stdout is not a terminal)",
    )
    view.add_argument(
        "--quiet", action="store_true", help="print nothing per exchange (record only)"
    )
    proxy.add_argument(
        "--etcd",
        default=None,
        metavar="URL",
        help="the API server's etcd (http://HOST:PORT): record what lands there, beside "
        "the traffic (the lab passes its own)",
    )
    proxy.add_argument(
        "--otlp-endpoint",
        default=os.environ.get(OTLP_ENDPOINT_ENV) or None,
        metavar="URL",
        help="send a span per exchange, as exchanges end, to URL/v1/traces (OTLP/HTTP, e.g. "
        f"Jaeger's http://127.0.0.1:4318; default ${OTLP_ENDPOINT_ENV}); never slows the "
        "proxy: what the collector cannot take is dropped and counted (docs/tracing.md)",
    )
    proxy.add_argument(
        "--on-record-error",
        choices=("resume", "continue", "exit"),
        default="resume",
        help="when the recording cannot be written (disk full): go on and write it again "
        "once it can (tried every 10 s; a note in it says what was lost) (default), go on "
        "unrecorded, or stop the proxy with exit status 1",
    )
    proxy.add_argument(
        "--accept-hosts",
        default=DEFAULT_ACCEPT_HOSTS,
        metavar="REGEX",
        help="Host headers accepted (default: loopback names only)",
    )
    proxy.add_argument(
        "--idle-timeout",
        type=int,
        default=24 * 3600,
        metavar="SECONDS",
        help="close connections idle this long (default one day)",
    )
    proxy.add_argument(
        "--request-timeout",
        type=int,
        default=REQUEST_TIMEOUT,
        metavar="SECONDS",
        help="a request's head and body must arrive within this, from its first byte, "
        f"else 408 (default {REQUEST_TIMEOUT}, the API server's own)",
    )
    proxy.add_argument(
        "--handshake-timeout",
        type=int,
        default=HANDSHAKE_TIMEOUT,
        metavar="SECONDS",
        help="close a new connection that has not finished its TLS handshake and begun a "
        f"request within this (default {HANDSHAKE_TIMEOUT})",
    )
    proxy.add_argument(
        "--max-client-connections",
        type=int,
        default=MAX_CLIENT_CONNECTIONS,
        metavar="N",
        help="open connections from one client address; more are closed at once "
        f"(default {MAX_CLIENT_CONNECTIONS}, per worker)",
    )
    proxy.add_argument(
        "--confdir",
        type=Path,
        default=None,
        help=f"the proxy's CA folder (default {default_confdir()})",
    )
    proxy.add_argument(
        "--workers",
        type=_workers,
        default=None,
        metavar="N",
        help="proxy processes on the listener, each on a core of its own (default: the "
        "number of cores; 1 with --routes)",
    )
    proxy.add_argument("--worker", default=None, help=argparse.SUPPRESS)  # workers.py's
    proxy.set_defaults(handler=_proxy, proxy_parser=proxy)

    run = subparsers.add_parser(
        "run",
        help="run a command with its Kubernetes traffic recorded (the strace of k8s)",
        description="Start a proxy on a free port, run COMMAND with KUBECONFIG pointing at it, "
        "print what was captured, and exit with COMMAND's exit status.",
    )
    _cluster_options(run)
    _recording_options(run)
    run.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS...]")
    run.set_defaults(handler=_run)

    config = subparsers.add_parser(
        "kubeconfig",
        help="write a kubeconfig that reaches the cluster through a proxy",
        description="A kubeconfig for https://HOST:PORT of a running `k8s-wiretap proxy`, "
        "trusting the proxy's CA, with a client certificate of the proxy's client CA (which a "
        "listener other machines reach requires); it holds no cluster credentials (the proxy "
        "adds them).",
    )
    _cluster_options(config)
    config.add_argument("--proxy", default="127.0.0.1:8001", metavar="HOST:PORT")
    config.add_argument("-o", "--output", type=Path, required=True, metavar="FILE")
    config.add_argument("--confdir", type=Path, default=None)
    config.set_defaults(handler=_kubeconfig)


def _cluster_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kubeconfig",
        type=Path,
        default=None,
        help="kubeconfig file (default $KUBECONFIG or ~/.kube/config)",
    )
    parser.add_argument("--context", default=None, help="context (default: current-context)")


def _recording_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--record", type=Path, metavar="FILE", help="write a recording (a new file)"
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="let --record replace an existing FILE"
    )
    parser.add_argument(
        "--no-redact",
        action="store_true",
        help="keep credentials and Secret values in the recording",
    )
    parser.add_argument(
        "--max-body",
        default=str(DEFAULT_MAX_BODY),
        metavar="SIZE",
        help="largest body or watch event recorded whole, 1 byte or more (e.g. 1m); a "
        "larger one keeps its first SIZE bytes and its size",
    )


def _listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise UsageError(f"--listen {value!r}: expected HOST:PORT")
    return host.strip("[]") or "127.0.0.1", int(port)


def _access(args: argparse.Namespace) -> ClusterAccess:
    access = load_kubeconfig(args.kubeconfig, args.context)
    if urlsplit(access.server).path not in ("", "/"):
        raise UsageError(f"server {access.server}: API servers behind a path are not supported")
    return access


def _max_body(value: str) -> int:
    """A size of 1 byte or more. 0 is refused rather than read as "no bodies" (or as "no
    limit"): a recorded body is its first SIZE bytes and its size, so 1 keeps the sizes."""
    try:
        size = human.parse_size(value)
    except ValueError as error:
        raise UsageError(f"--max-body {value!r}: {error}") from error
    if size is None or size < 1:
        raise UsageError(
            f"--max-body {value}: must be 1 byte or more (a larger body keeps its first "
            "SIZE bytes and its size; 1 records sizes alone, in effect)"
        )
    return size


def _settings(args: argparse.Namespace, routes: list[Route]) -> ProxySettings:
    if args.no_redact:
        warn("--no-redact: the recording will hold credentials and Secret values")
    return ProxySettings(
        routes=routes,
        record=args.record.absolute() if args.record else None,
        overwrite=args.overwrite,
        redact=not args.no_redact,
        max_body=_max_body(args.max_body),
        etcd=getattr(args, "etcd", None),
    )


def _routes_file(path: Path) -> list[Route]:
    try:
        entries = json.loads(path.read_text())
        return [
            Route(
                e["name"],
                *_listen(e["listen"]),
                load_kubeconfig(Path(e["kubeconfig"]), e.get("context")),
            )
            for e in entries
        ]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise UsageError(f"--routes {path}: {error}") from error


def _check_remote(args: argparse.Namespace, routes: list[Route]) -> None:
    """Refuse a listener other machines can reach unless --allow-remote; with it, say loudly
    what is exposed (once: not again in each worker process)."""
    remote = [route for route in routes if route.remote]
    if remote and not args.allow_remote:
        route = remote[0]
        where = f"--routes {args.routes}: {route.name} listens on" if args.routes else "--listen"
        raise UsageError(
            f"{where} {route.address}, which other machines can reach: add "
            "--allow-remote (their clients then need a client certificate of the proxy's CA), "
            "or listen on 127.0.0.1"
        )
    if not remote or args.worker is not None:
        return
    confdir = args.confdir or default_confdir()
    ca, _ = client_ca_paths(confdir)
    client_authority(confdir)
    for route in remote:
        warn(
            f"{route.name}: {route.address} is reachable from other machines; the "
            f"credentials of context {route.access.context} are added for clients with a "
            f"certificate of the client CA {ca} (`k8s-wiretap kubeconfig --proxy HOST:PORT` "
            "issues one); other remote clients get 403 and nothing is forwarded"
        )


def _workers(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r}: a number of processes, 1 or more")
    return int(value)


def _proxy(args: argparse.Namespace) -> int:
    routes = (
        _routes_file(args.routes)
        if args.routes
        else [Route("default", *_listen(args.listen), _access(args))]
    )
    _check_remote(args, routes)
    _otlp_checks(args)
    if args.workers is None:  # `lab up --via-proxy` (--routes) keeps one process
        args.workers = 1 if args.routes or args.otlp_endpoint else cores()
    settings = _settings(args, routes)
    if args.worker is None and not (args.no_tui or args.quiet) and _terminal():
        if args.otlp_endpoint:  # the proxy's own process sends the spans
            os.environ[OTLP_ENDPOINT_ENV] = args.otlp_endpoint
        return run_live(args)  # the proxy in a process of its own, the TUI in this one
    if not args.quiet:
        if args.worker is not None:  # workers share stdout: one write per line keeps lines whole
            sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
        settings.outputs.append(ConsoleOutput(sys.stdout))
    if args.otlp_endpoint:
        settings.outputs.append(OtlpOutput(args.otlp_endpoint))
    settings.accept_hosts = args.accept_hosts
    settings.idle_timeout = args.idle_timeout
    settings.request_timeout = args.request_timeout
    settings.handshake_timeout = args.handshake_timeout
    settings.max_client_connections = args.max_client_connections
    settings.on_record_error = args.on_record_error
    settings.confdir = args.confdir or default_confdir()
    if args.worker is not None:
        return workers.run_worker(args.worker, settings, args.workers)
    if args.workers > 1:
        return workers.supervise(args.proxy_parser, args, settings, warn)
    ProxyServer(settings).serve()
    return 0


def _otlp_checks(args: argparse.Namespace) -> None:
    """A bad --otlp-endpoint is a usage error before anything starts; so is one with
    several workers: each would explain only its own connections, and a causal chain
    crosses them (a kubectl's write, the controller's reaction)."""
    if not args.otlp_endpoint:
        return
    traces_url(args.otlp_endpoint)
    if args.workers is not None and args.workers > 1:
        raise UsageError("--otlp-endpoint needs one proxy process: drop --workers")


def _terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _proxy_kubeconfig(path: Path, access: ClusterAccess, address: str, confdir: Path) -> Path:
    return write_kubeconfig(
        path,
        server=f"https://{address}",
        ca_pem=proxy_ca_pem(confdir),
        client=issue_client(confdir),
        name=f"wiretap-{access.context}",
        user="via-proxy",
        namespace=access.namespace,
    )


def _kubeconfig(args: argparse.Namespace) -> int:
    access = _access(args)
    host, port = _listen(args.proxy)
    _proxy_kubeconfig(args.output, access, f"{host}:{port}", args.confdir or default_confdir())
    print(args.output)
    return 0


def _run(args: argparse.Namespace) -> int:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise UsageError("run: give a command after --, e.g. run -- kubectl get pods")
    access = _access(args)
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="k8s-wiretap-run-") as scratch:
        work = Path(scratch)
        settings = _settings(args, [Route("default", "127.0.0.1", port, access)])
        settings.record = settings.record or work / "recording.jsonl"
        kubeconfig = _proxy_kubeconfig(
            work / "kubeconfig", access, f"127.0.0.1:{port}", settings.confdir
        )
        env = {**os.environ, "KUBECONFIG": str(kubeconfig), "KUBECACHEDIR": str(work / "cache")}
        server = ProxyServer(settings).start()
        try:
            status = _execute(command, env)
        finally:
            server.stop()
        _summary(settings.record, args.record)
    return status


def _execute(command: list[str], env: dict[str, str]) -> int:
    try:
        return subprocess.run(command, env=env, check=False).returncode
    except FileNotFoundError as error:
        raise UsageError(f"run: {command[0]}: command not found") from error
    except KeyboardInterrupt:
        return 130


def _summary(path: Path, kept: Path | None) -> None:
    """What the command sent, one line an exchange; the proxy's own question at start
    (`GET /version`, which release the recording is of) is told as the wiretap's, apart."""
    recording = load(path)
    own = [e for e in recording.exchanges if e.user_agent == VERSION_AGENT]
    theirs = [e for e in recording.exchanges if e.user_agent != VERSION_AGENT]
    besides = " (and the wiretap's own GET /version)" if own else ""
    print(
        f"\nk8s-wiretap: {counted(len(theirs), 'exchange')} of the command captured{besides}"
        + (f"; recording: {kept}" if kept else ""),
        file=sys.stderr,
    )
    for exchange in theirs:
        print(exchange_line(exchange), file=sys.stderr)
