"""An upstream's answer is read while the proxy's writes to that upstream stall.

mitmproxy 12.3.1's `ConnectionHandler.drain_writers` (proxy/server.py) runs after every read
of every connection: under one lock for the whole handler, it waits until each connection's
write buffer has drained. That is its backpressure, and it deadlocks on a server that
answers before it has read the request's body, which is what kube-apiserver does to a body
over its 3 MiB (413) and Go's `net/http` to any request it refuses early: the client's task
holds the lock while it waits for the upstream's buffer, which never drains, since the
server reads no more; the upstream's task, having read the first part of the answer (a TLS
record, a TCP segment), waits for that lock before it reads the rest. Go's server shuts its
write side, waits 0.5 s (`closeWriteAndWait`, net/http server.go) and closes with the body
unread, which resets the connection; mitmproxy then cancels the upstream's task, and the
part of the answer it had not read is lost: the client got a 502 "server closed
connection", or a 413 without its body.

`install()` replaces `drain_writers` with one that has no handler-wide lock (asyncio's
`StreamWriter.drain` takes concurrent waiters since Python 3.10; this project needs 3.12)
and in which the task of a server connection does not wait for that connection's own
buffer: what it reads from the server goes to the client, whose buffer it still waits for.
A client connection's task still waits for its own buffer too, so a client that sends
without reading what it is answered (h2 pings, say) is still held back.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mitmproxy.connection import Server
from mitmproxy.proxy import server

__all__ = ["drain_writers", "install"]


async def drain_writers(self: server.ConnectionHandler) -> None:
    """Wait until the write buffers drain (see the module); a buffer whose peer reset the
    connection cancels that connection's task, as mitmproxy's does."""
    me = asyncio.current_task()
    for connection, transport in list(self.transports.items()):
        if transport.writer is None:
            continue
        if transport.handler is me and isinstance(connection, Server):
            continue  # its own answer must be read while its body stalls
        try:
            await transport.writer.drain()
        except OSError as error:
            if transport.handler is not None:
                transport.handler.cancel(f"Error sending data: {error}")


_original: dict[str, Any] = {}


def install() -> None:
    """Patch mitmproxy's `ConnectionHandler` (once per process)."""
    if _original:
        return
    _original["drain_writers"] = server.ConnectionHandler.drain_writers
    server.ConnectionHandler.drain_writers = drain_writers  # type: ignore[method-assign]
