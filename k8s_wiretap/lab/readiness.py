"""Is a lab component ready? One probe per kind named in `components.py`.

Each probe returns None when ready, else a short reason (kept for the timeout message).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from k8s_wiretap.kube.client import ApiClient
from k8s_wiretap.lab.components import NODE_NAME, Component
from k8s_wiretap.lab.layout import Layout

__all__ = ["admin_client", "default_service_account_ready", "probe"]


def admin_client(layout: Layout) -> ApiClient:
    pki = layout.pki
    return ApiClient(layout.server, pki / "ca.crt", pki / "admin.crt", pki / "admin.key")


def _get(client: ApiClient, path: str) -> tuple[int, Any]:
    response = client.get(path)
    try:
        return response.status, response.json()
    except ValueError:
        return response.status, response.body.decode(errors="replace")


def _etcd(layout: Layout, component: Component) -> str | None:
    status, body = _get(ApiClient(f"http://127.0.0.1:{layout.ports['etcd']}"), "/health")
    healthy = isinstance(body, dict) and body.get("health") == "true"
    return None if status == 200 and healthy else f"/health: {status} {body}"


def _apiserver(layout: Layout, component: Component) -> str | None:
    status, body = _get(admin_client(layout), "/readyz")
    return None if status == 200 else f"/readyz: {status} {str(body)[-200:]}"


def _healthz(layout: Layout, component: Component) -> str | None:
    assert component.port is not None
    client = ApiClient(f"https://127.0.0.1:{layout.ports[component.port]}")
    status, body = _get(client, "/healthz")
    return None if status == 200 else f"/healthz: {status} {body}"


def _node(layout: Layout, component: Component) -> str | None:
    status, body = _get(admin_client(layout), f"/api/v1/nodes/{NODE_NAME}")
    if status != 200:
        return f"node {NODE_NAME} not registered yet ({status})"
    conditions = body.get("status", {}).get("conditions", [])
    ready = [c for c in conditions if c.get("type") == "Ready"]
    if ready and ready[0].get("status") == "True":
        return None
    return f"node {NODE_NAME} not Ready: {ready[0].get('message') if ready else 'no condition'}"


def _wiretap(layout: Layout, component: Component) -> str | None:
    listener = f"https://127.0.0.1:{layout.proxy_port('admin')}"
    ca = layout.wiretap / "mitmproxy-ca-cert.pem"
    status, body = _get(ApiClient(listener, ca), "/readyz")
    return None if status == 200 else f"/readyz through the wiretap: {status} {body}"


PROBES: dict[str, Callable[[Layout, Component], str | None]] = {
    "wiretap": _wiretap,
    "etcd": _etcd,
    "apiserver": _apiserver,
    "healthz": _healthz,
    "node": _node,
}


def probe(layout: Layout, component: Component) -> str | None:
    """None when `component` is ready, else why not (connection errors included)."""
    try:
        return PROBES[component.probe](layout, component)
    except OSError as error:
        return f"{type(error).__name__}: {error}"


def default_service_account_ready(layout: Layout, token_secret: bool) -> str | None:
    """Pods need the `default` ServiceAccount to be admitted, and in releases that still give
    each one a token Secret (1.20), that Secret too; later ones mint tokens on request."""
    try:
        status, body = _get(
            admin_client(layout), "/api/v1/namespaces/default/serviceaccounts/default"
        )
    except OSError as error:
        return str(error)
    if status != 200:
        return f"no ServiceAccount default/default yet ({status})"
    if token_secret and not body.get("secrets"):
        return "ServiceAccount default/default has no token yet"
    return None
