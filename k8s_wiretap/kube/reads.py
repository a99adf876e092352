"""Where the API server serves a read from: etcd, or its watch cache.

The API server keeps a watch cache per resource (staging/src/k8s.io/apiserver/pkg/storage/
cacher). Up to 1.30 (cacher.go, `shouldDelegateList` and `Get`):
- a GET or LIST without a resourceVersion is a consistent read: from etcd;
- resourceVersion=0 means "any version": from the watch cache;
- a LIST with a limit and a resourceVersion other than 0, a continue token, or
  resourceVersionMatch=Exact goes to etcd (the cache cannot page or go back in time);
- other reads with a resourceVersion are served from the cache once it has caught up.
From 1.31 (ConsistentListFromCache, beta and on by default) a consistent LIST is served
from the watch cache too, after the cache has caught up with etcd's current revision.
"""

from __future__ import annotations

from k8s_wiretap.kube.release import Release

__all__ = ["ETCD", "WATCH_CACHE", "served_from"]

ETCD = "etcd (a consistent read)"
WATCH_CACHE = "the watch cache"
CONSISTENT_LIST_FROM_CACHE = Release(1, 31)


def served_from(verb: str, params: dict[str, str], release: Release | None) -> str:
    """Where a `get` or `list` with these query parameters is read from, on `release`
    (None: unknown, read as before 1.31)."""
    version = params.get("resourceVersion", "")
    if verb == "get":
        return ETCD if version == "" else WATCH_CACHE
    if params.get("continue") or params.get("resourceVersionMatch") == "Exact":
        return "etcd"
    if version == "":
        modern = release is not None and release >= CONSISTENT_LIST_FROM_CACHE
        return f"{WATCH_CACHE} (consistent, since 1.31)" if modern else ETCD
    if version != "0" and params.get("limit"):
        return "etcd"
    return WATCH_CACHE
