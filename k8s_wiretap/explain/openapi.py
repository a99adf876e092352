"""Which patch metadata was in force for a PATCH: the OpenAPI documents a recording holds.

kubectl 1.2x+ reads patch metadata from OpenAPI v3: `GET /openapi/v3` (the index, one
`serverRelativeURL` with a `?hash=` per group version; revalidated with If-Modified-Since,
often 304), then `GET /openapi/v3/apis/apps/v1?hash=...` as JSON. The hashed document is
served `Cache-Control: public, immutable`, so kubectl fetches each one once and keeps it in
its disk cache: a recording holds it at most once per cache, before the first apply that
needed it. Older kubectls (and the default release's, for kinds its v3 path does not
cover) fetch the whole `/openapi/v2` as gnostic protobuf.

`OpenApiDocuments.learn(exchange)` keeps every such answer; `schema(before, group_version,
release)` is the patch schema for an object of `group_version` at time `before`: the
latest v3 document of that group version recorded before it, else the latest v2 document,
else the shipped table nearest to the server's release (`PatchSchema.bundled`). Each
document is turned into a schema once, when first asked for.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Any

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.decode.body import Decoded
from k8s_wiretap.kube.release import ReleaseLike
from k8s_wiretap.patch import PatchSchema

__all__ = ["OpenApiDocuments", "v3_group_version"]

V2 = "/openapi/v2"
V3 = "/openapi/v3/"


def v3_group_version(path: str) -> str | None:
    """ "apps/v1" for `/openapi/v3/apis/apps/v1?hash=...`, "v1" for `/openapi/v3/api/v1`;
    None for the index and anything else."""
    path = path.split("?", 1)[0]
    if not path.startswith(V3):
        return None
    parts = path[len(V3) :].strip("/").split("/")
    if parts[0] == "api" and len(parts) == 2:
        return parts[1]
    if parts[0] == "apis" and len(parts) == 3:
        return f"{parts[1]}/{parts[2]}"
    return None


def _v3_document(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("components"), dict)


def _v2_document(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("definitions"), dict)


class OpenApiDocuments:
    """The recorded `/openapi/v2` and `/openapi/v3/<group version>` answers, in time order."""

    def __init__(self, decode: Callable[[Exchange], Decoded]) -> None:
        self._decode = decode  # the analysis's response_body: decoded once, cached there
        self._v2: list[tuple[float, Exchange]] = []
        self._v3: dict[str, list[tuple[float, Exchange]]] = {}
        self._schemas: dict[str, PatchSchema | None] = {}  # exchange id → its schema

    def learn(self, exchange: Exchange) -> bool:
        """Keep `exchange` if it is a 200 answer with an OpenAPI document; True if kept."""
        if exchange.status != 200:
            return False
        path = exchange.path.split("?", 1)[0]
        group_version = v3_group_version(path)
        if group_version is not None:
            timeline = self._v3.setdefault(group_version, [])
        elif path == V2:
            timeline = self._v2
        else:
            return False
        bisect.insort(timeline, (exchange.time, exchange), key=lambda d: d[0])
        return True

    def schema(self, before: float, group_version: str, release: ReleaseLike) -> PatchSchema:
        """The patch schema for an object of `group_version` ("apps/v1", "v1") at `before`."""
        for timeline, is_document in (
            (self._v3.get(group_version, []), _v3_document),
            (self._v2, _v2_document),
        ):
            schema = self._latest(timeline, before, is_document)
            if schema is not None:
                return schema
        return PatchSchema.bundled(release)

    def _latest(
        self,
        timeline: list[tuple[float, Exchange]],
        before: float,
        is_document: Callable[[Any], bool],
    ) -> PatchSchema | None:
        """The schema of the latest readable document of `timeline` before `before`."""
        index = bisect.bisect_left(timeline, before, key=lambda d: d[0])
        for _, exchange in reversed(timeline[:index]):
            schema = self._schema_of(exchange, is_document)
            if schema is not None:
                return schema
        return None

    def _schema_of(
        self, exchange: Exchange, is_document: Callable[[Any], bool]
    ) -> PatchSchema | None:
        if exchange.id not in self._schemas:
            decoded = self._decode(exchange)
            self._schemas[exchange.id] = (
                PatchSchema.from_openapi(decoded.value) if is_document(decoded.value) else None
            )
        return self._schemas[exchange.id]

    def forget(self, before: float) -> None:
        """Keep only what a patch at `before` or later can be replayed with: the documents
        from `before` on and, of each group version, the latest readable one before it (a
        recording read as a stream holds no more than that)."""
        for timeline, is_document in (
            (self._v2, _v2_document),
            *((t, _v3_document) for t in self._v3.values()),
        ):
            cut = bisect.bisect_left(timeline, before, key=lambda d: d[0])
            latest = next(
                (
                    d
                    for d in reversed(timeline[:cut])
                    if self._schema_of(d[1], is_document) is not None
                ),
                None,
            )
            for _, exchange in timeline[:cut]:
                if latest is None or exchange is not latest[1]:
                    self._schemas.pop(exchange.id, None)
            timeline[:cut] = [latest] if latest is not None else []
