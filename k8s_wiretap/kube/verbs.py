"""Which API verbs read, which write, which watch: the one table.

The verbs are the API server's RequestInfo verbs (`requestinfo.py`, a port of apiserver's
pkg/endpoints/request/requestinfo.go): get, list, watch, create, update, patch, delete,
deletecollection, proxy; a non-resource request's verb is its lower-cased method.

- **Reads**: get, list and watch. The API server says so itself: they are its
  `nonMutatingRequestVerbs` (apiserver pkg/server/filters/maxinflight.go, which counts them
  against the read-only in-flight limit, watch apart as `watchVerbs`) and what
  `authorizer.AttributesRecord.IsReadOnly` calls read-only (pkg/authorization/authorizer).
- **Writes**: create, update, patch, delete and deletecollection, the verbs whose handlers
  (pkg/endpoints/handlers: create.go, update.go, patch.go, delete.go) change objects through
  the resource's storage. A server-side apply is a patch (its patch type,
  `application/apply-patch+yaml`, says it: `media.patch_type`), and deletecollection
  deletes every object it selects. maxinflight.go counts every verb that is not a read as
  mutating; of those, `proxy` (the request goes on to a node, pod or service) changes no
  object here and is in neither set.
- **Connect**: exec, attach and portforward are subresources, not verbs: their POST is a
  `create` and their WebSocket GET a `get`, as RequestInfo resolves them; they write no
  object, which `RequestInfo.streaming` tells (a `create` of pods/exec is in WRITES by its
  verb, as the API server's own tables have it).
- **Stores**: create, update and patch, the writes whose answer is the object as that write
  stored it, at the resourceVersion it made. A delete answers with a Status or with the
  object as it was before (the etcd3 store's `conditionalDelete` decodes `origState.data`
  at `origState.rev`), a deletecollection with a list: neither is a version the write made.
"""

from __future__ import annotations

__all__ = ["DELETES", "READS", "STORES", "WATCH", "WRITES"]

WATCH = "watch"
READS = frozenset({"get", "list", WATCH})
WRITES = frozenset({"create", "update", "patch", "delete", "deletecollection"})
DELETES = frozenset({"delete", "deletecollection"})
# The writes whose response is the object as the server stored it.
STORES = WRITES - DELETES
