"""Everything the explain layer says about one exchange, in one place.

`Explainer` puts the stages together over one analysis: who sent it (`who.py`), what it
is and why (`summaries.py`, with its etcd key), what set it off and the chain it is in
(`chains.py`), and for an apply, field by field (`apply_fields.py`). Views consume
`Explained`; they hold no Kubernetes rules of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from dataclasses import dataclass, field
from typing import Any

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.decode.body import Decoded
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.apply_fields import FieldChange, apply_fields, server_side_fields
from k8s_wiretap.explain.chains import Cause, Chains
from k8s_wiretap.explain.names import spoken
from k8s_wiretap.explain.summaries import Explanation, Summaries
from k8s_wiretap.explain.who import Who
from k8s_wiretap.kube.agents import person_component, user_name

__all__ = ["Action", "Explained", "Explainer"]


@dataclass(frozen=True)
class Explained:
    exchange: Exchange
    who: Who
    explanation: Explanation
    cause: Cause | None
    chain: list[Exchange]
    fields: list[FieldChange] | None

    def to_json(self, chains: Chains) -> dict[str, Any]:
        record = {**self.explanation.to_json(), **chains.to_json(self.exchange)}
        if self.fields is not None:
            record["apply_fields"] = [f.to_json() for f in self.fields]
        return record


@dataclass
class Action:
    """What one user action (a kubectl command, by its Kubectl-Session) sent; or, last,
    what the control plane did that no user action set off."""

    title: str
    exchanges: list[Exchange] = field(default_factory=list)


class Explainer:
    """`keep=False`: over a stream (`explain/stream.py`), the chains keep only what later
    exchanges can still need; `explain` then gives no `chain` exchanges, use `to_json`."""

    def __init__(self, analysis: Analysis, *, keep: bool = True) -> None:
        self.analysis = analysis
        self.chains = Chains(analysis, keep=keep)
        self.summaries = Summaries(analysis, self.chains)

    def to_json(
        self, exchange: Exchange, body: Callable[[Decoded], Any] | None = None
    ) -> dict[str, Any]:
        """What `Explained.to_json` says, without the chain's exchanges; `body` says how
        etcd's stored value goes in (`Explanation.to_json`)."""
        record = self.summaries.explain(exchange).to_json(body)  # a dict of its own
        record.update(self.chains.to_json(exchange))
        fields = self.fields(exchange)
        if fields is not None:
            record["apply_fields"] = [f.to_json() for f in fields]
        return record

    def forget(self, before: float, keeping: Container[str] = (), *, deep: bool = True) -> None:
        """Let go of what no exchange from `before` on needs (a stream's explainer), but
        the exchanges `keeping` names (still to be explained). `deep=False` lets go of the
        exchanges only, not of the chains' and the history's per-object state, whose
        sweep costs the size of the cluster each time (`Analysis.forget`)."""
        if deep:
            self.chains.forget(before)
        self.analysis.forget(before, keeping, deep=deep)

    def explain(self, exchange: Exchange) -> Explained:
        return Explained(
            exchange,
            self.analysis.who(exchange),
            self.summaries.explain(exchange),
            self.chains.caused_by(exchange),
            self.chains.chain(exchange),
            self.fields(exchange),
        )

    def actions(self) -> list[Action]:
        """kubectl commands by session, in the order they ran; requests that name no
        session (an audit log keeps no Kubectl-Session), kubectl's or a person's named by
        their user, by user, a pause of more than `PAUSE` starting another action; then
        everything no command or person set off, directly or through a chain."""
        sessions: dict[str, Action] = {}
        caused: set[str] = set()
        people: set[str] = set()
        runs: dict[str, tuple[int, float]] = {}  # each title's current run and its last time
        for exchange in self.analysis.exchanges:
            who = self.analysis.who(exchange)
            if who.component == "kubectl" and who.session:
                key, title = who.session, who.command
            elif who.component == "kubectl" or person_component(who.component):
                title = _unsessioned(who.component, user_name(exchange.request.identity.user))
                run, last = runs.get(title, (0, exchange.time))
                run += exchange.time - last > PAUSE
                runs[title] = (run, exchange.time)
                key = f"{title}\0{run}"
            else:
                continue
            people.add(exchange.id)
            action = sessions.setdefault(key, Action(title))
            action.title = action.title or title
            action.exchanges.append(exchange)
            caused |= {e.id for e in self.chains.tree(exchange)}
        rest = [
            e
            for e in self.analysis.exchanges
            if e.id not in caused and e.id not in people and self.chains.caused_by(e) is None
        ]
        for action in sessions.values():
            action.title = action.title or "kubectl"
        return [*sessions.values(), Action("the control plane on its own", rest)]

    def fields(self, exchange: Exchange) -> list[FieldChange] | None:
        """An apply's field-by-field story: client-side or server-side (None otherwise)."""
        replay = self.analysis.replay(exchange) if exchange.info.verb == "patch" else None
        if replay is None:
            return None
        if replay.type == "apply":
            info = exchange.info
            manager, forced = info.param("fieldManager") or "", info.param("force") == "true"
            return server_side_fields(
                replay.body, replay.before, replay.after, manager, forced=forced
            )
        return apply_fields(replay.body, replay.before, replay.after)


PAUSE = 1.0  # seconds: a person's requests with no session, this close, are one action


def _unsessioned(component: str, user: str) -> str:
    """The title of requests that name no kubectl session: kubectl's, or a person's."""
    if component == "kubectl":
        return f"kubectl, as {user} (no command recorded)" if user else "kubectl"
    return f"{spoken(component)}'s requests (no command recorded)"
