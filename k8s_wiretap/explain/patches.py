"""Replay one recorded PATCH with `k8s_wiretap.patch` and check it against the server.

The replay is our proof that we understand each patch: the local result must agree with the
object the server returned on everything the patch sets or removes (`patch.compare`).
`matches_server` is None when there is nothing to replay on — no earlier observation of
the object, or one that is provably stale (a write happened in between). A patch the server
refused (`replay_refused`: a 409 conflict of server-side apply, a 422 JSON patch test) is
replayed too: it matches when the engine refuses it with the server's code and message.

This module is pure: the analysis finds the object as it was before (`before`), the patch
metadata in force (`schema`: the cluster's own OpenAPI v3 or v2 document when the recording
holds one from before the patch, else the table shipped for its release) and the server's
release (`release`: strategic merge patch changed between releases).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.decode.diff import diff
from k8s_wiretap.explain.history import History, Observation
from k8s_wiretap.kube.refs import ObjectRef
from k8s_wiretap.kube.release import ReleaseLike
from k8s_wiretap.patch import PatchError, PatchSchema, compare, replay

__all__ = [
    "REFUSALS",
    "PatchReplay",
    "not_replayed",
    "predecessor",
    "replay_exchange",
    "replay_refused",
]

# The codes with which the server refuses a patch itself (what the engines predict); others
# (403, 404, 429, 5xx) say nothing about the patch.
REFUSALS = frozenset({400, 409, 415, 422})


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
    refused: bool = False  # the server refused the patch; `after` is its Status

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "type": self.type,
            "body": self.body,
            "before": self.before,
            "after": self.after,
            "diff": None if self.before is None or self.refused else diff(self.before, self.after),
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
        if self.refused:
            record["refused"] = True
        return record


def predecessor(
    history: History, ref: ObjectRef, after_version: int | None, uid: str = ""
) -> Observation | None:
    """The observation of the highest resourceVersion below the patch's result, of
    incarnation `uid`: what the server patched when the latest observation before the PATCH
    was stale because a concurrent write (a kubelet's status PATCH answered after this
    PATCH was sent) went first. No observed version lies between it and the result, the
    same standard the latest observation is held to."""
    if after_version is None:
        return None
    versions = history.versions(ref)
    index = bisect.bisect_left(versions, after_version)
    if index == 0:
        return None
    for observation in history.at(ref, versions[index - 1]):
        if not uid or not observation.uid or observation.uid == uid:
            return observation
    return None


def not_replayed(kind: str, body: Any, after: Any, why: str) -> PatchReplay:
    """A PATCH there is no verdict on, and why."""
    return PatchReplay(kind, body, None, after, None, None, [], note=why)


def _replay(
    exchange: Exchange,
    kind: str,
    body: Any,
    before: Observation,
    schema: PatchSchema,
    release: ReleaseLike,
) -> Any:
    """The engines' result for the exchange's patch on `before`; PatchError if they refuse."""
    info = exchange.info
    local = replay(
        kind,
        body,
        before.object,  # the engines work on copies
        schema=schema,
        manager=info.param("fieldManager"),
        force=info.param("force") == "true",
        release=release,
        subresource=info.subresource,
    )
    _precondition(exchange, before.object, local)
    return local


def _precondition(exchange: Exchange, before: Any, patched: Any) -> None:
    """A patch that sets metadata.resourceVersion makes it a precondition: the API server
    updates with the patched object's resourceVersion, and refuses with 409 when the object
    has changed since (apiserver handlers/patch.go, then the registry's GuaranteedUpdate).
    Controllers send it (the node controller's taint PATCH carries the version it read)."""
    sent, held = _resource_version(patched), _resource_version(before)
    if not sent or not held or sent == held:
        return
    info = exchange.info
    what = f"{info.resource}.{info.group}" if info.group else info.resource
    message = (
        f'Operation cannot be fulfilled on {what} "{info.name}": the object has been '
        "modified; please apply your changes to the latest version and try again"
    )
    raise PatchError(message, 409)


def _resource_version(obj: Any) -> str:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    version = meta.get("resourceVersion") if isinstance(meta, dict) else None
    return version if isinstance(version, str) else ""


def replay_exchange(
    exchange: Exchange,
    kind: str,
    body: Any,
    before: Observation,
    after: dict[str, Any],
    schema: PatchSchema,
    release: ReleaseLike = None,
) -> PatchReplay:
    """Apply `body` to `before` as the server of `release` would and compare with the
    server's `after`."""
    try:
        local = _replay(exchange, kind, body, before, schema, release)
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
        manager=exchange.info.param("fieldManager"),
        subresource=exchange.info.subresource,
    )
    return PatchReplay(
        kind, body, before.object, after, local, result.matches, result.mismatches, before
    )


def replay_refused(
    exchange: Exchange,
    kind: str,
    body: Any,
    before: Observation,
    status: dict[str, Any],
    schema: PatchSchema,
    release: ReleaseLike = None,
) -> PatchReplay:
    """A patch the server refused with `status` (its Status): the replay matches when the
    engines refuse it too, with the same HTTP code and the same message."""
    code, message = status.get("code", exchange.status), status.get("message")
    try:
        local = _replay(exchange, kind, body, before, schema, release)
    except PatchError as error:
        same = (error.status, error.server_message) == (code, message)
        mismatches = [] if same else [f"the replay refused it with {error.status}: {error}"]
        note = f"the server refused it ({code}: {message})"
        return PatchReplay(
            kind, body, before.object, status, None, same, mismatches, before, note, True
        )
    applied = f"the replay applied the patch the server refused ({code}: {message})"
    return PatchReplay(
        kind, body, before.object, status, local, False, [applied], before, None, True
    )
