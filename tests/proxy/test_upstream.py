"""The upstream addon's decisions on mitmproxy's own test flows: the Host check, which
credential each request and connection gets, the 503 Status, when reachability is checked.

No lab: the API server is a listening socket (the reachability check is a TCP connect) or a
port nobody listens on; the flows are mitmproxy's `tflow`s on the route's listener.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from cryptography import x509
from mitmproxy import connection, http, options, tls
from mitmproxy.proxy import context, server_hooks
from mitmproxy.proxy.mode_specs import ProxyMode
from mitmproxy.test import tflow
from OpenSSL import SSL

from k8s_wiretap.kube.kubeconfig import ClusterAccess, ExecConfig
from k8s_wiretap.proxy.routes import Route
from k8s_wiretap.proxy.server import free_port
from k8s_wiretap.proxy.upstream import INJECTED, Upstream
from k8s_wiretap.tls import Identity, new_authority

LISTEN = 8001


@pytest.fixture
def api_server() -> Iterator[int]:
    """A port that accepts TCP connections, as a live API server's does."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield listener.getsockname()[1]


@pytest.fixture(scope="module")
def admin() -> Identity:
    return new_authority("test-ca").issue("kubernetes-admin", ["system:masters"])


def route(port: int, **access: Any) -> Route:
    return Route(
        "default", "127.0.0.1", LISTEN, ClusterAccess("lab", f"https://127.0.0.1:{port}", **access)
    )


def client_of(listener: Route) -> connection.Client:
    client = tflow.tclient_conn()
    client.proxy_mode = ProxyMode.parse(listener.mode)
    return client


def api_request(
    client: connection.Client, host: str = f"127.0.0.1:{LISTEN}", **headers: str
) -> http.HTTPFlow:
    flow = tflow.tflow(client_conn=client)
    url = f"http://127.0.0.1:{LISTEN}/api/v1/namespaces/default/pods"
    fields = [(name.encode(), value.encode()) for name, value in headers.items()]
    flow.request = http.Request.make("GET", url, b"", fields)
    flow.request.headers["Host"] = host  # as the client sent it (keep_host_header)
    return flow


def send(upstream: Upstream, flow: http.HTTPFlow) -> None:
    asyncio.run(upstream.request(flow))


def status_of(flow: http.HTTPFlow) -> dict[str, Any]:
    assert flow.response is not None
    assert flow.response.headers["content-type"] == "application/json"
    status: dict[str, Any] = json.loads(flow.response.content or b"")
    assert status["kind"] == "Status" and status["code"] == flow.response.status_code
    return status


def tls_start_server(upstream: Upstream, client: connection.Client) -> SSL.Connection:
    """mitmproxy's tls_start_server, after its own TLS set-up: the upstream connection."""
    ssl_conn = SSL.Connection(SSL.Context(SSL.TLS_CLIENT_METHOD))
    data = tls.TlsData(tflow.tserver_conn(), context.Context(client, options.Options()), ssl_conn)
    upstream.tls_start_server(data)
    return ssl_conn


def presented(ssl_conn: SSL.Connection) -> str | None:
    """The CN of the client certificate the upstream connection will present, if any."""
    cert = ssl_conn.get_certificate()
    if cert is None:
        return None
    names = cert.to_cryptography().subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)
    return str(names[0].value)


# -- the Host check -------------------------------------------------------------------------
@pytest.mark.parametrize("host", ["attacker.example", "attacker.example:8001", "10.0.0.1:8001"])
def test_a_host_that_is_not_loopback_gets_a_403_status_and_no_credentials(
    api_server: int, host: str
) -> None:
    listener = route(api_server, token="route-token")
    flow = api_request(client_of(listener), host)
    send(Upstream([listener]), flow)
    assert flow.response is not None and flow.response.status_code == 403
    status = status_of(flow)
    assert status["reason"] == "Forbidden" and "not loopback" in status["message"]
    assert "authorization" not in flow.request.headers and INJECTED not in flow.metadata


@pytest.mark.parametrize("host", ["127.0.0.1:8001", "localhost:8001", "localhost", "[::1]:8001"])
def test_loopback_hosts_pass_and_get_the_api_servers_host(api_server: int, host: str) -> None:
    listener = route(api_server)
    flow = api_request(client_of(listener), host)
    send(Upstream([listener]), flow)
    assert flow.response is None
    assert flow.request.host_header == f"127.0.0.1:{api_server}"  # as the API server gets it


def test_accept_hosts_changes_the_check(api_server: int) -> None:
    listener = route(api_server)
    upstream = Upstream([listener], accept_hosts=r"^wiretap\.internal(:\d+)?$")
    allowed = api_request(client_of(listener), "wiretap.internal:8001")
    send(upstream, allowed)
    assert allowed.response is None
    refused = api_request(client_of(listener), "127.0.0.1:8001")
    send(upstream, refused)
    assert refused.response is not None and refused.response.status_code == 403


# -- credentials ----------------------------------------------------------------------------
def test_a_request_without_authorization_gets_the_routes_token(api_server: int) -> None:
    listener = route(api_server, token="route-token", user="admin")
    flow = api_request(client_of(listener))
    send(Upstream([listener]), flow)
    assert flow.response is None
    assert flow.request.headers["authorization"] == "Bearer route-token"
    assert flow.metadata[INJECTED] == "admin [bearer token]"


def test_a_request_with_its_own_authorization_keeps_it(api_server: int) -> None:
    listener = route(api_server, token="route-token")
    flow = api_request(client_of(listener), Authorization="Bearer the-clients-own")
    send(Upstream([listener]), flow)
    assert flow.response is None
    assert flow.request.headers["authorization"] == "Bearer the-clients-own"
    assert INJECTED not in flow.metadata


def test_the_first_request_of_a_connection_decides_its_client_certificate(
    api_server: int, admin: Identity
) -> None:
    """A connection whose first request carries no Authorization presents the route's
    certificate upstream; one whose first request brings its own does not (the API server
    would authenticate the certificate first), even if later requests bring none."""
    listener = route(api_server, client_cert_pem=admin.cert_pem, client_key_pem=admin.key_pem)
    upstream = Upstream([listener])

    plain = client_of(listener)
    flow = api_request(plain)
    send(upstream, flow)
    assert flow.metadata[INJECTED] == "kubernetes-admin (system:masters) [client certificate]"
    assert "authorization" not in flow.request.headers  # a certificate, not a header
    assert presented(tls_start_server(upstream, plain)) == "kubernetes-admin"

    own = client_of(listener)
    send(upstream, api_request(own, Authorization="Bearer sa-token"))
    later = api_request(own)  # no Authorization, on the same connection
    send(upstream, later)
    assert presented(tls_start_server(upstream, own)) is None

    upstream.client_disconnected(own)  # a new connection decides afresh
    send(upstream, api_request(own))
    assert presented(tls_start_server(upstream, own)) == "kubernetes-admin"


def test_a_failing_exec_plugin_gets_a_503_status(api_server: int) -> None:
    listener = route(api_server, exec=ExecConfig(command="false"))
    flow = api_request(client_of(listener))
    send(Upstream([listener]), flow)
    assert flow.response is not None and flow.response.status_code == 503
    assert "k8s-wiretap: no credentials: exec plugin false exited 1" in status_of(flow)["message"]


def test_a_401_for_added_credentials_makes_them_be_fetched_again(api_server: int) -> None:
    listener = route(api_server, token="route-token")
    upstream = Upstream([listener])
    send(upstream, api_request(client_of(listener)))
    assert listener.credentials.cached() is not None
    own = api_request(client_of(listener), Authorization="Bearer the-clients-own")
    send(upstream, own)
    own.response = http.Response.make(401, b"")
    upstream.responseheaders(own)
    assert listener.credentials.cached() is not None  # the client's own was refused: kept
    added = api_request(client_of(listener))
    send(upstream, added)
    added.response = http.Response.make(401, b"")
    upstream.responseheaders(added)
    assert listener.credentials.cached() is None  # the next request obtains them again


# -- the API server unreachable ---------------------------------------------------------------
def test_an_unreachable_api_server_gets_a_503_status_every_time() -> None:
    dead = free_port()
    listener = route(dead)
    upstream = Upstream([listener])
    for _ in range(2):
        flow = api_request(client_of(listener))
        send(upstream, flow)
        assert flow.response is not None and flow.response.status_code == 503
        status = status_of(flow)
        assert status["reason"] == "ServiceUnavailable"
        assert status["message"] == (
            f"k8s-wiretap: API server https://127.0.0.1:{dead} is unreachable: Connection refused"
        )


def test_reachability_is_checked_again_once_an_upstream_connection_closes() -> None:
    listener_socket = socket.socket()
    listener_socket.bind(("127.0.0.1", 0))
    listener_socket.listen(16)
    port = listener_socket.getsockname()[1]
    listener = route(port)
    upstream = Upstream([listener])
    client = client_of(listener)
    first = api_request(client)
    send(upstream, first)
    assert first.response is None
    listener_socket.close()  # the API server dies
    within_grace = api_request(client)
    send(upstream, within_grace)
    assert within_grace.response is None  # answered recently: not checked (no handshake)
    upstream.server_disconnected(
        server_hooks.ServerConnectionHookData(tflow.tserver_conn(), client)
    )
    after = api_request(client)
    send(upstream, after)
    assert after.response is not None and after.response.status_code == 503


def test_an_answer_from_upstream_counts_as_reachable(api_server: int) -> None:
    listener = route(api_server)
    upstream = Upstream([listener])
    flow = api_request(client_of(listener))
    flow.response = http.Response.make(200, b"{}")
    flow.server_conn = tflow.tserver_conn()
    flow.server_conn.state = connection.ConnectionState.OPEN
    assert listener.reachable_until == 0.0
    upstream.responseheaders(flow)
    assert listener.reachable_until > 0.0
    made = api_request(client_of(listener))  # a response an addon made: no server answered
    made.response = http.Response.make(503, b"{}")
    listener.reachable_until = 0.0
    upstream.responseheaders(made)
    assert listener.reachable_until == 0.0


def test_tls_server_name_is_the_upstream_sni(api_server: int) -> None:
    listener = route(api_server, tls_server_name="kubernetes.default.svc")
    server = tflow.tserver_conn()
    Upstream([listener]).server_connect(
        server_hooks.ServerConnectionHookData(server, client_of(listener))
    )
    assert server.sni == "kubernetes.default.svc"
