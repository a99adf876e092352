"""The lab's components as data: binary, command line, ports, dependencies, readiness probe.

Command lines are templates filled from a `Layout` (folders and ports of one lab). They follow
what kubeadm gives a real cluster, within what a control plane on 127.0.0.1 needs: certificate
authentication for every component, Node+RBAC authorization with NodeRestriction, leader
election on, per-controller service-account credentials, an audit log (Metadata level unless
`lab up --audit-level` says another), and the hollow kubelet's server on a free port (it binds
all interfaces, and without an explicit port a second lab, or anything else on 10250, makes it
die).

One table serves every release: an argument that only some releases take is an `Only`, with
the first release that takes it and the first that no longer does, and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from k8s_wiretap.kube.release import Release

__all__ = [
    "AUDIT_WEBHOOK_FILE",
    "CBOR_ENV",
    "CBOR_SINCE",
    "COMPONENTS",
    "DEFAULT",
    "NODE_NAME",
    "ORDER",
    "PROXIED",
    "SERVICE_CIDR",
    "Component",
    "Only",
    "audit_webhook_args",
    "cbor_args",
    "requires",
    "resolve",
]

NODE_NAME = "node-1"
SERVICE_CIDR = "10.0.0.0/24"
SERVICE_IP = "10.0.0.1"  # the `kubernetes` Service: first address of SERVICE_CIDR


ALWAYS = Release(1, 0)  # an Only without `since`


@dataclass(frozen=True)
class Only:
    """An argument only releases from `since` on, and before `until`, take."""

    arg: str
    why: str
    since: Release = ALWAYS
    until: Release | None = None

    def applies(self, release: Release) -> bool:
        return self.since <= release and (self.until is None or release < self.until)


@dataclass(frozen=True)
class Component:
    """One process of the lab.

    `probe` names how readiness is checked (see `readiness.py`): `etcd` (its /health),
    `apiserver` (/readyz with the admin certificate), `healthz` (the component's own secure
    /healthz on `port`), `node` (the Node reports Ready), `wiretap` (/readyz through the
    proxy's admin listener). The binary `python` is this Python, running k8s-wiretap.
    """

    name: str
    binary: str
    args: tuple[str | Only, ...]
    probe: str
    requires: tuple[str, ...] = ()
    port: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    proxied: bool = False  # an API client that `--via-proxy` sends through the wiretap

    def arguments(self, release: Release) -> tuple[str, ...]:
        """The argument templates `release` takes."""
        return tuple(
            arg if isinstance(arg, str) else arg.arg
            for arg in self.args
            if isinstance(arg, str) or arg.applies(release)
        )


# Insecure serving (plain HTTP, no authentication) is gone from both by 1.24: 1.20 still
# serves it on 10251/10252 unless told `--port=0`; current releases refuse the flag.
_NO_INSECURE_PORT = "1.20 serves plain HTTP on a fixed port without it; 1.24 and later lack it"
# A leader that cannot renew its lease for `--leader-elect-renew-deadline` (10 s) exits, as it
# should; a current API server takes longer than that to come back on 2 cores, so `lab restart
# apiserver` killed both. 40 s lets them ride it out and show their informers re-listing. The
# leader still renews every 2 s (the retry period): the lease traffic looks the same.
_SLOW_RESTART = "a current API server restarts slower than the default 10 s renew deadline"
_LEADER_ELECTION = (
    "--leader-elect=true",
    Only("--leader-elect-lease-duration=60s", _SLOW_RESTART, since=Release(1, 30)),
    Only("--leader-elect-renew-deadline=40s", _SLOW_RESTART, since=Release(1, 30)),
)


_CLIENT_KUBECONFIG = (
    "--kubeconfig={kubeconfigs}/{name}.kubeconfig",
    "--authentication-kubeconfig={kubeconfigs}/{name}.kubeconfig",
    "--authorization-kubeconfig={kubeconfigs}/{name}.kubeconfig",
)

COMPONENTS: dict[str, Component] = {
    c.name: c
    for c in (
        Component(
            name="etcd",
            binary="etcd",
            probe="etcd",
            port="etcd",
            args=(
                "--name=lab",
                "--data-dir={dir}/etcd",
                "--listen-client-urls=http://127.0.0.1:{port_etcd}",
                "--advertise-client-urls=http://127.0.0.1:{port_etcd}",
                "--listen-peer-urls=http://127.0.0.1:{port_etcd_peer}",
                "--initial-advertise-peer-urls=http://127.0.0.1:{port_etcd_peer}",
                "--initial-cluster=lab=http://127.0.0.1:{port_etcd_peer}",
            ),
        ),
        Component(
            name="apiserver",
            binary="kube-apiserver",
            probe="apiserver",
            port="apiserver",
            requires=("etcd",),
            args=(
                "--etcd-servers=http://127.0.0.1:{port_etcd}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                "--secure-port={port_apiserver}",
                "--tls-cert-file={pki}/apiserver.crt",
                "--tls-private-key-file={pki}/apiserver.key",
                "--client-ca-file={pki}/ca.crt",
                "--kubelet-client-certificate={pki}/apiserver-kubelet-client.crt",
                "--kubelet-client-key={pki}/apiserver-kubelet-client.key",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                "--service-account-key-file={pki}/sa.pub",
                "--service-account-signing-key-file={pki}/sa.key",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                Only(
                    "--endpoint-reconciler-type=none",
                    "current API servers refuse to start advertising a loopback address with "
                    "an endpoint reconciler (1.20 only logged it); the lab's `kubernetes` "
                    "Service gets no endpoints either way",
                    since=Release(1, 30),
                ),
                "--authorization-mode=Node,RBAC",
                "--enable-admission-plugins=NodeRestriction",
                "--allow-privileged=true",
                "--audit-policy-file={dir}/audit-policy.yaml",
                "--audit-log-path={logs}/audit.log",
                "--audit-log-maxsize=200",
                "--profiling=false",
            ),
        ),
        Component(
            name="wiretap",
            binary="python",
            probe="wiretap",
            requires=("apiserver",),
            args=(
                "-m",
                "k8s_wiretap",
                "proxy",
                "--routes={dir}/wiretap/routes.json",
                "--confdir={dir}/wiretap",
                "--record={record}",
                "--overwrite",  # every `lab up` starts from scratch, its recording too
                "--etcd=http://127.0.0.1:{port_etcd}",  # what lands in etcd, recorded too
                "--no-tui",
            ),
        ),
        Component(
            name="controller-manager",
            binary="kube-controller-manager",
            probe="healthz",
            port="controller_manager",
            requires=("apiserver",),
            proxied=True,
            args=(
                *_CLIENT_KUBECONFIG,
                "--bind-address=127.0.0.1",
                "--secure-port={port_controller_manager}",
                Only("--port=0", _NO_INSECURE_PORT, until=Release(1, 24)),
                *_LEADER_ELECTION,
                "--use-service-account-credentials=true",
                "--service-account-private-key-file={pki}/sa.key",
                "--root-ca-file={pki}/ca.crt",
                "--cluster-signing-cert-file={pki}/ca.crt",
                "--cluster-signing-key-file={pki}/ca.key",
                "--controllers=*,-nodeipam",
                "--profiling=false",
            ),
        ),
        Component(
            name="scheduler",
            binary="kube-scheduler",
            probe="healthz",
            port="scheduler",
            requires=("apiserver",),
            proxied=True,
            args=(
                *_CLIENT_KUBECONFIG,
                "--bind-address=127.0.0.1",
                "--secure-port={port_scheduler}",
                Only("--port=0", _NO_INSECURE_PORT, until=Release(1, 24)),
                *_LEADER_ELECTION,
                "--profiling=false",
            ),
        ),
        Component(
            name="kubelet",
            binary="kubemark",
            probe="node",
            requires=("apiserver",),
            proxied=True,
            env={"TMPDIR": "{runtime}"},
            args=(
                "--morph=kubelet",
                f"--name={NODE_NAME}",
                "--kubeconfig={kubeconfigs}/{name}.kubeconfig",
                "--kubelet-port={port_kubelet}",
                "--kubelet-read-only-port=0",
                Only(
                    "--use-host-image-service=false",
                    "current kubemark pulls images through the host's containerd socket "
                    "unless told to use its fake image service; 1.20's has only the fake one "
                    "and no such flag",
                    since=Release(1, 30),
                ),
            ),
        ),
    )
}

ORDER = tuple(COMPONENTS)
DEFAULT = tuple(name for name in ORDER if name != "wiretap")
PROXIED = tuple(name for name in ORDER if COMPONENTS[name].proxied)
PORTS = (
    "etcd",
    "etcd_peer",
    "apiserver",
    "controller_manager",
    "scheduler",
    "kubelet",
    *(f"wiretap_{name.replace('-', '_')}" for name in ("admin", *PROXIED)),
)


# `lab up --cbor`: CBOR on the wire, behind gates that are alpha and off in every release from 1.32
# to the default one (apiserver pkg/features/kube_features.go CBORServingAndStorage, client-go
# features/known_features.go ClientsAllowCBOR and ClientsPreferCBOR). The kube binaries register
# client-go's gates with their own --feature-gates (kubernetes pkg/features, clientAdapter), so
# client-go there ignores KUBE_FEATURE_* variables; kubectl, which has no such flag, reads them
# (client-go features/envvar.go). Typed clients ask for protobuf whatever the gates say
# (--kube-api-content-type): the controller manager and scheduler are
# told CBOR. Told so, the controller manager's ClusterTrustBundle publisher asks for its
# group's discovery (`GET /apis/certificates.k8s.io/v1`) in CBOR, gets it, cannot read it
# ("discovery failed for ClusterTrustBundle: yaml: invalid trailing UTF-8 octet") and takes
# the controller manager down: it is left out. kubemark (the hollow kubelet) has neither
# --feature-gates nor another way to turn on ClientsAllowCBOR, and without it client-go turns
# `application/cbor` back into JSON: it keeps protobuf.
CBOR_SINCE = Release(1, 32)
_CLIENT_GATES = "ClientsAllowCBOR=true,ClientsPreferCBOR=true"
_CBOR_ARGS: dict[str, tuple[str, ...]] = {
    "apiserver": (f"--feature-gates=CBORServingAndStorage=true,{_CLIENT_GATES}",),
    "controller-manager": (
        f"--feature-gates={_CLIENT_GATES}",
        "--kube-api-content-type=application/cbor",
        "--controllers=-kube-apiserver-serving-clustertrustbundle-publisher-controller",
    ),
    "scheduler": (f"--feature-gates={_CLIENT_GATES}", "--kube-api-content-type=application/cbor"),
}
CBOR_ENV = {"KUBE_FEATURE_ClientsAllowCBOR": "true", "KUBE_FEATURE_ClientsPreferCBOR": "true"}


def cbor_args(name: str, release: Release) -> tuple[str, ...]:
    """The arguments that turn CBOR on for component `name`; ValueError before 1.32."""
    if release < CBOR_SINCE:
        raise ValueError(
            f"Kubernetes {release} has no CBOR (its gates came in 1.32): "
            "--cbor needs --kube-version 1.32 or later"
        )
    return _CBOR_ARGS.get(name, ())


# `lab up --audit-webhook FILE`: the API server posts its audit events to the webhook the
# kubeconfig FILE names (`k8s-wiretap audit-webhook` writes one; the lab keeps a copy in its
# folder, which `lab restart apiserver` reads again), beside its log. Batches go every
# second, not every 30 s (the default), so that the receiver's recording is live. The
# flags are the same in 1.20 and the default release (`kube-apiserver --help`; apiserver
# pkg/server/options/audit.go).
AUDIT_WEBHOOK_FILE = "audit-webhook.kubeconfig"


def audit_webhook_args(kubeconfig: str) -> tuple[str, ...]:
    """The API server's arguments that post its audit events to the webhook `kubeconfig`."""
    return (f"--audit-webhook-config-file={kubeconfig}", "--audit-webhook-batch-max-wait=1s")


def requires(name: str, components: tuple[str, ...]) -> tuple[str, ...]:
    """What `name` must wait for: a proxied client also waits for the wiretap, if it runs."""
    component = COMPONENTS[name]
    extra = ("wiretap",) if component.proxied and "wiretap" in components else ()
    return component.requires + extra


def resolve(names: list[str] | None, via_proxy: bool = False) -> tuple[str, ...]:
    """The components to run, dependencies added, in start order; ValueError on unknown.

    `via_proxy` adds the wiretap, through which every API client of the lab then talks.
    """
    wanted = set(names or DEFAULT)
    unknown = wanted - set(DEFAULT)
    if unknown:
        raise ValueError(
            f"unknown component {', '.join(sorted(unknown))} (known: {', '.join(DEFAULT)})"
        )
    if via_proxy:
        wanted.add("wiretap")
    pending = list(wanted)
    while pending:
        for dependency in COMPONENTS[pending.pop()].requires:
            if dependency not in wanted:
                wanted.add(dependency)
                pending.append(dependency)
    return tuple(name for name in ORDER if name in wanted)
