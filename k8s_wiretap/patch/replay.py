"""One call to replay a recorded PATCH: `replay(kind, body, before)` → the object it predicts.

`kind` is a patch Content-Type or its short name ("strategic", "merge", "json", "apply"),
`body` the request body (bytes, text, or already decoded), `before` the object as the server
had it, `release` the API server's ("v1.30.2"; None: 1.20), whose strategic merge rules
apply (strategic.py). The patch metadata comes from `schema` (default: the shipped table
nearest to `release`, `PatchSchema.bundled`) for `before`'s apiVersion and kind (the
configuration's when an apply creates the object and `before` is `{}`). The result is what
the server's decoder would keep (`drop_unknown_fields`); a patch that sets Go zero values or
nulls, or removes something, goes through the kind's Go type and defaulting too (roundtrip.py,
defaulting.py: `paused: false` left out, a removed `progressDeadlineSeconds` back at 600), as
a server-side apply does in apply.py; new parts are not defaulted (compare.py allows for
that). Errors are the
`PatchError`s the server answers with, including 415 for a strategic merge patch of a kind
with no schema (a custom resource). `subresource` is the one the PATCH went to ("status"):
a server-side apply there is recorded as that subresource's manager (1.22+).
"""

from __future__ import annotations

from typing import Any

from k8s_wiretap.kube.release import Release, ReleaseLike
from k8s_wiretap.kube.resetfields import reset_fields
from k8s_wiretap.patch.apply import apply_config
from k8s_wiretap.patch.bodies import decode_patch_body, patch_kind
from k8s_wiretap.patch.convert import convert
from k8s_wiretap.patch.defaulting import apply_defaults
from k8s_wiretap.patch.errors import PatchError
from k8s_wiretap.patch.fieldpath import FieldSet, Path, field
from k8s_wiretap.patch.json_patch import apply_json_patch
from k8s_wiretap.patch.merge import apply_merge
from k8s_wiretap.patch.meta import DEFAULT_RELEASE, PatchSchema
from k8s_wiretap.patch.prune import drop_unknown_fields
from k8s_wiretap.patch.roundtrip import may_change_when_decoded, through_go_types
from k8s_wiretap.patch.strategic import apply_strategic

__all__ = ["replay"]


def _field_paths(paths: tuple[tuple[str, ...], ...]) -> list[Path]:
    return [tuple(field(name) for name in path) for path in paths]


UNSUPPORTED = (
    "the body of the request was in an unknown format - accepted media types include: "
    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
)


def replay(
    kind: str,
    body: Any,
    before: dict[str, Any],
    *,
    schema: PatchSchema | None = None,
    manager: str | None = None,
    force: bool = False,
    release: ReleaseLike = None,
    subresource: str = "",
) -> Any:
    """The object the server stores for this patch (before defaulting); PatchError if none."""
    short = patch_kind(kind)
    if short is None:
        raise PatchError(f"unsupported patch type {kind!r}", 415)
    patch = decode_patch_body(short, body)
    server = Release.of(release, DEFAULT_RELEASE)
    schema = schema or PatchSchema.bundled(server)
    typed = before if before.get("apiVersion") or not isinstance(patch, dict) else patch
    node = schema.for_kind(str(typed.get("apiVersion", "")), str(typed.get("kind", "")))
    if short == "strategic":
        if node is None:
            raise PatchError(UNSUPPORTED, 415)
        result: Any = apply_strategic(before, patch, node, server)
    elif short == "merge":
        result = apply_merge(before, patch, server)
    elif short == "json":
        result = apply_json_patch(before, patch, server)
    else:
        # managers are told apart by the subresource they wrote through from 1.22 on, and
        # the strategy's reset fields are kept out of the apply
        through = subresource if server >= Release(1, 22) else ""
        api_version, kind = str(typed.get("apiVersion", "")), str(typed.get("kind", ""))
        resets = reset_fields(server, api_version, kind, subresource, live=before)
        reset = FieldSet.of(*_field_paths(resets))
        result = apply_config(
            before,
            patch,
            manager or "",
            node,
            force=force,
            subresource=through,
            reset=reset,
            ordered=server >= Release(1, 23),
            release=server,
        )
    members = may_change_when_decoded(short, patch) if short != "apply" else frozenset()
    if members:  # through the Go type and defaulting, where the patch may have changed them
        result = apply_defaults(through_go_types(result, server, members), server, members, node)
    return convert(drop_unknown_fields(result, node, in_place=True))  # engines return copies
