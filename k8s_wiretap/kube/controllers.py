"""The control plane's clients as data: what each one watches and writes, and why it exists.

Loaded from `data/controllers.yaml` (its header says how it is written and checked). A
client is named as the wiretap names it: `controller-manager/deployment-controller`,
`scheduler`, `kubelet`, ... (`agents.component_of`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from k8s_wiretap.kube import datafiles
from k8s_wiretap.kube.resources import api_groups

__all__ = ["CONTROLLERS_FILE", "Client", "Operation", "client", "clients"]

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
class Client:
    name: str
    component: str
    source: str
    does: str
    watches: tuple[tuple[str, str], ...]  # (group, resource); ("", "*") for every resource
    reads: tuple[Operation, ...]
    writes: tuple[Operation, ...]
    since: str = ""  # the release that added it ("1.32"), when the oldest lab release lacks it

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
    )


@cache
def clients() -> dict[str, Client]:
    """Every known client, by the wiretap's name for it."""
    entries = datafiles.load(CONTROLLERS_FILE.name)
    found = [_client(entry) for entry in entries]
    return {c.wiretap_name: c for c in found}


def client(name: str) -> Client | None:
    return clients().get(name)
