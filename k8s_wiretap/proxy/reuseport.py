"""SO_REUSEPORT for mitmproxy's TCP listeners, in proxy worker processes only.

`proxy --workers N` runs N proxy processes that all listen on one address; with
SO_REUSEPORT on every one of their listening sockets the kernel spreads the incoming
connections over them (Linux hashes each connection to one socket, so a connection stays
in one process). mitmproxy 12.3.1 opens its TCP listener in one call,
`AsyncioServerInstance.listen` (proxy/mode_servers.py):
`asyncio.start_server(self.handle_stream, host, port)`, with no way to pass `reuse_port`.

`install()` replaces that one method with `_listen`, which does the same call with
`reuse_port=True` for a mode over TCP (every wiretap route: `reverse:http(s)://…`) and
hands anything else (UDP only, a port 0 to pick) to mitmproxy's own method. A
`reverse:https://` mode also opens a UDP port of the same number, for HTTP/3; mitmproxy's
UDP server (mitmproxy_rs) cannot share a port, so a worker listens on TCP only: no
Kubernetes client or API server speaks HTTP/3. It is called by
`workers.run_worker` before mitmproxy starts, never in a single proxy process, where a
second proxy on the same port must still be refused.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mitmproxy.proxy import mode_servers

__all__ = ["install", "installed"]

_ORIGINAL = mode_servers.AsyncioServerInstance.listen


async def _listen(self: Any, host: str, port: int) -> list[Any]:
    """mitmproxy's `listen`, with SO_REUSEPORT on a TCP listener."""
    if self.mode.transport_protocol not in ("tcp", "both") or port == 0:
        return list(await _ORIGINAL(self, host, port))
    return [await asyncio.start_server(self.handle_stream, host, port, reuse_port=True)]


def install() -> None:
    """Every TCP listener mitmproxy opens in this process from now on has SO_REUSEPORT."""
    mode_servers.AsyncioServerInstance.listen = _listen  # type: ignore[method-assign]


def installed() -> bool:
    return mode_servers.AsyncioServerInstance.listen is _listen
