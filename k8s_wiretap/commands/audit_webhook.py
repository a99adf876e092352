"""`k8s-wiretap audit-webhook --record REC`: the API server's audit webhook backend received
live, the whole cluster's traffic recorded with nothing in its path (docs/importing.md).

It listens (HTTPS, `--listen`, loopback unless `--allow-remote`), writes the kubeconfig the
API server's `--audit-webhook-config-file` takes (`--webhook-kubeconfig FILE`, else
`webhook.kubeconfig` in the receiver's key folder, `importers/webhook_tls.py`): its URL,
its CA, and a client certificate of its client CA, which every connection must present.
Each batch the API server posts is recorded as `import audit` records a file
(`importers/webhook.py`). `lab up --audit-webhook FILE` starts a lab that posts to it.

On a terminal the recording is shown in the replay TUI, following the file as it grows;
`--no-tui`, or no terminal, prints one line per batch instead. The server and the TUI share
one process (the server in a thread): unlike the proxy, nothing waits on the receiver — the
API server posts batches in the background, each with 30 s to be answered — so a busy
screen costs the cluster nothing. Ctrl-C, SIGTERM or quitting the TUI stops it; what is
still open (running watches) is written as far as it goes, with a note.

A file at `--webhook-kubeconfig FILE` or `--record REC` is never replaced without
`--overwrite`; the default kubeconfig is the receiver's own and is written anew each run.
The port of `--listen` may be 0 (a free one): the kubeconfig and the first line say which.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import functools
import ipaddress
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mitmproxy.utils import human

from k8s_wiretap.capture.outputs import create, reason, recording_problem
from k8s_wiretap.commands.importing import add_limits
from k8s_wiretap.commands.importing import limits as import_limits
from k8s_wiretap.commands.warn import warn
from k8s_wiretap.errors import UsageError
from k8s_wiretap.importers.webhook import Batch, LiveSink, WebhookImport
from k8s_wiretap.importers.webhook_limits import Limits
from k8s_wiretap.importers.webhook_server import WebhookServer
from k8s_wiretap.importers.webhook_tls import WebhookKeys
from k8s_wiretap.wire import yamltext
from k8s_wiretap.wire.controls import escape_controls
from k8s_wiretap.wire.words import counted

__all__ = ["register", "webhook_kubeconfig"]

DEFAULT_LISTEN = "127.0.0.1:9443"
SOURCE = "audit webhook"  # the recording header's `imported`
WILDCARDS = ("0.0.0.0", "::")
MIN_BATCH = 1024  # --max-batch: a batch of one small event is some hundreds of bytes


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "audit-webhook",
        help="receive the API server's audit webhook: the whole cluster recorded live",
        description="Listen for the API server's audit webhook backend (HTTPS, the API "
        "server authenticated by a client certificate), record every batch of audit events "
        "as `import audit` would, and show the recording in the TUI as it grows. Writes the "
        "kubeconfig for the API server's --audit-webhook-config-file (`lab up "
        "--audit-webhook FILE` takes it).",
    )
    parser.add_argument(
        "--record", type=Path, required=True, metavar="REC", help="the recording (a new file)"
    )
    parser.add_argument(
        "--listen",
        default=DEFAULT_LISTEN,
        metavar="HOST:PORT",
        help=f"where to listen (default {DEFAULT_LISTEN}; port 0: a free one; an address "
        "other machines reach needs --allow-remote)",
    )
    parser.add_argument(
        "--webhook-kubeconfig",
        type=Path,
        metavar="FILE",
        help="where to write the API server's webhook kubeconfig (a new file; default: "
        "webhook.kubeconfig in the receiver's key folder, rewritten each run)",
    )
    parser.add_argument(
        "--no-tui",
        action="store_true",
        help="print one line per batch instead of opening the TUI (what it does anyway "
        "when stdin or stdout is not a terminal)",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="let --record and --webhook-kubeconfig replace existing files",
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a --listen address other machines can reach (the API server must still "
        "present the receiver's client certificate)",
    )
    parser.add_argument(
        "--max-batch",
        default="32m",
        metavar="SIZE",
        help="largest batch taken, 1 KiB or more (default 32m); a larger one is refused "
        "unread (413, and a note in the recording), and two of this size are the most held "
        "at once",
    )
    add_limits(parser, "max_open")
    parser.set_defaults(handler=_receive)


def _max_batch(value: str) -> int:
    try:
        size = human.parse_size(value)
    except ValueError as error:
        raise UsageError(f"--max-batch {value!r}: {error}") from error
    if size is None or size < MIN_BATCH:
        raise UsageError(f"--max-batch {value}: must be {MIN_BATCH:,} bytes (1k) or more")
    return size


# -- checks before anything starts --------------------------------------------------------
def _listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--listen {value!r}: expected HOST:PORT")
    return host.strip("[]") or "127.0.0.1", int(port)


def _loopback(host: str) -> bool:
    """Whether every address `host` names is a loopback one."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as error:
        raise UsageError(f"--listen {host}: {getattr(error, 'strerror', None) or error}") from None
    return all(ipaddress.ip_address(str(i[4][0]).split("%")[0]).is_loopback for i in infos)


def _checked(args: argparse.Namespace) -> tuple[str, int, Path]:
    """The listen host and port, and the kubeconfig's path; UsageError (exit 2) first."""
    host, port = _listen(args.listen)
    if not _loopback(host) and not args.allow_remote:
        raise UsageError(
            f"--listen {args.listen}, which other machines can reach: add --allow-remote "
            "(the API server then still needs the receiver's client certificate), or listen "
            "on 127.0.0.1"
        )
    problem = recording_problem(args.record, overwrite=args.overwrite, hint="--overwrite")
    if problem:
        raise UsageError(f"audit-webhook: --record {problem}")
    kubeconfig = args.webhook_kubeconfig
    if kubeconfig is None:
        return host, port, WebhookKeys().folder / "webhook.kubeconfig"
    if kubeconfig.absolute() == args.record.absolute():
        raise UsageError("audit-webhook: --webhook-kubeconfig and --record are one file")
    problem = recording_problem(kubeconfig, overwrite=args.overwrite, hint="--overwrite")
    if problem:
        raise UsageError(f"audit-webhook: --webhook-kubeconfig {problem}")
    return host, port, kubeconfig


# -- the kubeconfig -------------------------------------------------------------------------
def _url_host(host: str) -> str:
    """The host the API server is to reach: the listen host, or this machine's name when
    it listens on every address."""
    if host in WILDCARDS:
        return socket.getfqdn()
    return f"[{host}]" if ":" in host else host


def webhook_kubeconfig(path: Path, url: str, keys: WebhookKeys, *, overwrite: bool) -> Path:
    """Write the kubeconfig for the API server's --audit-webhook-config-file: the
    receiver's `url`, its CA, a client certificate of its client CA (0600; an existing file
    is replaced only with `overwrite`)."""

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode("ascii")

    client = keys.issue_client()
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "k8s-wiretap-audit-webhook",
                "cluster": {
                    "server": url,
                    "certificate-authority-data": b64(keys.server_authority().cert_pem),
                },
            }
        ],
        "users": [
            {
                "name": "kube-apiserver",
                "user": {
                    "client-certificate-data": b64(client.cert_pem),
                    "client-key-data": b64(client.key_pem),
                },
            }
        ],
        "contexts": [
            {
                "name": "k8s-wiretap-audit-webhook",
                "context": {"cluster": "k8s-wiretap-audit-webhook", "user": "kube-apiserver"},
            }
        ],
        "current-context": "k8s-wiretap-audit-webhook",
    }
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with os.fdopen(create(path, overwrite=overwrite), "w") as handle:
        handle.write(yamltext.dump(document))
    return path


# -- running --------------------------------------------------------------------------------
def _receive(args: argparse.Namespace) -> int:
    host, port, kubeconfig = _checked(args)
    limits = Limits(max_batch=_max_batch(args.max_batch))
    max_open = import_limits(args).max_open
    keys = WebhookKeys()
    hosts = [socket.getfqdn(), socket.gethostname()] if host in WILDCARDS else [host]
    context = keys.server_context(hosts)
    tui = not args.no_tui and sys.stdin.isatty() and sys.stdout.isatty()
    messages = _Messages(tui)
    try:
        server = WebhookServer((host, port), context, _announce(messages), messages.say, limits)
    except OSError as error:
        raise UsageError(f"--listen {args.listen}: {reason(error)}") from error
    try:
        url = f"https://{_url_host(host)}:{server.port}"
        default = args.webhook_kubeconfig is None
        webhook_kubeconfig(kubeconfig, url, keys, overwrite=args.overwrite or default)
        try:
            sink = LiveSink(args.record, source=SOURCE, overwrite=args.overwrite)
        except OSError as error:
            raise UsageError(f"audit-webhook: --record {args.record}: {reason(error)}") from error
        server.importer = WebhookImport(sink, max_open)
        said = functools.partial(_said, url, args.record, kubeconfig, remote=not _loopback(host))
        _serve(server, args.record, url, messages, said)
    finally:
        server.server_close()
    print(
        f"k8s-wiretap: {counted(sink.exchanges, 'exchange')} from "
        f"{counted(server.importer.batches, 'batch', 'batches')} recorded to {args.record}",
        file=sys.stderr,
    )
    return 0


def _said(url: str, record: Path, kubeconfig: Path, *, remote: bool) -> None:
    print(f"k8s-wiretap: listening on {url}, recording to {record}", file=sys.stderr)
    print(
        f"k8s-wiretap: the API server's --audit-webhook-config-file: {kubeconfig} "
        f"(`k8s-wiretap lab up --audit-webhook {kubeconfig}`)",
        file=sys.stderr,
        flush=True,
    )
    if remote:
        warn(
            f"{url} is reachable from other machines; only clients with a certificate of "
            "the receiver's client CA are recorded"
        )


class _Messages:
    """What the receiver says: on stderr, or in the TUI once it runs (`app`)."""

    def __init__(self, tui: bool) -> None:
        self.tui = tui
        self.app: Any = None

    def say(self, message: str) -> None:
        if not self.tui:
            print(f"k8s-wiretap: {escape_controls(message)}", file=sys.stderr, flush=True)
        elif self.app is not None:
            with contextlib.suppress(RuntimeError):  # the app is gone or not yet up
                self.app.call_from_thread(
                    self.app.notify, message, title="k8s-wiretap audit-webhook", severity="warning"
                )


def _announce(messages: _Messages) -> Callable[[Batch, str], None]:
    """One line per recorded batch, without the TUI."""

    def announce(batch: Batch, peer: str) -> None:
        if messages.tui:
            return
        skipped = f", {batch.skipped:,} skipped" if batch.skipped else ""
        print(
            f"{time.strftime('%H:%M:%S')} batch {batch.number:,} from {peer}: "
            f"{counted(batch.events, 'event')}, {counted(batch.exchanges, 'new exchange')}"
            f"{skipped}",
            flush=True,
        )

    return announce


def _serve(
    server: WebhookServer, record: Path, url: str, messages: _Messages, said: Callable[[], None]
) -> None:
    """Serve in a thread until Ctrl-C, SIGTERM or the TUI quits; then close the recording,
    ended with a note of the signal that stopped it. `said` announces it, once a signal
    would stop it so."""
    thread = threading.Thread(target=server.serve_forever, name="audit webhook", daemon=True)
    stop = threading.Event()
    sink = server.importer.sink

    def terminated(*_: object) -> None:
        sink.stopped_by("SIGTERM")
        stop.set()

    previous = signal.signal(signal.SIGTERM, terminated)
    thread.start()
    try:
        said()
        if messages.tui:
            _show(record, url, messages, stop, sink.stopped_by)
        else:
            while not stop.wait(0.5):
                pass
    except KeyboardInterrupt:
        sink.stopped_by("SIGINT")
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.shutdown()
        server.importer.close()


def _show(
    record: Path,
    url: str,
    messages: _Messages,
    stop: threading.Event,
    stopped_by: Callable[[str], None],
) -> None:
    from rich.markup import escape

    from k8s_wiretap.views.tui import ReplayApp  # Textual loads only for the TUI

    app = ReplayApp(
        record,
        writer=lambda: not stop.is_set(),
        label=f"[bold]k8s-wiretap audit-webhook[/] {escape(url)}",
    )
    messages.app = app

    def quit(*_: object) -> None:
        stopped_by("SIGTERM")
        stop.set()
        app.exit()

    signal.signal(signal.SIGTERM, quit)
    app.run()
    stop.set()
