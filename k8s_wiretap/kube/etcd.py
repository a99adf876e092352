"""Where the API server keeps an object in etcd: `/registry/<prefix>/<namespace>/<name>`.

The prefix of a built-in resource is its plural, except for the resources whose storage
predates their names (pkg/kubeapiserver/default_storage_factory_builder.go,
`SpecialDefaultResourcePrefixes`, 1.20); resources of one cohabiting pair share storage
(events.k8s.io Events are core Events, extensions Deployments are apps Deployments). Custom
resources (and the aggregator's APIServices, the CRDs themselves) are kept under their group:
`/registry/<group>/<plural>/...` (apiextensions-apiserver's and kube-aggregator's REST
storage). `--etcd-prefix` moves `/registry`; the lab keeps the default.
"""

from __future__ import annotations

from k8s_wiretap.kube.refs import ObjectRef

__all__ = ["DEFAULT_PREFIX", "NOT_OBJECTS", "NOT_STORED", "SPECIAL_PREFIXES", "etcd_key"]

DEFAULT_PREFIX = "/registry"

# (group, resource) → prefix: SpecialDefaultResourcePrefixes.
SPECIAL_PREFIXES: dict[tuple[str, str], str] = {
    ("", "replicationcontrollers"): "controllers",
    ("", "endpoints"): "services/endpoints",
    ("", "nodes"): "minions",
    ("", "services"): "services/specs",
    ("extensions", "ingresses"): "ingress",
    ("networking.k8s.io", "ingresses"): "ingress",
    ("extensions", "podsecuritypolicies"): "podsecuritypolicy",
    ("policy", "podsecuritypolicies"): "podsecuritypolicy",
}
# Served but never stored: component statuses are probed live on every read
# (pkg/registry/core/componentstatus/rest.go). Create-only resources (bindings, reviews,
# token requests) store nothing under their own name either; they have no list verb.
NOT_STORED = frozenset({("", "componentstatuses")})

# Keys the API server writes for itself, which no API serves as objects: the service IP and
# node port allocation bitmaps (pkg/registry/core/service/{ipallocator,portallocator}, gone
# with 1.33's ServiceCIDR/IPAddress objects), the endpoint reconciler's leases
# (pkg/controlplane/reconcilers/lease.go; the lab runs its releases with `--endpoint-reconciler-type
# =none`) and, since 1.28, every API server's peer endpoint lease for the mixed-version proxy
# (pkg/controlplane/apiserver/peer.go, "/peerserverleases/"). Under DEFAULT_PREFIX.
NOT_OBJECTS = ("/ranges/", "/masterleases/", "/peerserverleases/")
# Groups whose resources are stored under the group's name (not built into kube-apiserver's
# own storage factory).
GROUP_PREFIXED = frozenset({"apiextensions.k8s.io", "apiregistration.k8s.io"})


def etcd_key(ref: ObjectRef, builtin: bool = True, prefix: str = DEFAULT_PREFIX) -> str | None:
    """The key of `ref` (None if such objects are not stored); `builtin=False` for a custom
    resource (served from a CRD)."""
    if (ref.group, ref.resource) in NOT_STORED:
        return None
    if not builtin or ref.group in GROUP_PREFIXED:
        base = f"{ref.group}/{ref.resource}"
    else:
        base = SPECIAL_PREFIXES.get((ref.group, ref.resource), ref.resource)
    where = f"{ref.namespace}/{ref.name}" if ref.namespace else ref.name
    return f"{prefix}/{base}/{where}"
