"""Object identity: which object a request, a list item or a watch event is about.

An `ObjectRef` names an object the way the API server stores it — group, resource,
namespace, name — the same however it was seen: `GET /api/v1/namespaces/default` and the
`default` item of `LIST /api/v1/namespaces` are one object (a Namespace is cluster-scoped:
its namespace is "", although the API server's RequestInfo puts its name in the namespace
field). The uid tells apart two objects that had the same name one after the other (deleted
and created again); it is part of the observation, not of the reference, because a request
names an object by name only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["ObjectRef", "involved_of", "metadata_of", "resource_version", "uid_of"]


class ObjectRef(NamedTuple):
    """A named tuple, not a frozen dataclass: it is the key of every per-object table (the
    history, the chains), and a tuple is made, hashed and compared in C — a dataclass's
    generated `__init__`, `__hash__` and `__eq__` were 3% of `explain`."""

    group: str
    resource: str
    namespace: str
    name: str

    def __str__(self) -> str:
        resource = f"{self.resource}.{self.group}" if self.group else self.resource
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{resource} {where}"

    def with_name(self, name: str) -> ObjectRef:
        return ObjectRef(self.group, self.resource, self.namespace, name)


def metadata_of(obj: Any) -> dict[str, Any]:
    """An object's metadata; {} when it has none or it is not an object (a malformed body)."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    return meta if isinstance(meta, dict) else {}


def involved_of(obj: Any) -> dict[str, Any] | None:
    """The reference to what an Event is about: `involvedObject` (core/v1), or `regarding`
    (events.k8s.io); None when `obj` holds neither."""
    about = obj.get("involvedObject") or obj.get("regarding") if isinstance(obj, dict) else None
    return about if isinstance(about, dict) else None


def resource_version(obj: Any) -> int | None:
    """The numeric resourceVersion of an object (etcd's revision when it was written)."""
    if not isinstance(obj, dict):
        return None
    value = metadata_of(obj).get("resourceVersion")
    if value is None:  # an object not stored yet (a create's body): no exception to raise
        return None
    try:
        return int(str(value))
    except ValueError:
        return None


def uid_of(obj: Any) -> str:
    if not isinstance(obj, dict):
        return ""
    return str(metadata_of(obj).get("uid") or "")
