"""`lab up --via-proxy`: every API client of the lab talks through one wiretap proxy.

The proxy gets one listener (route) per client — admin, controller-manager, scheduler,
kubelet — and forwards each with that client's own certificate, so the API server sees the
same users as without the proxy (a node authorised as `system:node:node-1`, not as admin),
and the whole control plane's traffic, protobuf included, lands in one recording. Each client's
kubeconfig then points at its listener and trusts the proxy's CA; the client keeps its
certificate there, which the proxy never asks for (it presents its own copy upstream).
"""

from __future__ import annotations

import json

from k8s_wiretap.kube.kubeconfig import write_kubeconfig
from k8s_wiretap.lab.layout import Layout
from k8s_wiretap.tls import Authority, Identity

__all__ = ["write_wiretap_routes"]


def write_wiretap_routes(layout: Layout, ca: Authority, identities: dict[str, Identity]) -> None:
    from k8s_wiretap.proxy.server import proxy_ca_pem  # mitmproxy only when needed

    proxy_ca = proxy_ca_pem(layout.wiretap)
    routes = []
    for name, identity in identities.items():
        direct = layout.direct_kubeconfig(name)
        write_kubeconfig(
            direct, server=layout.server, ca_pem=ca.cert_pem, client=identity, user=name
        )
        listen = f"127.0.0.1:{layout.proxy_port(name)}"
        write_kubeconfig(
            layout.client_kubeconfig(name),
            server=f"https://{listen}",
            ca_pem=proxy_ca,
            client=identity,
            user=name,
        )
        routes.append({"name": name, "listen": listen, "kubeconfig": str(direct)})
    (layout.wiretap / "routes.json").write_text(json.dumps(routes, indent=2) + "\n")
