"""The lab's certificates and kubeconfigs, one identity per component as kubeadm issues them.

- admin: `kubernetes-admin`, group `system:masters` (DIR/kubeconfig: kubectl, tests)
- controller-manager: `system:kube-controller-manager`
- scheduler: `system:kube-scheduler`
- kubelet: `system:node:node-1`, group `system:nodes` (what the Node authorizer expects)
- apiserver: serving certificate for 127.0.0.1, localhost and the `kubernetes` Service names
- apiserver-kubelet-client: the API server's certificate towards kubelets (`system:masters`)
"""

from __future__ import annotations

from k8s_wiretap.kube.kubeconfig import write_kubeconfig
from k8s_wiretap.lab.components import NODE_NAME, SERVICE_IP
from k8s_wiretap.lab.layout import Layout
from k8s_wiretap.lab.wiretap import write_wiretap_routes
from k8s_wiretap.tls import Authority, new_authority, new_signing_key, write_private

__all__ = ["CLIENTS", "write_pki"]

CLIENTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "admin": ("kubernetes-admin", ("system:masters",)),
    "controller-manager": ("system:kube-controller-manager", ()),
    "scheduler": ("system:kube-scheduler", ()),
    "kubelet": (f"system:node:{NODE_NAME}", ("system:nodes",)),
}

SERVING_HOSTS = (
    "127.0.0.1",
    "localhost",
    SERVICE_IP,
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
)


def write_pki(layout: Layout) -> Authority:
    """Create the CA, every certificate, the service-account key and every kubeconfig."""
    ca = new_authority("k8s-wiretap-lab-ca")
    pki = layout.pki
    ca.identity.write(pki / "ca.crt", pki / "ca.key")
    ca.issue("kube-apiserver", hosts=SERVING_HOSTS, client=False).write(
        pki / "apiserver.crt", pki / "apiserver.key"
    )
    ca.issue("kube-apiserver-kubelet-client", ("system:masters",)).write(
        pki / "apiserver-kubelet-client.crt", pki / "apiserver-kubelet-client.key"
    )
    signing = new_signing_key()
    (pki / "sa.pub").write_bytes(signing.cert_pem)
    write_private(pki / "sa.key", signing.key_pem)
    identities = {}
    for name, (user, groups) in CLIENTS.items():
        identities[name] = ca.issue(user, groups)
        identities[name].write(pki / f"{name}.crt", pki / f"{name}.key")
    if layout.via_proxy:
        write_wiretap_routes(layout, ca, identities)
    else:
        for name, identity in identities.items():
            write_kubeconfig(
                layout.client_kubeconfig(name),
                server=layout.server,
                ca_pem=ca.cert_pem,
                client=identity,
                user=name,
            )
    return ca
