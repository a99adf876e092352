"""Which observation a PATCH is replayed on when a concurrent write went first.

On the default release's lab the TTL controller patches node-1 while the node controller's own
PATCH of it is in flight: the server applies the node controller's first (resourceVersion 266),
the TTL controller's on top (267), and the answer with 266 arrives after the TTL controller's
PATCH was sent. The latest observation before that PATCH (265) is then provably stale; the
object the server patched is 266."""

from __future__ import annotations

from typing import Any

from k8s_wiretap.explain.history import History, Observation
from k8s_wiretap.explain.patches import predecessor
from k8s_wiretap.kube.refs import ObjectRef

NODE = ObjectRef("", "nodes", "", "node-1")


def node(version: int, uid: str = "u1") -> dict[str, Any]:
    return {
        "kind": "Node",
        "metadata": {"name": "node-1", "uid": uid, "resourceVersion": str(version)},
    }


def history(*seen: tuple[float, dict[str, Any]]) -> History:
    found = History()
    for time, obj in seen:
        found.add(NODE, Observation.of(obj, time, "watch", f"x{time}", "informer"))
    return found


def test_the_version_just_below_the_result() -> None:
    seen = history((1.0, node(265)), (3.0, node(266)))  # 266 answered after the PATCH (2.0)
    before = seen.before(NODE, 2.0, "u1")
    assert before is not None and seen.stale(NODE, before, 267)
    found = predecessor(seen, NODE, 267, "u1")
    assert found is not None and found.resource_version == 266 and found.time == 3.0
    assert not seen.stale(NODE, found, 267)


def test_nothing_below_or_another_incarnation() -> None:
    seen = history((1.0, node(265, uid="old")), (3.0, node(266, uid="old")))
    assert predecessor(seen, NODE, 267, "new") is None
    assert predecessor(seen, NODE, 265, "old") is None
    assert predecessor(seen, NODE, None, "old") is None
