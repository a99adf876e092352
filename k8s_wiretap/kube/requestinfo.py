"""What a request means, resolved exactly as the API server resolves it.

A port of apiserver/pkg/endpoints/request/requestinfo.go (Kubernetes 1.20): `/api/{v}/...`
(core group) and `/apis/{group}/{v}/...`, then `[namespaces/{ns}/]{resource}[/{name}[/{sub}]]`;
a `watch` or `proxy` path segment sets the verb; GET without a name is `list`, or `watch` when
the `watch` query is set and not false; DELETE without a name is `deletecollection`; a
`fieldSelector` of `metadata.name=X` names the object. Everything else is a non-resource
request whose verb is the lower-cased method.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import parse_qs, unquote, urlsplit

from k8s_wiretap.once import once

__all__ = ["RequestInfo", "parse_request"]

API_PREFIXES = frozenset({"api", "apis"})
GROUPLESS_PREFIXES = frozenset({"api"})
SPECIAL_VERBS = frozenset({"proxy", "watch"})
STREAMING_SUBRESOURCES = frozenset({"exec", "attach", "portforward"})
# Query parameters worth showing with a request (metav1 ListOptions, GetOptions,
# CreateOptions/UpdateOptions/PatchOptions, DeleteOptions).
OPTIONS = (
    "labelSelector",
    "fieldSelector",
    "resourceVersion",
    "resourceVersionMatch",
    "limit",
    "continue",
    "timeoutSeconds",
    "allowWatchBookmarks",
    "sendInitialEvents",
    "dryRun",
    "fieldManager",
    "fieldValidation",
    "force",
    "propagationPolicy",
    "gracePeriodSeconds",
)
NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})
METHOD_VERBS = {
    "POST": "create",
    "GET": "get",
    "HEAD": "get",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}
# strconv.ParseBool's false values; a value ParseBool rejects counts as false only if it is
# "false" or "0" in any case (the fallback in NewRequestInfo).
_PARSEBOOL_FALSE = frozenset({"0", "f", "F", "false", "FALSE", "False"})


@dataclass(frozen=True)
class RequestInfo:
    """The API server's RequestInfo, plus the query parameters a reader wants at hand."""

    path: str
    verb: str
    is_resource_request: bool = False
    group: str = ""
    version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    parts: tuple[str, ...] = ()
    query: dict[str, list[str]] = field(default_factory=dict, compare=False)

    def param(self, key: str) -> str | None:
        values = self.query.get(key)
        return values[0] if values else None

    @once  # asked five times an exchange, of an answer `parse_request` shares
    def dry_run(self) -> bool:
        """A write with `dryRun` (`kubectl --dry-run=server`): answered as if done, and
        nothing stored, no watcher told (apiserver pkg/endpoints/handlers: `isDryRun`)."""
        return bool(self.param("dryRun"))

    @once
    def streaming(self) -> bool:
        """exec, attach and portforward: upgraded to a stream (SPDY for a POST, whose verb is
        create; WebSocket for a GET, whose verb is get)."""
        return self.resource == "pods" and self.subresource in STREAMING_SUBRESOURCES

    @once
    def _options(self) -> dict[str, str]:
        query = self.query
        if not query:  # half the requests: no query at all
            return {}
        return {name: values[0] for name in OPTIONS if (values := query.get(name))}

    def options(self) -> dict[str, str]:
        """The query parameters that change what a request means, by their API names, in
        `OPTIONS` order; worked out once (`parse_request` shares its answers: read it, do
        not change it)."""
        return self._options


def _split_path(path: str) -> list[str]:
    trimmed = path.strip("/")
    return trimmed.split("/") if trimmed else []


def _is_watch(query: dict[str, list[str]]) -> bool:
    values = query.get("watch")
    if not values:
        return False
    value = values[0]
    return value not in _PARSEBOOL_FALSE and value.lower() not in ("false", "0")


def _exact_name(field_selector: str | None) -> str:
    """`metadata.name` from a field selector that requires an exact match, if valid.

    A selector with any term lacking an operator is invalid: the API server then drops the
    whole selector (and names nothing).
    """
    if not field_selector:
        return ""
    terms = field_selector.split(",")
    if any("=" not in term for term in terms):
        return ""
    for term in terms:
        for operator in ("==", "="):
            key, sep, value = term.partition(operator)
            if sep and key.strip() == "metadata.name" and not value.startswith("="):
                name = value.strip()
                if name not in (".", "..") and "/" not in name and "%" not in name:
                    return name
                return ""
    return ""


@lru_cache(maxsize=4096)
def parse_request(method: str, target: str) -> RequestInfo:
    """Resolve `method` and `target` (a path with its query, or a full URL).

    Cached: a recording asks the same few requests over and over (a lease renewed, an
    object read again; a third to two thirds of recordings/ are repeats), and each exchange
    is resolved more than once (the explanation, the watch decoder). A RequestInfo is
    frozen; its `query` must not be changed.
    """
    url = urlsplit(target)
    path = unquote(url.path)
    query = parse_qs(url.query, keep_blank_values=True)
    info = RequestInfo(path=path, verb=method.lower(), query=query)
    parts = _split_path(path)
    if len(parts) < 3 or parts[0] not in API_PREFIXES:
        return info
    prefix, parts = parts[0], parts[1:]
    group = ""
    if prefix not in GROUPLESS_PREFIXES:
        if len(parts) < 3:
            return info
        group, parts = parts[0], parts[1:]
    version, parts = parts[0], parts[1:]
    verb = METHOD_VERBS.get(method.upper(), "")
    if parts and parts[0] in SPECIAL_VERBS:
        if len(parts) < 2:
            return info
        verb, parts = parts[0], parts[1:]
    namespace = ""
    if len(parts) > 1 and parts[0] == "namespaces":
        namespace = parts[1]
        if len(parts) > 2 and parts[2] not in NAMESPACE_SUBRESOURCES:
            parts = parts[2:]
    resource = parts[0] if parts else ""
    name = parts[1] if len(parts) >= 2 else ""
    subresource = parts[2] if len(parts) >= 3 and verb != "proxy" else ""
    if not name and verb == "get":
        verb = "watch" if _is_watch(query) else "list"
        name = _exact_name(query.get("fieldSelector", [None])[0])
    if not name and verb == "delete":
        verb = "deletecollection"
    return RequestInfo(
        path=path,
        verb=verb,
        is_resource_request=True,
        group=group,
        version=version,
        namespace=namespace,
        resource=resource,
        subresource=subresource,
        name=name,
        parts=tuple(parts),
        query=query,
    )
