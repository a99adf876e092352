"""An object's history as text, Markdown or JSON (`k8s-wiretap history`).

One block per version, in resourceVersion order, each incarnation (uid) under a heading
of its own:

    rv 342  00:21:49.120  kubectl apply: patch (strategic), field manager kubectl-client-side-apply
        replicas 2 → 3
        container nginx's image nginx:1.25 → nginx:1.27
        why: kubectl apply patches Deployment default/web (strategic merge patch, three-way)
        managedFields: kubectl-client-side-apply (Update, 2026-12-02T00:21:49Z)

A version no recorded write made says who it was seen by and what managedFields say of its
writer; where the write's field manager is not among the managers managedFields record for
it, the block says so. With a field, only the versions that set, changed or removed it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, TextIO

from k8s_wiretap.capture.redact import is_placeholder
from k8s_wiretap.explain.names import spoken
from k8s_wiretap.explain.objects import FieldStep, ObjectHistory, Version
from k8s_wiretap.views.lines import clock
from k8s_wiretap.wire.controls import escape_controls, escape_json_controls
from k8s_wiretap.wire.words import counted

__all__ = ["write_field_story", "write_history"]

INDENT = "    "
BECAUSE = 3  # causes said at most, nearest first; the rest counted


def write_history(history: ObjectHistory, out: TextIO, fmt: str = "story") -> None:
    if fmt == "json":
        out.write(escape_json_controls(json.dumps(history.to_json(), ensure_ascii=False)) + "\n")
        return
    lines = _history_lines(history)
    out.write("".join(_formatted(lines, fmt)))


def write_field_story(
    history: ObjectHistory, field: str, steps: list[FieldStep], out: TextIO, fmt: str = "story"
) -> None:
    if fmt == "json":
        record = {"object": str(history.ref), "field": field, "steps": [s.to_json() for s in steps]}
        out.write(escape_json_controls(json.dumps(record, ensure_ascii=False)) + "\n")
        return
    title = f"{history.kind} {_where(history)}: {field}, {_count(len(steps), 'step')}"
    lines = [(0, title), (0, "")]
    for step in steps:
        lines += _step_lines(step)
    out.write("".join(_formatted(lines, fmt)))


def _history_lines(history: ObjectHistory) -> list[tuple[int, str]]:
    incarnations = history.incarnations()
    title = f"{history.kind} {_where(history)}: {_count(len(history.versions), 'version')}"
    if len(incarnations) > 1:
        title += f" in {len(incarnations)} incarnations"
    lines = [(0, title), (0, "")]
    for versions in incarnations:
        if len(incarnations) > 1:
            lines += [(0, f"uid {versions[0].uid}"), (0, "")]
        for version in versions:
            lines += _version_lines(version, version.changes and [c.words for c in version.changes])
    return lines


def _step_lines(step: FieldStep) -> list[tuple[int, str]]:
    if step.values:
        said = [f"{path} = {_value(value)}" for path, value in step.values.items()]
    else:
        said = [c.words for c in step.changes]
    return _version_lines(step.version, said)


def _version_lines(version: Version, changes: list[str] | Any) -> list[tuple[int, str]]:
    lines = [(0, f"rv {version.resource_version or '?'}  {clock(version.time)}  {_head(version)}")]
    if version.first and not changes:
        what = "created with what it holds" if version.created else "first seen here"
        lines.append((1, what))
    lines += [(1, change) for change in changes or ()]
    lines += list(_why(version))
    lines.append((0, ""))
    return lines


def _head(version: Version) -> str:
    writer = version.writer
    if writer is None:
        seen = sorted({f"{spoken(s.component)}'s {s.source}" for s in version.sightings})
        return f"written by a client the wiretap did not see; seen in {', '.join(seen)}"
    how = writer.verb + (f" ({writer.patch})" if writer.patch else "")
    how += f" of {writer.subresource}" if writer.subresource else ""
    who = writer.command or spoken(writer.component)
    head = f"{who}: {how}, field manager {writer.field_manager}"
    return f"created by {head}" if version.created else head


def _why(version: Version) -> Iterator[tuple[int, str]]:
    writer = version.writer
    if writer is not None:
        yield (1, f"why: {writer.summary}")
        because = writer.because
        if len(because) > BECAUSE:  # the nearest, and the root
            left = len(because) - BECAUSE + 1
            because = [*because[: BECAUSE - 1], f"… ({left} more) …", because[-1]]
        for said in because:
            yield (1, f"because: {said}" if not said.startswith("…") else said)
    if version.managers:
        said = ", ".join(str(m) for m in version.managers)
        yield (1, f"managedFields: {said}")
        for lost in version.lost:
            yield (1, f"managedFields: {lost}")
        if version.disagrees and writer is not None:
            yield (1, f"managedFields do not name {writer.field_manager}, the write's manager")


def _formatted(lines: list[tuple[int, str]], fmt: str) -> Iterator[str]:
    for depth, said in lines:
        text = escape_controls(said)  # a value's ESC, CR or LF shown, never obeyed
        if fmt == "markdown":
            if depth == 0 and text and not text.startswith("rv "):
                yield f"## {text}\n"
            elif depth == 0 and text:
                yield f"- **{text}**\n"
            elif text:
                yield f"  - {text}\n"
            else:
                yield "\n"
        else:
            yield f"{INDENT * depth}{text}\n"


def _where(history: ObjectHistory) -> str:
    ref = history.ref
    return f"{ref.namespace}/{ref.name}" if ref.namespace else ref.name


def _count(n: int, noun: str) -> str:
    return counted(n, noun)


def _value(value: Any) -> str:
    """A field's value as said: a redacted value (a Secret's placeholder, or its base64 in
    `data`) is said as `(redacted)`, never as the placeholder it was recorded as."""
    value = _unsaid(value)
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _unsaid(value: Any) -> Any:
    if is_placeholder(value):
        return "(redacted)"
    if isinstance(value, dict):
        return {key: _unsaid(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_unsaid(item) for item in value]
    return value
