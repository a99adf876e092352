"""A route: one proxy listener, the API server behind it, and the identity it uses there.

`k8s-wiretap proxy` has one route; `lab up --via-proxy` has one per component, so that each
component keeps its own identity upstream.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from k8s_wiretap.kube.credentials import CredentialSource
from k8s_wiretap.kube.kubeconfig import ClusterAccess

__all__ = ["Route", "is_loopback"]


@dataclass
class Route:
    name: str
    host: str
    port: int
    access: ClusterAccess

    def __post_init__(self) -> None:
        self.credentials = CredentialSource(self.access)
        self.reachable_until = 0.0  # monotonic time until which upstream counts as reachable
        # Other machines can reach the listener (a wildcard address included): clients from
        # them must authenticate (clientauth.py) before credentials are added for them.
        self.remote = not is_loopback(self.host)

    @property
    def address(self) -> str:
        """HOST:PORT of the listener, an IPv6 host in brackets."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def upstream(self) -> tuple[str, int]:
        url = urlsplit(self.access.server)
        default = 443 if url.scheme == "https" else 80
        return url.hostname or "127.0.0.1", url.port or default

    @property
    def mode(self) -> str:
        """The mitmproxy mode spec of this listener."""
        host, port = self.upstream
        scheme = urlsplit(self.access.server).scheme or "https"
        bracketed = f"[{host}]" if ":" in host else host
        return f"reverse:{scheme}://{bracketed}:{port}@{self.host}:{self.port}"


def is_loopback(host: str) -> bool:
    """Whether every address `host` names is a loopback one; a name that does not resolve
    counts as not loopback (mitmproxy then fails to listen on it and says so)."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError):
        return False
    addresses = {str(info[4][0]).split("%")[0] for info in infos}
    return all(ipaddress.ip_address(address).is_loopback for address in addresses)
