"""The causal tree an exchange is in, as the chain view draws it: hops in time order.

It comes from the explanation layer's chains (`explain/chains.py`) over the selected
exchange's window (`listing/window.py`): the root of the exchange's chain (a user's action, or
what no event explains), and every write it set off, directly or not — each with the
hop that caused it (its parent), the watch event that carried the change, and its delay:
the milliseconds after the write that set it off. Components are lanes, in the order
they first act. Moving along it (`step`, `parent`, `first_child`) is by index.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.explain.explainer import Explainer

__all__ = ["ChainTree", "Node", "build"]


@dataclass(frozen=True)
class Node:
    id: str
    time: float
    component: str
    summary: str
    noise: bool
    position: int | None  # its row in the list, to jump to (None: not in the index)
    parent: int | None  # the node that caused it (None: the root)
    delay_ms: float | None  # after the parent's write
    via: str  # the watch event that carried the parent's change to it


@dataclass(frozen=True)
class ChainTree:
    nodes: list[Node]
    lanes: list[str]  # components, in the order they first act
    start: int  # the node of the exchange the view was opened on

    def lane(self, node: Node) -> int:
        return self.lanes.index(node.component)

    def children(self, at: int) -> list[int]:
        return [n for n, node in enumerate(self.nodes) if node.parent == at]

    def step(self, at: int, by: int) -> int:
        return max(0, min(len(self.nodes) - 1, at + by))

    def parent(self, at: int) -> int:
        parent = self.nodes[at].parent
        return at if parent is None else parent

    def first_child(self, at: int) -> int:
        children = self.children(at)
        return children[0] if children else at

    def sibling(self, at: int, by: int) -> int:
        """The next (1) or previous (-1) hop set off by the same parent."""
        parent = self.nodes[at].parent
        if parent is None:
            return at
        siblings = self.children(parent)
        return siblings[max(0, min(len(siblings) - 1, siblings.index(at) + by))]


def build(
    explainer: Explainer, exchange: Exchange, position_of: Callable[[str], int | None]
) -> ChainTree:
    """The tree `exchange` is in, from the root of its chain, over `explainer`'s window;
    `position_of(id)` is an exchange's row in the list."""
    chains, analysis = explainer.chains, explainer.analysis
    root = chains.chain(exchange)[0]
    exchanges = [root, *chains.tree(root)]
    number = {e.id: n for n, e in enumerate(exchanges)}
    nodes: list[Node] = []
    for e in exchanges:
        cause = chains.caused_by(e) if e is not root else None
        parent = number.get(cause.exchange) if cause and cause.exchange else None
        said = explainer.summaries.explain(e)
        via = ""
        if cause is not None:
            hop = cause.hop
            via = f"{hop.type} {hop.ref} (rv {hop.resource_version}) to {hop.watcher}"
        delay = None if parent is None else (e.time - exchanges[parent].time) * 1000
        nodes.append(
            Node(
                e.id,
                e.time,
                analysis.who(e).component,
                said.summary,
                said.noise,
                position_of(e.id),
                parent,
                delay,
                via,
            )
        )
    lanes = list(dict.fromkeys(node.component for node in nodes))
    return ChainTree(nodes, lanes, number[exchange.id])
