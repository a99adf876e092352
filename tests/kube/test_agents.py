"""Components named from their User-Agents, as client-go builds them."""

from __future__ import annotations

import pytest

from k8s_wiretap.kube.agents import component_of, parse_agent

UA = "(linux/amd64) kubernetes/faecb19"


@pytest.mark.parametrize(
    ("agent", "listener", "component"),
    [
        (
            f"kube-controller-manager/v1.20.2 {UA}/deployment-controller",
            "",
            "controller-manager/deployment-controller",
        ),
        (
            f"kube-controller-manager/v1.20.2 {UA}/system:serviceaccount:kube-system:"
            "replicaset-controller",
            "",
            "controller-manager/replicaset-controller",
        ),
        (f"kube-scheduler/v1.20.2 {UA}/leader-election", "", "scheduler/leader-election"),
        (f"kubemark/v1.20.2 {UA}", "", "kubelet"),
        (f"kube-scheduler/v1.20.2 {UA}/scheduler", "", "scheduler"),
        ("kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07", "", "kubectl"),
        ("kubectl-dispatcher/v1.0 (linux/amd64)", "", "kubectl"),
        ("Go-http-client/2.0", "kubelet", "kubelet"),
        ("", "default", "unknown"),
    ],
)
def test_components(agent: str, listener: str, component: str) -> None:
    assert component_of(agent, listener) == component


def test_parse_agent() -> None:
    assert parse_agent(f"kube-scheduler/v1.20.2 {UA}/scheduler") == ("kube-scheduler", "scheduler")
