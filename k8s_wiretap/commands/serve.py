"""`k8s-wiretap serve replay FILE`: the TUI in a local web page, for a room and a projector.

textual-serve runs one `k8s-wiretap replay FILE` per browser tab, at most `--max-sessions`
at once, and shows its terminal in the page (xterm.js). The font size is the page's:
`--font-size` sets it, `?fontsize=N` in the address changes it. The address `serve` prints
carries a token, random for each run, without which nothing is served (serve_app). The
server listens on loopback unless `--allow-remote` says otherwise; there, the token is all
that guards the recording, over plain HTTP, which the warning says.

A file that is not a recording is refused in one line before the server starts, as `replay`
refuses it; so is a walkthrough NAME there is none of, as `walkthrough` refuses it.
"""

from __future__ import annotations

import argparse
import ipaddress
import socket
import sys
from pathlib import Path
from typing import Any

from k8s_wiretap.capture.reader import iter_records
from k8s_wiretap.commands.bundled import recording_path
from k8s_wiretap.commands.replay import add_theme_option
from k8s_wiretap.commands.warn import warn
from k8s_wiretap.errors import UsageError

__all__ = ["is_loopback", "register"]

MAX_SESSIONS = 4  # each a TUI process of about 140 MB


def register(subparsers: Any) -> None:
    serve = subparsers.add_parser(
        "serve",
        help="serve the TUI to a local web page (textual-serve), e.g. for a projector",
        description="Serve the TUI to a web page: each browser tab runs its own session. "
        "Listens on 127.0.0.1 unless --allow-remote; the address it prints carries a token "
        "it needs; ?fontsize=N in the address sets the font size.",
    )
    what = serve.add_subparsers(dest="app", metavar="APP", required=True)
    options = _options()
    replay = what.add_parser(
        "replay", parents=[options], help="a recording, as `k8s-wiretap replay FILE`"
    )
    replay.add_argument("recording", type=recording_path)
    replay.set_defaults(handler=_serve_replay)
    walkthrough = what.add_parser(
        "walkthrough", parents=[options], help="the walkthrough, as `k8s-wiretap walkthrough`"
    )
    walkthrough.add_argument("name", nargs="?")
    walkthrough.set_defaults(handler=_serve_walkthrough)


def _options() -> argparse.ArgumentParser:
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default: 127.0.0.1, this machine only)",
    )
    options.add_argument("--port", type=int, default=8000, help="port to listen on (default: 8000)")
    options.add_argument(
        "--font-size",
        type=int,
        default=16,
        metavar="PX",
        help="the page's font size (6-96, default 16)",
    )
    options.add_argument(
        "--max-sessions",
        type=int,
        default=MAX_SESSIONS,
        metavar="N",
        help=f"browser tabs served at once, each its own TUI process (default {MAX_SESSIONS})",
    )
    options.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a --host that other machines can reach (plain HTTP: the address's token "
        "is the only guard)",
    )
    add_theme_option(options)
    return options


def is_loopback(host: str) -> bool:
    """Whether every address `host` names is a loopback one (UsageError if it names none)."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as error:
        raise UsageError(f"--host {host}: {getattr(error, 'strerror', None) or error}") from None
    addresses = {str(info[4][0]).split("%")[0] for info in infos}
    return all(ipaddress.ip_address(address).is_loopback for address in addresses)


def _check_options(args: argparse.Namespace) -> None:
    if not 6 <= args.font_size <= 96:
        raise UsageError(f"--font-size {args.font_size}: between 6 and 96, please")
    if not 0 < args.port < 65536:
        raise UsageError(f"--port {args.port}: not a port")
    if args.max_sessions < 1:
        raise UsageError(f"--max-sessions {args.max_sessions}: at least 1, please")
    if is_loopback(args.host):
        return
    if not args.allow_remote:
        raise UsageError(
            f"--host {args.host} is reachable from other machines: "
            "add --allow-remote if that is meant, or leave the default 127.0.0.1"
        )
    warn(
        f"serving on {args.host} over plain HTTP: anyone who can see the traffic to port "
        f"{args.port} can take the token from it and read the recording"
    )


def _serve_replay(args: argparse.Namespace) -> int:
    _check_options(args)
    path: Path = args.recording
    next(iter(iter_records(path, [])), None)  # RecordingError, in one line, if not one
    command = [sys.executable, "-m", "k8s_wiretap", "replay", str(path.resolve())]
    command += ["--theme", args.theme]
    return _serve(args, command, f"k8s-wiretap replay {path.name}")


def _serve_walkthrough(args: argparse.Namespace) -> int:
    from k8s_wiretap.views.tui.walkthrough.chapters import DEFAULT, load

    _check_options(args)
    walkthrough = load(args.name or DEFAULT)  # UsageError, in one line, if there is none
    command = [sys.executable, "-m", "k8s_wiretap", "walkthrough", walkthrough.name]
    command += ["--theme", args.theme]
    return _serve(args, command, f"k8s-wiretap walkthrough {walkthrough.name}")


def _serve(args: argparse.Namespace, command: list[str], title: str) -> int:
    from k8s_wiretap.commands.serve_app import WiretapServer  # aiohttp loads only for `serve`

    server = WiretapServer(
        command,
        host=args.host,
        port=args.port,
        title=title,
        font_size=args.font_size,
        loopback=is_loopback(args.host),
        max_sessions=args.max_sessions,
    )
    try:
        server.serve()
    except OSError as error:
        where = f"{args.host}:{args.port}"
        raise UsageError(f"cannot listen on {where}: {error.strerror or error}") from None
    return 0
