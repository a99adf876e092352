"""The control plane's clients as data: what each one watches and writes, and why it exists.

Loaded from `data/controllers.yaml` (its header says how it is written and checked). A
client is named as the wiretap names it: `controller-manager/deployment-controller`,
`scheduler`, `kubelet`, ... (`agents.component_of`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from k8s_wiretap.kube import datafiles
from k8s_wiretap.kube.resources import api_groups

__all__ = [
    "CONTROLLERS_FILE",
    "Client",
    "Operation",
    "Reason",
    "client",
    "clients",
    "longest_delay",
    "third_party",
]

CONTROLLERS_FILE = datafiles.path("controllers.yaml")
ANY = "*"


@dataclass(frozen=True, slots=True)
class Operation:
    """`create apps/replicasets`, `update apps/deployments/status`, `delete *`."""

    verb: str
    group: str
    resource: str
    subresource: str = ""

    @classmethod
    def parse(cls, text: str) -> Operation:
        verb, _, target = text.partition(" ")
        return cls(verb, *_resource(target))

    def covers(self, verb: str, group: str, resource: str, subresource: str) -> bool:
        if self.verb != verb or self.subresource != subresource:
            return False
        return self.resource == ANY or (self.group, self.resource) == (group, resource)


def _resource(target: str) -> tuple[str, str, str]:
    """(group, resource, subresource) of `apps/deployments/status`, `pods`, `*/scale`."""
    parts = target.split("/")
    group = ""
    if parts[0] != ANY and len(parts) > 1 and parts[0] in api_groups():
        group, parts = parts[0], parts[1:]
    return group, parts[0], "/".join(parts[1:])


@dataclass(frozen=True, slots=True)
class Reason:
    """Why a client writes when no watch event set it off: a `timer` (a Lease renewed every
    2 s), its `start-up`, a periodic `resync`, or (found by the chains, not listed) a
    `retry` of a write that failed."""

    kind: str
    says: str
    writes: tuple[Operation, ...] = ()
    exchange: str | None = None  # a retry: the failed write it repeats
    unprompted: bool = False  # never a reaction, even when an event came just before
    about: str = ""  # only for an Event about an object of this kind (a Lease)

    def to_json(self) -> dict[str, str | None]:
        return {"kind": self.kind, "says": self.says, "exchange": self.exchange}

    def covers(
        self, verb: str, group: str, resource: str, subresource: str, about: str = ""
    ) -> bool:
        if self.about and self.about != about:
            return False
        for w in self.writes:  # noqa: SIM110 (a loop: asked of every write of a known client)
            if w.covers(verb, group, resource, subresource):
                return True
        return False


@dataclass(frozen=True, slots=True)
class Client:
    name: str
    component: str
    source: str
    does: str
    watches: tuple[tuple[str, str], ...]  # (group, resource); ("", "*") for every resource
    reads: tuple[Operation, ...]
    writes: tuple[Operation, ...]
    since: str = ""  # the release that added it ("1.32"), when the oldest lab release lacks it
    reasons: tuple[Reason, ...] = ()  # its writes no watch event sets off, and why
    delay: float = 0.0  # seconds it waits after an event before it acts on it
    by_namespace: bool = False  # acts on a namespace's objects when the Namespace changes
    # (group, resource) its work queue holds, when an event on an object one owns sets off
    # the owner's sync, and with it a write of any object of that owner (`queue`)
    queue: tuple[str, str] | None = None

    @property
    def wiretap_name(self) -> str:
        """How the wiretap names it: `controller-manager/deployment-controller`."""
        if self.name == self.component:
            return self.name
        return self.name if "/" in self.name else f"{self.component}/{self.name}"

    def watches_resource(self, group: str, resource: str) -> bool:
        return ("", ANY) in self.watches or (group, resource) in self.watches

    def writes_to(self, verb: str, group: str, resource: str, subresource: str = "") -> bool:
        return any(w.covers(verb, group, resource, subresource) for w in self.writes)

    def reason(
        self, verb: str, group: str, resource: str, subresource: str = "", about: str = ""
    ) -> Reason | None:
        """Why it makes such a write unprompted (a timer, its start-up), if it does;
        `about` is the kind an Event is about."""
        for r in self.reasons:
            if r.covers(verb, group, resource, subresource, about):
                return r
        return None


def _client(entry: dict[str, Any]) -> Client:
    def operations(key: str) -> tuple[Operation, ...]:
        return tuple(Operation.parse(str(o)) for o in entry.get(key) or ())

    watches = tuple(_resource(str(w))[:2] for w in entry.get("watches") or ())
    return Client(
        str(entry["name"]),
        str(entry["component"]),
        str(entry["source"]),
        str(entry["does"]),
        watches,
        operations("reads"),
        operations("writes"),
        str(entry.get("since", "")),
        tuple(_reason(r) for r in entry.get("reasons") or ()),
        float(entry.get("delay", 0)),
        bool(entry.get("by_namespace", False)),
        _resource(str(entry["queue"]))[:2] if entry.get("queue") else None,
    )


def _reason(entry: dict[str, Any]) -> Reason:
    writes = tuple(Operation.parse(str(o)) for o in entry.get("writes") or ())
    unprompted = bool(entry.get("unprompted", False))
    about = str(entry.get("about", ""))
    return Reason(str(entry["kind"]), str(entry["says"]), writes, None, unprompted, about)


@cache
def clients() -> dict[str, Client]:
    """Every known client, by the wiretap's name for it."""
    entries = datafiles.load(CONTROLLERS_FILE.name)
    found = [_client(entry) for entry in entries]
    return {c.wiretap_name: c for c in found}


# clients a person drives (and the wiretap's own probe), and Kubernetes' own binaries (as
# agents.yaml names them): neither is a third party, known here or not
PEOPLE = frozenset({"kubectl", "helm", "k8s-wiretap", "unknown", ""})
KUBERNETES = frozenset(
    {
        "apiserver",
        "cloud-controller-manager",
        "controller-manager",
        "kube-proxy",
        "kubelet",
        "scheduler",
    }
)


# the distributions' own components, named by their users (agents.yaml's users)
DISTRIBUTIONS = {"eks": "EKS", "aks": "AKS", "gke": "GKE", "openshift": "OpenShift"}
_NOT_THIRD = PEOPLE | KUBERNETES | set(DISTRIBUTIONS)  # asked for every exchange: made once


@lru_cache(maxsize=1024)  # asked three times an exchange, of the few components there are
def third_party(component: str) -> bool:
    """A client that acts on its own (an operator, Argo CD, Flux) but that this file does
    not know: not one a person drives (a user that is no system identity: `user/<name>`),
    not a part of Kubernetes or of its distribution."""
    binary, _, rest = component.partition("/")
    if binary == "user":
        return rest.startswith("system:")
    return client(component) is None and binary not in _NOT_THIRD


@cache
def longest_delay() -> float:
    """The longest any client waits after an event before acting on it (seconds)."""
    return max((c.delay for c in clients().values()), default=0.0)


def client(name: str) -> Client | None:
    return clients().get(name)
