"""Which components run, in which order."""

from __future__ import annotations

import pytest

from k8s_wiretap.lab.components import COMPONENTS, DEFAULT, resolve
from k8s_wiretap.lab.lab import _levels


def test_apiserver_alone_brings_etcd() -> None:
    assert resolve(["apiserver"]) == ("etcd", "apiserver")


def test_kubelet_brings_its_dependencies_in_start_order() -> None:
    assert resolve(["kubelet"]) == ("etcd", "apiserver", "kubelet")


def test_default_is_everything_but_the_wiretap() -> None:
    expected = ("etcd", "apiserver", "controller-manager", "scheduler", "kubelet")
    assert resolve(None) == DEFAULT == expected


def test_via_proxy_puts_the_wiretap_between_the_apiserver_and_its_clients() -> None:
    components = resolve(None, via_proxy=True)
    clients = ["controller-manager", "scheduler", "kubelet"]
    assert components == ("etcd", "apiserver", "wiretap", *clients)
    assert _levels(components) == [["etcd"], ["apiserver"], ["wiretap"], clients]


def test_unknown_component_is_named() -> None:
    with pytest.raises(ValueError, match="unknown component kube-proxy"):
        resolve(["kube-proxy"])
    with pytest.raises(ValueError, match="unknown component wiretap"):
        resolve(["wiretap"])  # it comes with --via-proxy, not on its own


def test_levels_start_clients_together_after_the_apiserver() -> None:
    clients = ["controller-manager", "scheduler", "kubelet"]
    assert _levels(DEFAULT) == [["etcd"], ["apiserver"], clients]


def test_components_never_serve_insecure_ports() -> None:
    for name in ("controller-manager", "scheduler"):
        assert "--port=0" in COMPONENTS[name].args
    assert "--kubelet-read-only-port=0" in COMPONENTS["kubelet"].args
