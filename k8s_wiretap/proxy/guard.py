"""Who may hold the proxy's listener, and for how long, before any request is known.

`limits.py` bounds a request (its head, its body, their deadlines); this addon bounds the
connections that carry them, so that no client that has not sent a request can hold the
proxy:

- **Connections per client address** (`wiretap_max_client_connections`): past that many
  open connections from one address, a new one is closed as soon as it is accepted, before
  anything is read from it (mitmproxy's `client_connected` hook with `client.error` set);
  clients from other addresses are served as before. A note says so once per burst: the
  first refusal, then how many more were refused once the address is under the limit again.
- **The TLS handshake deadline** (`wiretap_handshake_timeout`, from the connection's
  accept): a connection whose TLS handshake has not finished by then, that has sent no
  byte at all, or that finished its handshake and began no request, is closed with a note.
  A connection that began a request (an HTTP/1 request's first byte, an h2 request's
  headers) is under the request deadlines of `limits.py` and `h2deadline.py` from then
  on, and between requests under the idle timeout (mitmproxy's `tcp_timeout`).

The addon also holds the `wiretap_request_timeout` option, the whole-request deadline that
`limits.py` (HTTP/1) and `h2deadline.py` (h2) keep (`Limits.request_timeout`).

kube-apiserver's Go server has the same handshake bound (its `tlsHandshakeTimeout`, the
smallest of its read timeouts: 32 s) and no per-address limit; 10 s is far more than a
handshake over any network takes.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

from mitmproxy import connection, ctx, exceptions, http
from mitmproxy.addonmanager import Loader
from mitmproxy.utils import human

from k8s_wiretap.proxy import limits

__all__ = ["HANDSHAKE_TIMEOUT", "MAX_CLIENT_CONNECTIONS", "Guard", "closed_late"]

HANDSHAKE_TIMEOUT = 10
MAX_CLIENT_CONNECTIONS = 256  # per client address and proxy process: 512 file descriptors
_late: set[str] = set()  # client connections closed at the handshake deadline, still open


def closed_late(client: connection.Client) -> bool:
    """Whether the guard closed the client's connection at the handshake deadline (its
    failed handshake is noted already)."""
    return client.id in _late


class Guard:
    """The connection limits (see the module); loaded beside the wiretap addon."""

    def __init__(self) -> None:
        self.max_connections = MAX_CLIENT_CONNECTIONS
        self.handshake_timeout: float = HANDSHAKE_TIMEOUT
        self._open: Counter[str] = Counter()  # client address → its open connections
        self._counted: dict[str, str] = {}  # client connection id → its address
        self._refused: Counter[str] = Counter()  # client address → refusals not yet noted
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._asked: set[str] = set()  # client connections whose request headers came

    def load(self, loader: Loader) -> None:
        loader.add_option(
            "wiretap_max_client_connections",
            int,
            MAX_CLIENT_CONNECTIONS,
            "Open connections from one client address; more are closed at once.",
        )
        loader.add_option(
            "wiretap_handshake_timeout",
            int,
            HANDSHAKE_TIMEOUT,
            "Seconds a new connection has to finish its TLS handshake and begin a request.",
        )
        loader.add_option(
            "wiretap_request_timeout",
            int,
            limits.REQUEST_TIMEOUT,
            "Seconds a request (head and body) may take, from its first byte (then 408).",
        )

    def configure(self, updated: set[str]) -> None:
        for name in (
            "wiretap_max_client_connections",
            "wiretap_handshake_timeout",
            "wiretap_request_timeout",
        ):
            if name in updated and getattr(ctx.options, name) <= 0:
                raise exceptions.OptionsError(f"{name} must be positive")
        self.max_connections = ctx.options.wiretap_max_client_connections
        self.handshake_timeout = ctx.options.wiretap_handshake_timeout
        limits.LIMITS.request_timeout = ctx.options.wiretap_request_timeout

    def client_connected(self, client: connection.Client) -> None:
        address = _address(client)
        if self._open[address] >= self.max_connections:
            client.error = f"{self.max_connections} connections from {address} are open"
            if not self._refused[address]:
                peer = human.format_address(client.peername)
                _note(
                    f"refused a connection from {peer}: {client.error}, the limit per client"
                    " address; more are refused until one closes"
                )
            self._refused[address] += 1
            return
        self._open[address] += 1
        self._counted[client.id] = address
        loop = asyncio.get_running_loop()
        self._timers[client.id] = loop.call_later(self.handshake_timeout, self._check, client)

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        self._asked.add(flow.client_conn.id)

    def client_disconnected(self, client: connection.Client) -> None:
        limits.spoke(client.id, forget=True)
        _late.discard(client.id)
        self._asked.discard(client.id)
        timer = self._timers.pop(client.id, None)
        if timer is not None:
            timer.cancel()
        address = self._counted.pop(client.id, None)
        if address is None:
            return
        self._open[address] -= 1
        if self._open[address] <= 0:
            del self._open[address]
        refused = self._refused.pop(address, 0)
        if refused > 1:
            _note(f"refused {refused - 1} more connections from {address} at its limit")

    def _check(self, client: connection.Client) -> None:
        """The handshake deadline: close a connection that has begun no request."""
        self._timers.pop(client.id, None)
        if limits.spoke(client.id) or client.id in self._asked:
            return
        if client.tls_established:
            what = "finished its TLS handshake and began no request"
        else:
            what = "did not finish its TLS handshake" if client.tls else "sent nothing"
        peer = human.format_address(client.peername)
        _note(f"closed the connection of {peer}: it {what} within {self.handshake_timeout:g} s")
        _late.add(client.id)
        _close(client)


def _address(client: connection.Client) -> str:
    """The client's address without its port (an IPv4-mapped IPv6 address as IPv4)."""
    host = str(client.peername[0]) if client.peername else "?"
    return host.removeprefix("::ffff:") if "." in host else host


def _close(client: connection.Client) -> None:
    """Close a client connection as mitmproxy's idle timeout does (its handler task is
    cancelled: the layers see the connection closed)."""
    handler = ctx.master.addons.get("proxyserver").connections.get(client.id)
    io = handler.transports.get(handler.client) if handler is not None else None
    if io is not None and io.handler is not None:
        client.error = client.error or "handshake deadline"
        io.handler.cancel("handshake deadline")


def _note(text: str) -> None:
    if limits.LIMITS.noted is not None:
        limits.LIMITS.noted(text)
    else:
        logging.warning(f"k8s-wiretap: {text}")
