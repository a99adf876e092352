"""Replay one recorded PATCH with `k8s_wiretap.patch` and check it against the server.

The replay is our proof that we understand each patch: the local result must agree with the
object the server returned on everything the patch sets or removes (`patch.compare`).
`matches_server` is None when there is nothing to replay on — no earlier observation of
the object, or one that is provably stale (a write happened in between).

This module is pure: the analysis finds the object as it was before (`before`) and the
patch metadata in force (`schema`: the cluster's own OpenAPI document when the recording
holds one from before the patch, else Kubernetes 1.20's built in).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.decode.diff import diff
from k8s_wiretap.decode.history import Observation
from k8s_wiretap.patch import PatchError, PatchSchema, compare, replay

__all__ = ["PatchReplay", "not_replayed", "replay_exchange"]


@dataclass(frozen=True)
class PatchReplay:
    type: str
    body: Any
    before: dict[str, Any] | None
    after: Any
    local: dict[str, Any] | None
    matches_server: bool | None
    mismatches: list[str]
    before_from: Observation | None = None
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "type": self.type,
            "body": self.body,
            "before": self.before,
            "after": self.after,
            "diff": diff(self.before, self.after) if self.before is not None else None,
            "matches_server": self.matches_server,
            "mismatches": self.mismatches,
        }
        if self.before_from is not None:
            record["before_from"] = {
                "exchange": self.before_from.exchange,
                "source": self.before_from.source,
                "time": self.before_from.time,
            }
        if self.note:
            record["note"] = self.note
        return record


def not_replayed(kind: str, body: Any, after: Any, why: str) -> PatchReplay:
    """A PATCH there is no verdict on, and why."""
    return PatchReplay(kind, body, None, after, None, None, [], note=why)


def replay_exchange(
    exchange: Exchange,
    kind: str,
    body: Any,
    before: Observation,
    after: dict[str, Any],
    schema: PatchSchema,
) -> PatchReplay:
    """Apply `body` to `before` as the server would and compare with the server's `after`."""
    info = exchange.info
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
        failed = f"the replay failed where the server succeeded: {error}"
        return PatchReplay(kind, body, before.object, after, None, False, [failed], before)
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
