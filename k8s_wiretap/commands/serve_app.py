"""`serve`'s web server: textual-serve's, with a token, a cap on sessions and a clean stop.

- Every request carries the token `serve` printed (random, one per run): in the address's
  query (`/?token=...`) or its path (`/ws/<token>`, `/static/<token>/...`, the URLs the
  page is given). A request without it, or with another, is refused 403, whatever it asks
  for; the token is compared in constant time. Requests are refused too for a Host that
  is not this server's name (DNS rebinding) and a WebSocket opened from another origin.
- At most `max_sessions` sessions run at once: past it, a new WebSocket gets a line
  saying so in the page's terminal and is closed (1013, try again later), and nothing is
  started. A session ends when its client goes (serve_sessions).
- SIGINT and SIGTERM stop it at once: no new connection, every session's processes ended
  and its page told, then the server closed.

textual-serve's download route is not served: the TUI delivers no files.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import re
import secrets
import shlex
import signal
from contextlib import suppress
from typing import Any
from urllib.parse import urlsplit

import aiohttp_jinja2
import jinja2
from aiohttp import WSCloseCode, web
from aiohttp.typedefs import Handler
from textual_serve.server import Server, to_int

from k8s_wiretap.commands.serve_connections import hold, listen
from k8s_wiretap.commands.serve_sessions import Session

__all__ = ["WiretapServer", "local_font", "refusal", "token_refusal"]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
HEARTBEAT = 15.0  # seconds between pings to a session's page; no pong in half that: it is gone
CLOSE_TIMEOUT = 1.0  # seconds a closing WebSocket, or a stopping server, waits for a client


def _host_name(netloc: str) -> str:
    """`[::1]:8000` → `::1`, `localhost:8000` → `localhost`, lowercased."""
    return (urlsplit(f"//{netloc}").hostname or "").lower()


def refusal(host: str, origin: str | None, path: str, names: frozenset[str] | None) -> str | None:
    """Why a request is refused, or None: no Host, a Host that is not one of `names` (None:
    any), or a websocket opened from a page of another origin than the Host it asks."""
    if not host:
        return "no Host header"
    if names is not None and _host_name(host) not in names:
        return f"{host!r} is not this server's name"
    websocket = path == "/ws" or path.startswith("/ws/")
    if websocket and origin is not None and urlsplit(origin).netloc.lower() != host.lower():
        return f"the websocket is not for pages of {origin}"
    return None


def token_refusal(given: str, token: str) -> str | None:
    """Why a request that carries `given` as its token is refused, or None."""
    if hmac.compare_digest(given.encode(), token.encode()):
        return None
    what = "another token" if given else "no token"
    return f"{what}: open the address `k8s-wiretap serve` printed, with its token"


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


class _OneLine(logging.Formatter):
    """A log record as one line, its exception's message instead of a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        text = (record.getMessage().splitlines() or [""])[0]
        if record.exc_info and record.exc_info[1] is not None:
            text += f": {record.exc_info[1]}"
        return f"k8s-wiretap: serve: {text}"


class WiretapServer(Server):
    """textual-serve's Server running `argv` per session, with the guards above."""

    def __init__(
        self, argv: list[str], *, font_size: int, loopback: bool, max_sessions: int, **kwargs: Any
    ) -> None:
        super().__init__(shlex.join(argv), **kwargs)
        self.argv = argv
        self.font_size = font_size
        self.max_sessions = max_sessions
        self.sessions: set[Session] = set()
        self.names = LOOPBACK_NAMES | {self.host.lower()} if loopback else None
        self.token = secrets.token_urlsafe(32)
        host = f"[{self.host}]" if ":" in self.host else self.host
        self.url = f"http://{host}:{self.port}/?token={self.token}&fontsize={font_size}"

    def initialize_logging(self) -> None:
        """Warnings and errors only, one line each (no access log, no traceback)."""
        handler = logging.StreamHandler()
        handler.setFormatter(_OneLine())
        logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)

    async def _make_app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard])
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path))
        app.add_routes(
            [
                web.get("/", self.handle_index),
                web.get("/ws/{token}", self.handle_websocket),
                web.get("/static/{token}/{name:.+}", self.handle_static),
            ]
        )
        return app

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        given = request.match_info.get("token") or request.query.get("token", "")
        host = request.headers.get("Host", "")  # not request.host: it asks DNS without one
        why = refusal(host, request.headers.get("Origin"), request.path, self.names)
        why = why or token_refusal(given, self.token)
        if why is not None:
            raise web.HTTPForbidden(text=f"k8s-wiretap serve: refused: {why}\n")
        return await handler(request)

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        """textual-serve's page, its URLs carrying the token, its font served from here."""
        if "fontsize" not in request.query:
            raise web.HTTPFound(request.rel_url.update_query(fontsize=self.font_size))
        # The page's URLs name the host the browser asked for, so that --allow-remote on
        # 0.0.0.0 works from another machine.
        origin = f"{request.scheme}://{request.host}"
        static = f"{origin}/static/{self.token}/"
        context = {
            "font_size": to_int(request.query["fontsize"], self.font_size),
            "app_websocket_url": f"ws{origin.removeprefix('http')}/ws/{self.token}",
            "config": {"static": {"url": static}},
            "application": {"name": self.title},
        }
        page = aiohttp_jinja2.render_template("app_index.html", request, context)
        page.text = local_font(page.text or "", static)
        return page

    async def handle_static(self, request: web.Request) -> web.StreamResponse:
        """A file of textual-serve's page (its script, styles, fonts)."""
        root = self.statics_path.resolve()
        path = (root / request.match_info["name"]).resolve()
        if not path.is_relative_to(root) or not path.is_file():
            raise web.HTTPNotFound()
        return web.FileResponse(path)

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """A session for the page's WebSocket, if there is room for one."""
        websocket = web.WebSocketResponse(heartbeat=HEARTBEAT, timeout=CLOSE_TIMEOUT)
        if not websocket.can_prepare(request).ok:
            raise web.HTTPBadRequest(text="k8s-wiretap serve: refused: not a WebSocket\n")
        if len(self.sessions) >= self.max_sessions:
            return await self._refuse(request, websocket)
        session = Session(self.argv, websocket, download_manager=self.download_manager)
        self.sessions.add(session)  # before any await: the count is never passed
        try:
            await websocket.prepare(request)
            hold(request)
            width = to_int(request.query.get("width", "80"), 80)
            await session.start(width, to_int(request.query.get("height", "24"), 24))
            await self._process_messages(websocket, session)
        except ConnectionError:
            pass  # the client went: its session ends
        except Exception as error:  # the page sent what is not the protocol: it ends
            logging.getLogger(__name__).warning("a session ended: %s", error)
        finally:
            await session.end()
            self.sessions.discard(session)
        return websocket

    async def _refuse(
        self, request: web.Request, websocket: web.WebSocketResponse
    ) -> web.WebSocketResponse:
        said = f"k8s-wiretap: no session free (--max-sessions {self.max_sessions})"
        await websocket.prepare(request)
        with suppress(ConnectionError):
            await websocket.send_bytes(f"\r\n {said}: close a tab, then Restart.\r\n".encode())
            await websocket.close(code=WSCloseCode.TRY_AGAIN_LATER, message=said.encode())
        return websocket

    def serve(self, debug: bool = False) -> None:
        """Serve until SIGINT or SIGTERM, saying where once it listens (not before)."""
        self.debug = debug
        self.initialize_logging()
        asyncio.run(self._run())

    async def _run(self) -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        runner = web.AppRunner(await self._make_app(), shutdown_timeout=CLOSE_TIMEOUT)
        await runner.setup()
        assert runner.server is not None
        try:
            listener = await listen(runner.server, self.host, self.port)
            print(f"k8s-wiretap: serving {self.title} on {self.url} (Ctrl+C stops)", flush=True)
            await stop.wait()
            listener.close()
            await asyncio.gather(*(session.end(going_away=True) for session in self.sessions))
        finally:
            await runner.cleanup()
