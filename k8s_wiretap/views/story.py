"""The story of a recording, for people: what each user action set off, component by component.

Exchanges are grouped by the kubectl command that sent them (its Kubectl-Session), in the
order they ran; under each of its writes hangs the tree of what it caused — each hop with
its delay, who did it and why —, with apply patches field by field and each write's etcd
key and revision. What no user action explains (controllers starting, the kubelet
registering) follows as the control plane's own story. Noise (leases, health checks,
discovery, Events) is folded into a count unless asked for. `markdown=True` writes the same
for a workshop handout.

The TUI tells the same things and takes three of them from here, so both say them alike: the
colour of each component (`COLOURS`, `colour_of`), a replay's verdict (`verdict`) and who did
it, the component said once (`told`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import TextIO

from rich.console import Console
from rich.markup import escape

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.explain.explainer import Action, Explained, Explainer
from k8s_wiretap.explain.names import spoken
from k8s_wiretap.explain.patches import PatchReplay
from k8s_wiretap.explain.summaries import IDENTITIES
from k8s_wiretap.kube.fields import LAST_APPLIED
from k8s_wiretap.views.lines import clock, spans_days
from k8s_wiretap.wire.controls import escape_controls

__all__ = ["COLOURS", "colour_of", "told", "verdict", "write_story"]

# One colour per component, the same in the story and in the TUI.
COLOURS = {
    "kubectl": "bold cyan",
    "controller-manager": "green",
    "scheduler": "magenta",
    "kubelet": "yellow",
    "k8s-wiretap": "dim",
}


def colour_of(component: str) -> str:
    return COLOURS.get(component.split("/")[0], "white")


def _lines(
    explainer: Explainer, exchange: Exchange, depth: int, noise: bool, dated: bool = False
) -> Iterator[str]:
    said = explainer.explain(exchange)
    if said.explanation.noise and not noise:
        return
    yield _line(said, depth, dated)
    yield from _patch(explainer, exchange, depth)
    for change in said.fields or ():
        shown = _values(change.change, change.before, change.after)
        yield f"{'  ' * (depth + 2)}[dim]{change.change} {escape(change.path)} {escape(shown)}"
        yield f"{'  ' * (depth + 3)}[dim italic]{escape(change.reason)}"
    for child in explainer.chains.children(exchange):
        yield from _lines(explainer, child, depth + 1, noise, dated)


def _values(change: str, before: object, after: object) -> str:
    """A field's values as the change shows them: a field left alone usually keeps its
    value ("stays '1'"), a removed one loses it."""
    if change == "removed":
        return f"{before!r} → gone"
    if change == "set" and before is None and after is None:
        return "sent, but not a field the stored object keeps"
    if before == after:
        return f"stays {after!r}"
    return f"{before!r} → {after!r}"


def _patch(explainer: Explainer, exchange: Exchange, depth: int) -> Iterator[str]:
    """What a user's PATCH sent (the new file in the annotation shortened), and whether
    replaying it on the object before gave the server's result."""
    replay = explainer.analysis.replay(exchange)
    if replay is None or explainer.analysis.who(exchange).component != "kubectl":
        return
    indent = "  " * (depth + 2)
    if isinstance(replay.body, dict | list):
        body = json.loads(json.dumps(replay.body))
        annotations = (
            body.get("metadata", {}).get("annotations", {}) if isinstance(body, dict) else {}
        )
        if isinstance(annotations, dict) and annotations.get(LAST_APPLIED):
            annotations[LAST_APPLIED] = "<the new file>"
        text = json.dumps(body, ensure_ascii=False)
        yield f"{indent}[dim]{escape(exchange.request_header('content-type'))}: {escape(text)}"
    yield f"{indent}[dim]{escape(verdict(exchange, replay))}"


def verdict(exchange: Exchange, replay: PatchReplay) -> str:
    """What the replay shows, saying what it was replayed on. An observation made after the
    patch was sent means a write raced it: the replay starts from the last version before
    the server's result. A refused patch matches when the replay refuses it alike."""
    seen = replay.before_from
    if replay.matches_server is None or seen is None:
        return f"not replayed: {replay.note or 'no verdict'}"
    who = seen.component or "the recording"
    gap = (exchange.time - seen.time) * 1000
    when = f"{gap:.0f} ms before" if gap >= 0 else f"{-gap:.0f} ms after it was sent (a race)"
    on = f"replayed on the object as {who}'s {seen.source} saw it {when}"
    if replay.refused:
        status = replay.after if isinstance(replay.after, dict) else {}
        said = f"{status.get('code', exchange.status)} {status.get('reason', '')}".strip()
        if replay.matches_server:
            return f"{on}: refused alike ({said}), as the server refused it"
        return f"{on}: the server refused it ({said}), the replay differs"
    if replay.matches_server:
        return f"{on}: matches the server's result"
    return f"{on}: differs from the server's result at {', '.join(replay.mismatches)}"


def told(component: str, summary: str) -> tuple[str, str]:
    """The component and the summary as a line shows them, the component said once: a
    summary that opens with it (`catalog: create pods`, `kubectl get: list pods`, or with a
    user's name as a sentence says it: `kubernetes-admin creates ...`) is shown whole, that
    name coloured; any other after the component and a colon (`controller-manager/
    deployment-controller: the deployment controller creates ...`: the component, then who
    in words). Returns (the name to colour, the rest)."""
    names = [component]
    if component.partition("/")[0] in IDENTITIES:  # named by its user: said as a sentence says it
        names.append(spoken(component))
    for name in names:
        if not name or not summary.startswith(name):
            continue
        rest = summary[len(name) :]
        if rest.startswith(": ") or rest[:1] in (" ", "'", ""):
            return name, rest
    return component, f": {summary}"


def _line(said: Explained, depth: int, dated: bool = False) -> str:
    exchange, text = said.exchange, said.explanation
    cause = said.cause
    delay = f"+{(exchange.time - cause.hop.time) * 1000:.0f} ms " if cause else ""
    etcd = ""
    if text.etcd and text.etcd.get("key") and text.etcd.get("revision") is not None:
        stored = text.etcd.get("stored") or {}
        held = ", as etcd recorded it" if stored else ""
        if stored.get("format") == "deleted":
            held = ", deleted from etcd"
        etcd = f"  [dim]→ etcd {escape(text.etcd['key'])} @{text.etcd['revision']}{held}[/dim]"
    status = str(exchange.status) if exchange.status is not None else "no response"
    shown = "" if status in text.summary else f" [dim]({status})[/dim]"
    name, rest = told(said.who.component, text.summary)
    return (
        f"{'  ' * depth}[dim]{clock(exchange.time, dated=dated)}[/dim] {delay}"
        f"[{colour_of(said.who.component)}]{escape(name)}[/]{escape(rest)}"
        f"{shown}{etcd}"
    )


def write_story(
    explainer: Explainer,
    out: TextIO,
    *,
    noise: bool = False,
    markdown: bool = False,
    actions: list[Action] | None = None,
    pictures: Sequence[tuple[str, str]] = (),
) -> None:
    """The story of `explainer`'s recording (or of `actions` of it), as rich text or
    markdown on `out`; markdown opens with `pictures`, each a (title, address) pair."""
    actions = explainer.actions() if actions is None else actions
    dated = _days(actions)
    if markdown:
        for title, address in pictures:
            out.write(f"![{title}]({address})\n\n")
        _write_markdown(explainer, actions, out, noise, dated)
        return
    console = Console(file=out, highlight=False, soft_wrap=True)
    for action in actions:
        shown = [line for e in action.exchanges for line in _roots(explainer, e, noise, dated)]
        hidden = len(action.exchanges) - len([e for e in action.exchanges if _shown(explainer, e)])
        if not shown:
            continue
        folded = f" [dim]({hidden} more hidden: leases, discovery, health, events)[/dim]"
        title = escape(escape_controls(action.title))
        console.print(f"\n[bold]== {title}[/bold]{folded if hidden else ''}")
        for line in shown:
            console.print(line)


def _shown(explainer: Explainer, exchange: Exchange) -> bool:
    return not explainer.explain(exchange).explanation.noise


def _days(actions: Sequence[Action]) -> bool:
    """Whether the story spans more than one day (`spans_days`)."""
    return spans_days([e.time for a in actions for e in a.exchanges])


def _roots(
    explainer: Explainer, exchange: Exchange, noise: bool, dated: bool = False
) -> Iterator[str]:
    cause = explainer.chains.caused_by(exchange)
    if cause is not None and cause.exchange is not None:
        return  # told under what caused it
    for line in _lines(explainer, exchange, 0, noise, dated):
        yield escape_controls(line)  # what came from the wire, shown and never obeyed


def _write_markdown(
    explainer: Explainer, actions: list[Action], out: TextIO, noise: bool, dated: bool = False
) -> None:
    for action in actions:
        lines = [line for e in action.exchanges for line in _roots(explainer, e, noise, dated)]
        if not lines:
            continue
        out.write(f"\n## {escape_controls(action.title)}\n\n")
        for line in lines:
            out.write(_markdown(line) + "\n")


def _markdown(line: str) -> str:
    """A rich line as a markdown list item (nesting by its indentation)."""
    text = line.lstrip(" ")
    depth = (len(line) - len(text)) // 2
    plain = Console(width=1000).render_str(text).plain
    return f"{'  ' * depth}- {plain}"
