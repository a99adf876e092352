"""What a walkthrough says at one step: the chapter's text, then the explanation layer's.

After the chapter's title and its short text (kept as data, `chapters.py`) come the
words of the explanation layer on the step's exchange, from its `Detail` as the Explain
tab has them: who sent it and what it is, why, the etcd record it made, what set it off
(or, for a watch, the event it carried and how soon after the write), and for a patch the
replay's verdict and the fields it changed. `narration` is for the panel, `write_text`
prints every step for a terminal that is not one (a pipe, a log).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from typing import Any, TextIO

from rich.console import Group
from rich.markup import escape
from rich.text import Text

from k8s_wiretap.views.lines import clock
from k8s_wiretap.views.story import colour_of, told, verdict
from k8s_wiretap.views.tui.walkthrough.steps import Step, Steps

__all__ = ["narration", "write_text"]

FIELDS = 4  # an apply's field changes told, at most


def narration(step: Step, number: int, total: int) -> Group:
    """Step `number` (from 1) of `total`, for the panel."""
    chapter = step.chapter
    head = Text.assemble(
        (f"{number}/{total} ", "bold reverse"), " ", (chapter.title, "bold underline")
    )
    said = step.detail.explained
    name, rest = told(said.who.component, said.explanation.summary)
    what = Text.assemble((name, f"bold {colour_of(said.who.component)}"), (rest, "bold"))
    lines = [head, Text(chapter.text), what]
    if said.explanation.why and chapter.tab != "explain":  # else the tab below says it
        lines.append(Text(said.explanation.why, style="italic"))
    lines += [Text.from_markup(f"[dim]{escape(fact)}[/]") for fact in facts(step)]
    if chapter.tab != "explain":  # else the tab below has the chain
        lines += [Text(hop, style="dim") for hop in chain(step)]
    return Group(*lines)


def chain(step: Step) -> Iterator[str]:
    """The causal chain from the user's action down to the step's exchange, a line a hop,
    if its chapter tells it (`chain`) and there is one."""
    hops = step.detail.chain
    if "chain" not in step.chapter.facts or len(hops) <= 1:
        return
    yield "causal chain (from the user's action):"
    for depth, (before, hop) in enumerate(zip([None, *hops], hops, strict=False)):
        mark = "▶" if hop.id == step.detail.exchange.id else " "  # as the Explain tab marks it
        delay = f" +{(hop.time - before.time) * 1000:.0f} ms" if before else ""
        said = "".join(told(hop.component, hop.summary))
        yield f"{'  ' * depth}{mark} {clock(hop.time)}{delay} {said}"


def facts(step: Step) -> Iterator[str]:
    """The explanation layer's facts on the step's exchange that its chapter tells, one
    line each."""
    detail, told = step.detail, step.chapter.facts
    if "cause" in told:
        if step.cause is not None:
            yield _carried(step.cause, len(detail.events))
        elif (cause := detail.record.get("caused_by")) is not None:
            yield _set_off(cause)
    if "patch" in told and detail.replay is not None:
        yield f"{detail.replay.type} patch, {verdict(detail.exchange, detail.replay)}"
    if "fields" in told:
        yield from _fields(step)
    if "etcd" in told:
        yield from _etcd(detail.explained.explanation.etcd)
    yield from step.clients


def _fields(step: Step) -> Iterator[str]:
    changes = [c for c in step.detail.explained.fields or () if c.change != "left alone"]
    for change in changes[:FIELDS]:
        shown = "gone" if change.change == "removed" else repr(change.after)
        yield f"{change.change} {change.path}: {change.before!r} → {shown} ({change.reason})"
    if len(changes) > FIELDS:
        yield f"… {len(changes) - FIELDS} more fields: see the Patch tab"


def _carried(cause: dict[str, Any], events: int) -> str:
    event = cause.get("event") or {}
    line = (
        f"it carried event #{event.get('event')} of {events}: the {event.get('type')} of "
        f"{event.get('object')} (resourceVersion {event.get('resource_version')})"
    )
    if cause.get("delivered_ms") is not None:
        line += f", {cause['delivered_ms']:.0f} ms after the write that made it"
    return line + f"; the reaction came {cause.get('reacted_ms', 0):.0f} ms later"


def _set_off(cause: dict[str, Any]) -> str:
    event = cause.get("event") or {}
    line = (
        f"set off by the {event.get('type')} of {event.get('object')} that reached "
        f"{event.get('watcher')}"
    )
    if cause.get("delivered_ms") is not None:
        line += f" {cause['delivered_ms']:.0f} ms after the write that made it"
    return line + f"; it reacted {cause.get('reacted_ms', 0):.0f} ms later"


def _etcd(etcd: dict[str, Any] | None) -> Iterator[str]:
    if not etcd or not (etcd.get("key") or etcd.get("prefix")):
        return
    where = etcd.get("key") or etcd.get("prefix")
    revision = f" @{etcd['revision']}" if etcd.get("revision") is not None else ""
    stored = etcd.get("stored")
    held = ", as etcd recorded it" if isinstance(stored, dict) else ""
    yield f"etcd: {where}{revision}{held}"
    if isinstance(stored, dict) and isinstance(value := stored.get("value"), dict):
        yield f"stored ({stored.get('format')}): {', '.join(value)}"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def write_text(steps: Steps, out: TextIO, width: int = 100) -> None:
    """Every step as plain text: the walkthrough read aloud."""
    walkthrough = steps.walkthrough
    out.write(f"{walkthrough.title} ({walkthrough.recording.name})\n")
    total = len(steps.steps)
    for number, step in enumerate(steps.steps, 1):
        said = step.detail.explained
        out.write(f"\n== {number}/{total} {step.chapter.title}\n")
        out.write(textwrap.fill(step.chapter.text, width) + "\n")
        exchange = step.detail.exchange
        path = _cut(exchange.path, width - 20)
        out.write(f"  {exchange.method} {path} → {exchange.status or 'no response'}\n")
        out.write(f"  {''.join(told(said.who.component, said.explanation.summary))}\n")
        if said.explanation.why:
            why = textwrap.fill(said.explanation.why, width, initial_indent="  ")
            out.write(textwrap.indent(why, "  ").removeprefix("  ") + "\n")
        for fact in facts(step):
            out.write(textwrap.fill(fact, width, initial_indent="  ", subsequent_indent="    "))
            out.write("\n")
        for hop in chain(step):
            indent = "  " + " " * (len(hop) - len(hop.lstrip()))
            out.write(
                textwrap.fill(
                    hop.strip(), width, initial_indent=indent, subsequent_indent=indent + "    "
                )
            )
            out.write("\n")
    for missing in steps.missing:
        out.write(f"\n(left out: {missing})\n")
