"""Which components run, in which order."""

from __future__ import annotations

import pytest

from k8s_wiretap.kube.release import CURRENT
from k8s_wiretap.lab.components import COMPONENTS, DEFAULT, resolve
from k8s_wiretap.lab.lab import _levels
from k8s_wiretap.lab.releases import DEBIAN_RELEASE


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
        assert "--port=0" in COMPONENTS[name].arguments(DEBIAN_RELEASE)
        # gone with insecure serving itself: the flag would be refused
        assert "--port=0" not in COMPONENTS[name].arguments(CURRENT)
    for release in (DEBIAN_RELEASE, CURRENT):
        assert "--kubelet-read-only-port=0" in COMPONENTS["kubelet"].arguments(release)


def test_the_current_hollow_kubelet_uses_its_fake_image_service() -> None:
    flag = "--use-host-image-service=false"
    assert flag in COMPONENTS["kubelet"].arguments(CURRENT)
    assert flag not in COMPONENTS["kubelet"].arguments(DEBIAN_RELEASE)


def test_both_releases_share_everything_else() -> None:
    for name, component in COMPONENTS.items():
        old, new = component.arguments(DEBIAN_RELEASE), component.arguments(CURRENT)
        differing = set(old) ^ set(new)
        assert differing <= {
            "--port=0",
            "--use-host-image-service=false",
            "--endpoint-reconciler-type=none",
            "--leader-elect-lease-duration=60s",
            "--leader-elect-renew-deadline=40s",
        }, name
