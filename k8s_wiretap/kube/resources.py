"""Which resources an API server serves: resource ↔ kind ↔ scope, subresources, verbs.

The truth is the API server's own discovery (`/api/v1`, `/apis/{group}/{version}`: one
APIResourceList each). A recording that holds discovery documents (kubectl fetches them)
teaches a `Resources` table exactly what that server serves, custom resources included;
everything else comes from the built-in table: the discovery of each release the lab runs
(`data/discovery-MINOR.json`: the default release's and 1.20's), generated from the lab's
kube-apiserver by `scripts/generate_discovery.py` (a test compares the default release's with
a running lab). The newest release's entries win; a resource only the older one served
(batch/v1beta1 CronJobs, policy/v1beta1 PodSecurityPolicies) is still known, with the kind
and scope that release served it with. Nothing is guessed: a resource none knows is unknown
(None).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from k8s_wiretap.kube import datafiles
from k8s_wiretap.kube.refs import ObjectRef, metadata_of

__all__ = [
    "DISCOVERY_FILES",
    "ApiResource",
    "Resources",
    "api_groups",
    "discovery_file",
    "resources_of",
]

RELEASES = datafiles.releases("discovery", ".json")  # newest first: its entries win
DISCOVERY_FILES = tuple(datafiles.path(f"discovery-{minor}.json") for minor in RELEASES)


def discovery_file(minor: str) -> Path:
    """The built-in discovery of release `minor` ("1.30")."""
    return datafiles.path(f"discovery-{minor}.json")


@dataclass(frozen=True, slots=True)
class ApiResource:
    group: str
    version: str
    resource: str  # the plural, as in paths
    kind: str
    namespaced: bool
    verbs: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    short_names: tuple[str, ...] = ()  # what kubectl also takes: `deploy`, `po`, `no`

    @property
    def scalable(self) -> bool:
        """Has a `scale` subresource (derived from spec.replicas, as `scale.py` shows)."""
        return "scale" in self.subresources


DISCOVERY = frozenset({"APIResourceList", "APIGroupDiscoveryList"})


def resources_of(resource_list: Any) -> list[ApiResource]:
    """The resources of one APIResourceList (`/api/v1`, `/apis/apps/v1`) or of aggregated
    discovery's APIGroupDiscoveryList (`/api`, `/apis` asked for as apidiscovery.k8s.io/v2,
    which kubectl and client-go do since 1.30), subresources folded into their parents."""
    if not isinstance(resource_list, dict):
        return []
    if resource_list.get("kind") == "APIGroupDiscoveryList":
        return _aggregated(resource_list)
    if resource_list.get("kind") != "APIResourceList":
        return []
    group, _, version = str(resource_list.get("groupVersion", "")).rpartition("/")
    entries = [r for r in resource_list.get("resources") or [] if isinstance(r, dict)]
    subresources: dict[str, list[str]] = {}
    for entry in entries:
        parent, _, sub = str(entry.get("name", "")).partition("/")
        if sub:
            subresources.setdefault(parent, []).append(sub)
    return [
        ApiResource(
            group,
            version,
            str(entry["name"]),
            str(entry.get("kind", "")),
            bool(entry.get("namespaced")),
            tuple(str(v) for v in entry.get("verbs") or ()),
            tuple(sorted(subresources.get(str(entry["name"]), ()))),
            tuple(str(n) for n in entry.get("shortNames") or ()),
        )
        for entry in entries
        if "/" not in str(entry.get("name", "/")) and entry.get("kind")
    ]


def _aggregated(document: dict[str, Any]) -> list[ApiResource]:
    """APIGroupDiscoveryList: items (groups; "" is core) → versions → resources, each with
    its kind (`responseKind`), `scope` and subresources. The first version of a group is its
    preferred one, so only a resource's first version is kept."""
    found: dict[tuple[str, str], ApiResource] = {}
    for group in document.get("items") or []:
        name = str(metadata_of(group).get("name") or "")
        for version in group.get("versions") or []:
            for entry in version.get("resources") or []:
                kind = (entry.get("responseKind") or {}).get("kind")
                if not kind or not entry.get("resource"):
                    continue
                subresources = sorted(
                    str(sub["subresource"])
                    for sub in entry.get("subresources") or []
                    if sub.get("subresource")
                )
                found.setdefault(
                    (name, str(entry["resource"])),
                    ApiResource(
                        name,
                        str(version.get("version", "")),
                        str(entry["resource"]),
                        str(kind),
                        entry.get("scope") == "Namespaced",
                        tuple(str(v) for v in entry.get("verbs") or ()),
                        tuple(subresources),
                        tuple(str(n) for n in entry.get("shortNames") or ()),
                    ),
                )
    return list(found.values())


@dataclass
class Resources:
    """(group, resource) → what the server serves; documents learned later win."""

    _table: dict[tuple[str, str], ApiResource] = field(default_factory=dict)
    _kinds: dict[tuple[str, str], ApiResource] | None = None  # (group, kind) →, when asked
    # the documents read lately, by identity: a repeated body is one decoded value (the
    # decode cache), and kubectl reads the same discovery on every command
    # and the table's `_changes` when each was last learned: learning it again before the
    # table changes is learning nothing (a discovery poll repeats the same documents)
    _read: dict[int, tuple[Any, list[ApiResource], int]] = field(
        default_factory=dict, compare=False, repr=False
    )
    _changes: int = field(default=0, compare=False, repr=False)  # the table's, so far

    @classmethod
    def builtin(cls, release: str | None = None) -> Resources:
        """Every lab release's resources (the newest's win), or only those of `release`
        ("1.30"), which must be one of RELEASES."""
        return cls(dict(_builtin_table(release)))

    def learn(self, resource_list: Any) -> bool:
        """Add the resources of a recorded discovery document; True if it was one."""
        if not isinstance(resource_list, dict) or resource_list.get("kind") not in DISCOVERY:
            return False
        read = self._read.get(id(resource_list))
        if read is None or read[0] is not resource_list:
            read = (resource_list, resources_of(resource_list), -1)
            if len(self._read) >= 64:
                del self._read[next(iter(self._read))]
        found = read[1]
        if read[2] != self._changes:  # else every item is where it was put, or refused
            table = self._table
            for item in found:
                key = (item.group, item.resource)
                known = table.get(key)
                if known is item:
                    continue
                if known is None or known.version == item.version or not _preferred(known):
                    table[key] = item
                    self._changes += 1
                    self._kinds = None
        self._read[id(resource_list)] = (resource_list, found, self._changes)
        return bool(found)

    def get(self, group: str, resource: str) -> ApiResource | None:
        return self._table.get((group, resource))

    def kind_of(self, group: str, resource: str) -> str | None:
        found = self.get(group, resource)
        return found.kind if found else None

    def resource_of(self, api_version: str, kind: str) -> ApiResource | None:
        """The resource that holds `kind` in `api_version`'s group (an ownerReference or an
        Event's involvedObject names kinds, paths name resources)."""
        if self._kinds is None:
            self._kinds = {(r.group, r.kind): r for r in reversed(self._table.values())}
        return self._kinds.get((api_version.rpartition("/")[0], kind))

    def __iter__(self) -> Iterator[ApiResource]:
        return iter(self._table.values())

    def named(self, word: str) -> list[ApiResource]:
        """The resources a type name as kubectl takes it names: a plural (`deployments`),
        a kind in any case (`Deployment`, `deployment`), a short name (`deploy`), each with
        or without its group (`deployments.apps`); the preferred group's first, as kubectl
        resolves `deploy` (several groups may serve one name: `events`)."""
        word = word.lower()
        found = [r for r in self._table.values() if word in _names(r)]
        return sorted(found, key=lambda r: (bool(r.group) and r.group in _custom(found), r.group))

    def ref(
        self, group: str, resource: str, namespace: str, name: str, obj: Any = None
    ) -> ObjectRef:
        """The reference of an object, the same however it was seen.

        With the object at hand its metadata is the truth (a cluster-scoped object has no
        namespace there); without it, the scope the server serves the resource with decides
        (the path of a cluster-scoped `namespaces/NAME` request names it twice).
        """
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        if isinstance(meta, dict) and meta.get("name"):
            return ObjectRef(group, resource, str(meta.get("namespace") or ""), str(meta["name"]))
        found = self.get(group, resource)
        if found is not None and not found.namespaced:
            namespace = ""
        return ObjectRef(group, resource, namespace, name)


def _names(item: ApiResource) -> set[str]:
    bare = {item.resource, item.kind.lower(), *item.short_names}
    return bare | {f"{name}.{item.group}" for name in bare if item.group}


def _custom(found: list[ApiResource]) -> set[str]:
    """The groups of `found` that are not built in (a CRD's), which kubectl ranks last."""
    return {r.group for r in found} - api_groups() - {""}


def _preferred(item: ApiResource) -> bool:
    return item.version in _preferred_versions().get(item.group, ())


@cache
def _documents() -> tuple[dict[str, Any], ...]:
    return tuple(datafiles.load(path.name) for path in DISCOVERY_FILES)


@cache
def _document(release: str | None = None) -> dict[str, Any]:
    """Every release's discovery as one, the newest release's groups and resources first
    (or only `release`'s)."""
    preferred: dict[str, str] = {}
    resources: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    documents = _documents()
    if release is not None:
        documents = (documents[RELEASES.index(release)],)
    for document in documents:
        for group, version in document["preferred"].items():
            preferred.setdefault(group, version)
        newest = {(r["group"], r["resource"]) for r in document["resources"]}
        resources += [r for r in document["resources"] if (r["group"], r["resource"]) not in seen]
        seen |= newest
    return {"preferred": preferred, "resources": resources}


@cache
def api_groups() -> frozenset[str]:
    """The named API groups of the built-in table (`apps`, `batch`, `storage.k8s.io`, ...)."""
    return frozenset(group for group in _document()["preferred"] if group)


@cache
def _preferred_versions() -> dict[str, tuple[str, ...]]:
    return {group: (version,) for group, version in _document()["preferred"].items()}


@cache
def _builtin_table(release: str | None = None) -> dict[tuple[str, str], ApiResource]:
    """Each built-in resource at its group's preferred version (else the first served)."""
    table: dict[tuple[str, str], ApiResource] = {}
    document = _document(release)
    preferred = {group: (version,) for group, version in document["preferred"].items()}
    for entry in document["resources"]:
        item = ApiResource(
            entry["group"],
            entry["version"],
            entry["resource"],
            entry["kind"],
            entry["namespaced"],
            tuple(entry["verbs"]),
            tuple(entry["subresources"]),
            tuple(entry.get("short_names", ())),
        )
        key = (item.group, item.resource)
        if key not in table or item.version in preferred.get(item.group, ()):
            table[key] = item
    return table
