"""Replay one recorded PATCH with `k8s_wiretap.patch` and check it against the server.

The patch metadata (merge keys, strategies, list types) comes from the cluster's own OpenAPI
document when the recording holds one from before the patch (kubectl fetches `/openapi/v2`
during apply; a repeat apply often gets 304 from its cache and then the recording holds
none), else from Kubernetes 1.20's built-in table.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Any

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.decode.objects import Observation
from k8s_wiretap.patch import PatchError, PatchSchema, compare, replay

if TYPE_CHECKING:
    from k8s_wiretap.explain.analysis import Analysis, PatchReplay

__all__ = ["patch_schema", "replay_patch"]


def patch_schema(analysis: Analysis, before: float) -> PatchSchema:
    """The schema of the latest `/openapi/v2` the recording holds before `before`."""
    documents = analysis.openapi_documents()
    index = bisect.bisect_left([time for time, _ in documents], before)
    if index == 0:
        return PatchSchema.builtin()
    latest = documents[index - 1][1]
    decoded = analysis.response_body(latest)
    if decoded.format != "openapi-protobuf" or not isinstance(decoded.value, dict):
        return PatchSchema.builtin()
    return analysis.schema_from(latest.id, decoded.value)


def replay_patch(
    analysis: Analysis,
    exchange: Exchange,
    kind: str,
    body: Any,
    before: Observation,
    after: dict[str, Any],
) -> PatchReplay:
    from k8s_wiretap.explain.analysis import PatchReplay

    info = exchange.info
    schema = patch_schema(analysis, exchange.time)
    manager = info.param("fieldManager")
    try:
        local = replay(
            kind,
            body,
            before.object,  # the engines work on copies
            schema=schema,
            manager=manager,
            force=info.param("force") == "true",
        )
    except PatchError as error:
        return PatchReplay(
            kind,
            body,
            before.object,
            after,
            None,
            False,
            [f"the replay failed where the server succeeded: {error}"],
            before,
        )
    result = compare(
        kind,
        body,
        before.object,
        local,
        after,
        schema=schema,
        manager=manager,
        subresource=info.subresource,
    )
    return PatchReplay(
        kind, body, before.object, after, local, result.matches, result.mismatches, before
    )
