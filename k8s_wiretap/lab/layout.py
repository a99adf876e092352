"""Where one lab keeps everything, and the ports it was given.

DIR/lab.json            state: components, ports, processes (see state.py)
DIR/kubeconfig          admin kubeconfig (system:masters), the one users point kubectl at
DIR/kubeconfigs/*.kubeconfig   one per component, each with its own client certificate
DIR/pki/                CA, serving and client certificates, service-account key (keys 0600)
DIR/logs/<component>.log, DIR/logs/audit.log
DIR/etcd/               etcd's data
DIR/kubelet/            the hollow kubelet's TMPDIR (root folder, fake runtime socket)
DIR/bin/kubectl         the release's own kubectl, for releases that build one (`lab env`)
"""

from __future__ import annotations

import hashlib
import os
import socket
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from k8s_wiretap.kube.release import Release
from k8s_wiretap.lab.components import PORTS, Component

__all__ = ["Layout", "free_ports", "runtime_dir"]


def free_ports(names: tuple[str, ...] = PORTS) -> dict[str, int]:
    """One free TCP port per name, all distinct (sockets held open until all are picked)."""
    with ExitStack() as stack:
        ports = {}
        for name in names:
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind(("0.0.0.0", 0))
            ports[name] = sock.getsockname()[1]
        return ports


def runtime_dir(directory: Path) -> Path:
    """The short private folder a lab in `directory` uses for its sockets."""
    digest = hashlib.sha256(str(directory).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"k8s-wiretap-{os.getuid()}" / digest


@dataclass(frozen=True)
class Layout:
    dir: Path
    ports: dict[str, int]
    record: Path | None = None  # set when the lab runs through the wiretap (--via-proxy)

    @property
    def via_proxy(self) -> bool:
        return self.record is not None

    @property
    def wiretap(self) -> Path:
        return self.dir / "wiretap"

    def proxy_port(self, client: str) -> int:
        return self.ports[f"wiretap_{client.replace('-', '_')}"]

    def client_kubeconfig(self, client: str) -> Path:
        """The kubeconfig `client` (admin or a component) uses: through the wiretap if on."""
        return self.kubeconfig if client == "admin" else self.component_kubeconfig(client)

    def direct_kubeconfig(self, client: str) -> Path:
        """With the wiretap on: the kubeconfig its route for `client` uses upstream."""
        return self.kubeconfigs / f"{client}.direct.kubeconfig"

    @property
    def pki(self) -> Path:
        return self.dir / "pki"

    @property
    def logs(self) -> Path:
        return self.dir / "logs"

    @property
    def kubeconfigs(self) -> Path:
        return self.dir / "kubeconfigs"

    @property
    def kubeconfig(self) -> Path:
        return self.dir / "kubeconfig"

    @property
    def bin(self) -> Path:
        return self.dir / "bin"

    @property
    def runtime_dir(self) -> Path:
        return runtime_dir(self.dir)

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.ports['apiserver']}"

    def log(self, name: str) -> Path:
        return self.logs / f"{name}.log"

    def component_kubeconfig(self, name: str) -> Path:
        return self.kubeconfigs / f"{name}.kubeconfig"

    def _values(self, component: Component) -> dict[str, str]:
        values = {
            "dir": str(self.dir),
            "pki": str(self.pki),
            "logs": str(self.logs),
            "kubeconfigs": str(self.kubeconfigs),
            "runtime": str(self.runtime_dir),
            "record": str(self.record or ""),
            "name": component.name,
        }
        values.update({f"port_{name}": str(port) for name, port in self.ports.items()})
        return values

    def argv(
        self, component: Component, binary: Path, extra: list[str], release: Release
    ) -> list[str]:
        values = self._values(component)
        args = component.arguments(release)
        return [str(binary), *(arg.format(**values) for arg in args), *extra]

    def env(self, component: Component) -> dict[str, str]:
        values = self._values(component)
        return {key: value.format(**values) for key, value in component.env.items()}
