"""The upstream side of each listener: who the proxy is to the API server, per client.

- A client that brings its own `Authorization` keeps it: that is its identity, so its
  connection goes upstream without a client certificate (the API server tries certificates
  before tokens, and a certificate would win).
- A client that brings none gets the route's kubeconfig credentials, as with `kubectl proxy`:
  a bearer token added to each request, or the route's client certificate presented on the
  upstream TLS connection. The first request of a client connection decides for that
  connection (client-go keeps one connection per credential). Connections open lazily
  (`connection_strategy=lazy`) so that the first request is known before the upstream
  handshake.
- Requests whose Host is not loopback are refused (403): a web page that rebinds a DNS name
  to 127.0.0.1 must not reach the cluster with injected credentials (`--accept-hosts`).
- On a listener other machines can reach (`--allow-remote`), a client from another address
  must present a certificate from the proxy's client CA (clientauth.py) in the TLS handshake;
  without one every request gets a 403 Status, nothing is forwarded and no credential is
  added. An authenticated client skips the Host check (it names the proxy's address).
- An unreachable API server gets the client a 503 whose body is a Kubernetes Status. The
  check (a TCP connect) runs before a request unless the API server answered in the last 2 s
  and no upstream connection has closed since: a dead API server closes its connections, and
  that ends the grace. Only requests already on the wire when it dies get mitmproxy's own 502.
- A 401 for injected credentials makes them be fetched again (exec plugins, token files).
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from mitmproxy import connection, ctx, http, tls
from mitmproxy.net.http import url
from mitmproxy.proxy import server_hooks

from k8s_wiretap.proxy.clientauth import ClientCheck, loopback_peer
from k8s_wiretap.proxy.routes import Route
from k8s_wiretap.proxy.status import status_response

__all__ = ["DEFAULT_ACCEPT_HOSTS", "Upstream"]

DEFAULT_ACCEPT_HOSTS = r"^(localhost|127(\.\d{1,3}){3}|\[::1\])(:\d+)?$"
CONNECT_CHECK_TIMEOUT = 5.0
# After a connection check or an answer from upstream, the API server counts as reachable
# this long, until an upstream connection closes: checking before every request would cost a
# TCP handshake each time.
REACHABLE_FOR = 2.0
INJECTED = "wiretap_injected"


class Upstream:
    def __init__(self, routes: list[Route], accept_hosts: str = DEFAULT_ACCEPT_HOSTS) -> None:
        self.routes = {route.mode: route for route in routes}
        self.accept_hosts = re.compile(accept_hosts)
        self._own_auth: dict[str, bool] = {}
        self._clients: ClientCheck | None = None  # made when a remote listener needs it

    def _client_check(self) -> ClientCheck:
        if self._clients is None:
            self._clients = ClientCheck.load(Path(ctx.options.confdir).expanduser())
        return self._clients

    def _route(self, client: connection.Client) -> Route:
        return self.routes[client.proxy_mode.full_spec]

    async def request(self, flow: http.HTTPFlow) -> None:
        route = self._route(flow.client_conn)
        refusal = self._refusal(route, flow.client_conn, flow.request.host_header or "")
        if refusal:
            flow.response = status_response(403, refusal)
            return
        flow.request.host_header = url.hostport(flow.request.scheme, *route.upstream)
        own = "authorization" in flow.request.headers
        self._own_auth.setdefault(flow.client_conn.id, own)
        if not own:
            await self._inject(route, flow)
        if flow.response is None and time.monotonic() >= route.reachable_until:
            await self._reachable(route, flow)

    def _refusal(self, route: Route, client: connection.Client, host: str) -> str | None:
        """Why this client's request is not forwarded, or None."""
        if route.remote and not loopback_peer(client):
            if self._client_check().verified(client) is None:
                return (
                    f"k8s-wiretap: {route.address} serves clients from other machines "
                    "only with a client certificate of the proxy's client CA "
                    "(`k8s-wiretap kubeconfig --proxy HOST:PORT` writes a kubeconfig with one)"
                )
            return None
        if not self.accept_hosts.match(host):
            return f"k8s-wiretap: Host {host!r} is not accepted (not loopback; see --accept-hosts)"
        return None

    async def _inject(self, route: Route, flow: http.HTTPFlow) -> None:
        credential = route.credentials.cached()
        if credential is None:
            try:
                credential = await asyncio.to_thread(route.credentials.current)
            except Exception as error:  # an exec plugin failing must not kill the proxy
                flow.response = status_response(503, f"k8s-wiretap: no credentials: {error}")
                return
        if credential.token:
            flow.request.headers["authorization"] = f"Bearer {credential.token}"
        flow.metadata[INJECTED] = route.credentials.describe(credential)

    async def _reachable(self, route: Route, flow: http.HTTPFlow) -> bool:
        host, port = route.upstream
        try:
            _, writer = await asyncio.wait_for(
                asyncio.open_connection(host, port), CONNECT_CHECK_TIMEOUT
            )
        except OSError as error:  # TimeoutError included
            flow.response = status_response(
                503,
                f"k8s-wiretap: API server {route.access.server} is unreachable: {_reason(error)}",
            )
            return False
        writer.close()
        route.reachable_until = time.monotonic() + REACHABLE_FOR
        return True

    def server_connect(self, data: server_hooks.ServerConnectionHookData) -> None:
        route = self.routes.get(data.client.proxy_mode.full_spec)
        if route is not None and route.access.tls_server_name:
            data.server.sni = route.access.tls_server_name

    def server_disconnected(self, data: server_hooks.ServerConnectionHookData) -> None:
        """An upstream connection ended (perhaps the API server died): check before the next
        request, so that it gets the Status 503 rather than mitmproxy's own HTML 502."""
        route = self.routes.get(data.client.proxy_mode.full_spec)
        if route is not None:
            route.reachable_until = 0.0

    def tls_start_client(self, data: tls.TlsData) -> None:
        """After mitmproxy's own TLS setup: on a remote listener, ask a client from another
        machine for its certificate."""
        client = data.context.client
        route = self.routes.get(client.proxy_mode.full_spec)
        if route is None or data.ssl_conn is None or not route.remote or loopback_peer(client):
            return
        self._client_check().ask(client, data.ssl_conn)

    def tls_start_server(self, data: tls.TlsData) -> None:
        """After mitmproxy's own TLS setup: present the route's client certificate, if any."""
        client = data.context.client
        route = self.routes.get(client.proxy_mode.full_spec)
        if route is None or data.ssl_conn is None or self._own_auth.get(client.id, False):
            return
        credential = route.credentials.cached()
        if credential and credential.cert_pem and credential.key_pem:
            cert = x509.load_pem_x509_certificate(credential.cert_pem)
            key = serialization.load_pem_private_key(credential.key_pem, password=None)
            if not isinstance(
                key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey
            ):
                return  # not a key type TLS client certificates use
            data.ssl_conn.use_certificate(cert)
            data.ssl_conn.use_privatekey(key)

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        if flow.response is None:
            return
        route = self._route(flow.client_conn)
        if flow.server_conn.connected:  # a real answer from upstream: no need to check again
            route.reachable_until = time.monotonic() + REACHABLE_FOR
        if flow.response.status_code == 401 and INJECTED in flow.metadata:
            route.credentials.invalidate()

    def client_disconnected(self, client: connection.Client) -> None:
        self._own_auth.pop(client.id, None)
        if self._clients is not None:
            self._clients.forget(client)


def _reason(error: OSError) -> str:
    """Why a connection failed, in the system's words ("Connection refused"); asyncio's own
    message ("Connect call failed ('127.0.0.1', 6443)") repeats the address."""
    if isinstance(error, TimeoutError):
        return "timeout"
    if error.errno:
        return os.strerror(error.errno)
    return str(error) or type(error).__name__
