"""`k8s-wiretap serve replay FILE`: the TUI in a local web page, for a room and a projector.

textual-serve runs one `k8s-wiretap replay FILE` per browser tab and shows its terminal in
the page (xterm.js). The font size is the page's: `--font-size` sets it, `?fontsize=N` in the
address changes it. The server listens on loopback unless `--allow-remote` says otherwise,
and even there it refuses what a page from another site could do with it: its address in
another name (DNS rebinding) and its websocket opened from another origin; the recording
is still open to anyone who can reach the port, which the warning says.

A file that is not a recording is refused in one line before the server starts, as `replay`
refuses it; so is a walkthrough NAME there is none of, as `walkthrough` refuses it.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import re
import shlex
import signal
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from k8s_wiretap.capture.reader import iter_records
from k8s_wiretap.commands.replay import add_theme_option
from k8s_wiretap.errors import UsageError

if TYPE_CHECKING:
    from aiohttp import web
    from aiohttp.typedefs import Handler

__all__ = ["is_loopback", "refusal", "register"]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def register(subparsers: Any) -> None:
    serve = subparsers.add_parser(
        "serve",
        help="serve the TUI to a local web page (textual-serve), e.g. for a projector",
        description="Serve the TUI to a web page: each browser tab runs its own session. "
        "Listens on 127.0.0.1 unless --allow-remote; ?fontsize=N in the address sets "
        "the font size.",
    )
    what = serve.add_subparsers(dest="app", metavar="APP", required=True)
    options = _options()
    replay = what.add_parser(
        "replay", parents=[options], help="a recording, as `k8s-wiretap replay FILE`"
    )
    replay.add_argument("recording", type=Path)
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
        "--allow-remote",
        action="store_true",
        help="allow a --host that other machines can reach (no login: they see the recording)",
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
    if is_loopback(args.host):
        return
    if not args.allow_remote:
        raise UsageError(
            f"--host {args.host} is reachable from other machines: "
            "add --allow-remote if that is meant, or leave the default 127.0.0.1"
        )
    print(
        f"k8s-wiretap: warning: serving on {args.host}: anyone who can reach port "
        f"{args.port} can open the TUI and read the recording (there is no login)",
        file=sys.stderr,
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
    server = _server_class()(
        shlex.join(command),
        host=args.host,
        port=args.port,
        title=title,
        font_size=args.font_size,
        loopback=is_loopback(args.host),
    )
    try:
        server.serve()
    except OSError as error:
        where = f"{args.host}:{args.port}"
        raise UsageError(f"cannot listen on {where}: {error.strerror or error}") from None
    return 0


def _host_name(netloc: str) -> str:
    """`[::1]:8000` → `::1`, `localhost:8000` → `localhost`, lowercased."""
    return (urlsplit(f"//{netloc}").hostname or "").lower()


def refusal(host: str, origin: str | None, path: str, names: frozenset[str] | None) -> str | None:
    """Why a request is refused, or None: a Host that is not one of `names` (None: any),
    or a websocket opened from a page of another origin than the Host it asks."""
    if names is not None and _host_name(host) not in names:
        return f"{host!r} is not this server's name"
    if path == "/ws" and origin is not None and urlsplit(origin).netloc.lower() != host.lower():
        return f"the websocket is not for pages of {origin}"
    return None


# textual-serve's page fetches its font's CSS from a web font service; a workshop room may
# have no Internet. It ships the font itself (static/fonts): the page gets it from us.
_FONT_LINK = re.compile(
    r'<link\s+rel="stylesheet"\s+href="https://fonts\.googleapis\.com/[^"]*"\s*/?>'
)
_FONT_FACE = """<style>
      @font-face {{
        font-family: "Roboto Mono";
        src: url("{static}fonts/RobotoMono-VariableFont_wght.ttf") format("truetype");
        font-weight: 100 700;
        font-style: normal;
      }}
      @font-face {{
        font-family: "Roboto Mono";
        src: url("{static}fonts/RobotoMono-Italic-VariableFont_wght.ttf") format("truetype");
        font-weight: 100 700;
        font-style: italic;
      }}
    </style>"""


def local_font(page: str, static: str) -> str:
    """`page` with its web font link replaced by the font textual-serve ships, from
    `static` (the server's static files' URL)."""
    return _FONT_LINK.sub(lambda _: _FONT_FACE.format(static=static), page)


def _server_class() -> type[Any]:
    """textual-serve's Server with our font size, one-line start and request guard
    (imported here: aiohttp loads only for `serve`)."""
    from aiohttp import web
    from textual_serve.server import Server

    class WiretapServer(Server):
        def __init__(self, command: str, *, font_size: int, loopback: bool, **kwargs: Any) -> None:
            super().__init__(command, **kwargs)
            self.font_size = font_size
            self.names = LOOPBACK_NAMES | {self.host.lower()} if loopback else None
            host = f"[{self.host}]" if ":" in self.host else self.host
            self.public_url = f"http://{host}:{self.port}"

        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            app.middlewares.append(self._guard)
            return app

        @web.middleware
        async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
            why = refusal(request.host, request.headers.get("Origin"), request.path, self.names)
            if why is not None:
                raise web.HTTPForbidden(text=f"k8s-wiretap serve: refused: {why}\n")
            return await handler(request)

        async def handle_index(self, request: web.Request) -> web.StreamResponse:
            if "fontsize" not in request.query:
                raise web.HTTPFound(request.rel_url.update_query(fontsize=self.font_size))
            # The page's own URLs (scripts, websocket) name the host the browser asked for,
            # so that --allow-remote on 0.0.0.0 works from another machine. The parent
            # reads public_url before it first awaits: no other request comes between.
            self.public_url = f"{request.scheme}://{request.host}"
            response: web.StreamResponse = await super().handle_index(request)
            if isinstance(response, web.Response) and response.text is not None:
                response.text = local_font(response.text, f"{self.public_url}/static/")
            return response

        async def on_startup(self, app: web.Application) -> None:
            """Nothing: the logo would cost a projector's screenful; `serve` says one line."""

        def serve(self, debug: bool = False) -> None:
            """The parent's, saying where it serves once it listens (not before)."""
            self.debug = debug
            self.initialize_logging()
            loop = asyncio.new_event_loop()
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(signum, self.request_exit)
            web.run_app(
                self._make_app(),
                host=self.host,
                port=self.port,
                handle_signals=False,
                loop=loop,
                print=lambda _: self._say_listening(),
            )

        def _say_listening(self) -> None:
            url = f"{self.public_url}/?fontsize={self.font_size}"
            print(f"k8s-wiretap: serving {self.title} on {url} (Ctrl+C stops)", flush=True)

    return WiretapServer
