"""Which component sent a request, from its User-Agent (client-go rest/config.go).

client-go's default agent is `<binary>/<version> (<os>/<arch>) kubernetes/<commit>`;
`rest.AddUserAgent` appends `/<name>`, which the controller manager uses for each controller
(`.../deployment-controller`, or `.../system:serviceaccount:kube-system:<controller>` with
service-account credentials) and others for a role (`/leader-election`, `/scheduler`).
"""

from __future__ import annotations

import re

__all__ = ["AGENTS", "component_of", "parse_agent"]

# First word of the User-Agent → the component's name in explanations.
AGENTS: dict[str, str] = {
    "kubectl": "kubectl",
    "kubectl-dispatcher": "kubectl",
    "kubelet": "kubelet",
    "kubemark": "kubelet",  # the hollow kubelet: the real kubelet code under kubemark's name
    "kube-controller-manager": "controller-manager",
    "kube-scheduler": "scheduler",
    "kube-proxy": "kube-proxy",
    "kube-apiserver": "apiserver",
    "cloud-controller-manager": "cloud-controller-manager",
    "CoreDNS": "coredns",
    "k8s-wiretap": "k8s-wiretap",
}
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:kube-system:"
_AGENT = re.compile(
    r"^(?P<binary>[^/\s]+)(?:/(?P<version>\S+))?(?:\s+\((?P<platform>[^)]*)\))?"
    r"(?:\s+kubernetes/(?P<commit>[0-9a-f]+)(?:/(?P<role>.+))?)?"
)


def parse_agent(agent: str) -> tuple[str, str]:
    """(binary, role) of a client-go User-Agent; role is "" when none was appended."""
    match = _AGENT.match(agent.strip())
    if not match:
        return "", ""
    role = match.group("role") or ""
    return match.group("binary"), role.removeprefix(SERVICE_ACCOUNT_PREFIX)


def component_of(agent: str, listener: str = "") -> str:
    """`controller-manager/deployment-controller`, `kubectl`, `kubelet`, ...

    A listener named after a component (the lab's per-component proxy listeners) names the
    component when the agent is unknown.
    """
    binary, role = parse_agent(agent)
    component = AGENTS.get(binary)
    if component is None:
        component = listener if listener and listener != "default" else (binary or "unknown")
    return f"{component}/{role}" if role and role not in (binary, component) else component
