"""A route: one proxy listener, the API server behind it, and the identity it uses there.

`k8s-wiretap proxy` has one route; `lab up --via-proxy` has one per component, so that each
component keeps its own identity upstream.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from k8s_wiretap.kube.credentials import CredentialSource
from k8s_wiretap.kube.kubeconfig import ClusterAccess

__all__ = ["Route"]


@dataclass
class Route:
    name: str
    host: str
    port: int
    access: ClusterAccess

    def __post_init__(self) -> None:
        self.credentials = CredentialSource(self.access)
        self.reachable_until = 0.0  # monotonic time until which upstream counts as reachable

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
