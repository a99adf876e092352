"""Causal chains on the real recording: one apply, through every component, hop by hop."""

from __future__ import annotations

from functools import cache

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.chains import Chains
from tests.recorded import story


@cache
def chains() -> Chains:
    return Chains(Analysis.of(story()))


def kubectl_writes(method: str, resource: str) -> list[Exchange]:
    return [
        e
        for e in chains().analysis.exchanges
        if e.component == "kubectl"
        and e.method == method
        and e.info.resource == resource
        and e.info.subresource == ""
    ]


def step(exchange: Exchange) -> tuple[str, str, str, str]:
    info = exchange.info
    return (exchange.component, info.verb, info.resource, info.subresource)


ROLLOUT = [
    ("controller-manager/deployment-controller", "update", "replicasets", ""),
    ("controller-manager/replicaset-controller", "create", "pods", ""),
    ("scheduler", "create", "pods", "binding"),
    ("kubelet", "patch", "pods", "status"),
]


def test_the_scale_up_apply_is_one_chain_down_to_the_kubelet() -> None:
    """kubectl apply (replicas 2 → 3) → the deployment controller scales the ReplicaSet →
    the replicaset controller creates a Pod → the scheduler binds it → the kubelet reports it."""
    apply = kubectl_writes("PATCH", "deployments")[0]
    tree = chains().tree(apply)
    reports = [e for e in tree if step(e) == ROLLOUT[-1]]
    first = reports[0]
    path = chains().chain(first)
    assert path[0] is apply
    assert [step(e) for e in path[1:]] == ROLLOUT
    assert path[3].info.name == first.info.name  # the binding of that very pod
    # the kubelet's later reports of that pod follow the event of its own previous report
    for later in reports[1:]:
        assert chains().chain(later)[: len(path)] == path
        assert later.info.name == first.info.name
        cause = chains().caused_by(later)
        assert cause is not None and cause.own  # its own change, come back through its watch


def test_each_hop_is_the_watch_event_that_carried_the_change() -> None:
    apply = kubectl_writes("PATCH", "deployments")[0]
    report = next(e for e in chains().tree(apply) if step(e) == ROLLOUT[-1])
    scale, create, bind, _ = chains().chain(report)[1:]
    shared = "controller-manager/shared-informers"
    replicaset, pod = (
        f"replicasets.apps default/{scale.info.name}",
        f"pods default/{bind.info.name}",
    )
    expected = [
        (scale, "MODIFIED", "deployments.apps default/web", shared, apply),
        (create, "MODIFIED", replicaset, shared, scale),
        (bind, "ADDED", pod, "scheduler", create),
        (report, "ADDED", pod, "kubelet", bind),
    ]
    for exchange, kind, obj, watcher, by in expected:
        cause = chains().caused_by(exchange)
        assert cause is not None and cause.exchange == by.id, step(exchange)
        assert (cause.hop.type, str(cause.hop.ref), cause.hop.watcher) == (kind, obj, watcher)
        assert by.time < cause.hop.time < exchange.time  # delivered after, reacted after
        assert cause.alternatives == 0 and not cause.own
        record = chains().to_json(exchange)["caused_by"]
        assert record["delivered_ms"] > 0 and record["reacted_ms"] > 0


def test_the_first_apply_fans_out_to_both_pods() -> None:
    create = kubectl_writes("POST", "deployments")[0]
    tree = chains().tree(create)
    bound = {e.info.name for e in tree if step(e) == ROLLOUT[2]}
    reported = {e.info.name for e in tree if step(e) == ROLLOUT[3]}
    assert len(bound) == 2 and bound == reported
    assert {step(e) for e in tree} >= set(ROLLOUT[1:]) | {
        ("controller-manager/deployment-controller", "create", "replicasets", "")
    }


def test_deleting_the_deployment_sets_off_the_garbage_collector() -> None:
    delete = kubectl_writes("DELETE", "deployments")[0]
    collected = {(e.info.resource, e.info.verb) for e in chains().tree(delete)}
    assert ("replicasets", "delete") in collected and ("pods", "delete") in collected


def test_no_cause_is_invented() -> None:
    """Users' writes, and the controllers' start-up work that no watch event explains, have
    no cause; every cause is an event that came before the write, within the window."""
    analysis = chains().analysis
    for exchange in analysis.exchanges:
        cause = chains().caused_by(exchange)
        if exchange.component == "kubectl":
            assert cause is None
        if cause is None:
            continue
        assert cause.hop.time < exchange.time
        assert exchange.time - cause.hop.time <= 5.0
        if cause.exchange is not None:
            assert chains().exchange(cause.exchange).time < cause.hop.time
    # the garbage collector's and quota controller's metadata informers start on their own
    starts = [e for e in analysis.exchanges if e.component.endswith("metadata-informers")]
    assert starts and all(chains().caused_by(e) is None for e in starts)


def test_a_proxied_recording_has_no_inferred_cause() -> None:
    """Causes inferred from resourceVersions are for audit-only exchanges (whose watches
    went unrecorded); a proxy's recording links each write to a recorded event or LIST."""
    causes = [chains().caused_by(e) for e in chains().analysis.exchanges]
    found = [c for c in causes if c is not None]
    assert found and not [c for c in found if c.hop.inferred]
    assert all(c.hop.event is not None or c.hop.type == "LISTED" for c in found)
