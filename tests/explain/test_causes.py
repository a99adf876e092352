"""What set each write off, on the committed wide session (recordings/wide-session.jsonl.gz, the
whole control plane of the default release through the proxy): the relations a controller's code
follows (a namespace, the pods a selector picks, a Service's endpoints, a token's pod, with the
namespace controller's 5 s wait), failed writes' causes, retries, and the timers and start-ups
`controllers.yaml` names. Exchanges are found by what they are, not by id."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from bench.explain_coverage import RECORDING
from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.reader import iter_records
from k8s_wiretap.explain.chains import Cause
from k8s_wiretap.explain.explainer import Explainer
from k8s_wiretap.explain.stream import explained
from k8s_wiretap.kube.controllers import Reason
from k8s_wiretap.kube.selectors import selects


@dataclass
class Seen:
    exchange: Exchange
    cause: Cause | None
    reason: Reason | None
    said: str
    sent: Any  # the request body, decoded
    answer: Any  # the response body, decoded
    json: dict[str, Any]

    def is_(self, component: str, verb: str, resource: str, status: int | None = None) -> bool:
        info = self.exchange.info
        what = info.resource + (f"/{info.subresource}" if info.subresource else "")
        return (
            self.exchange.component == component
            and info.verb == verb
            and what == resource
            and (status is None or self.exchange.status == status)
        )


def _seen(explainer: Explainer, exchange: Exchange) -> Seen:
    chains, analysis = explainer.chains, explainer.analysis
    return Seen(
        exchange,
        chains.caused_by(exchange),
        chains.reason(exchange),
        chains.said(exchange),
        analysis.request_body(exchange).value,
        analysis.response_body(exchange).value,
        chains.to_json(exchange),
    )


@pytest.fixture(scope="module")
def seen() -> list[Seen]:
    out: list[Seen] = []
    explained(iter_records(RECORDING, []), _seen, out.append)
    return out


def _all(seen: list[Seen], *what: Any) -> list[Seen]:
    found = [s for s in seen if s.is_(*what)]
    assert found, what
    return found


def test_the_namespace_controllers_deletions_follow_the_namespace_5_s_later(
    seen: list[Seen],
) -> None:
    """kubectl delete namespace → (5 s) → deletecollection of each resource; each round's
    status update → (5 s) → the next round (namespaceDeletionGracePeriod)."""
    deletes = _all(seen, "controller-manager/namespace-controller", "deletecollection", "pods")
    for s in deletes:
        assert s.cause is not None
        assert (s.cause.hop.ref.resource, s.cause.hop.ref.name) == ("namespaces", "shop")
        assert s.cause.hop.type == "MODIFIED"
        assert s.exchange.time - s.cause.hop.time >= 5.0
        assert "which it acts on 5 s after" in s.said
    first = deletes[0].cause
    assert first is not None and first.exchange is not None
    by_id = {s.exchange.id: s for s in seen}
    assert by_id[first.exchange].is_("kubectl", "delete", "namespaces")
    later = [s.cause for s in deletes[1:] if s.cause]
    assert later and all(c.own for c in later)  # its own status update's event


def test_a_budgets_status_follows_the_pods_it_selects(seen: list[Seen]) -> None:
    """Each update has a cause: a pod the budget selects (by labels), or the budget itself."""
    updates = _all(
        seen, "controller-manager/disruption-controller", "update", "poddisruptionbudgets/status"
    )
    pods = {s.answer["metadata"]["name"]: s.answer for s in seen if _is_pod(s.answer)}
    by_pod = 0
    for s in updates:
        assert s.cause is not None, s.said
        hop = s.cause.hop
        assert hop.ref.resource in ("pods", "poddisruptionbudgets"), s.said
        if hop.ref.resource == "pods":
            labels = pods[hop.ref.name]["metadata"]["labels"]
            assert selects(s.sent["spec"]["selector"], labels), (s.sent, labels)
            by_pod += 1
    assert by_pod


def _is_pod(value: Any) -> bool:
    return isinstance(value, dict) and value.get("kind") == "Pod"


def test_endpoints_follow_the_pods_of_their_service(seen: list[Seen]) -> None:
    """An Endpoints is named as its Service: created, then updated, on a change of the
    Service or of one of its pods (web-…, db-…), or on its own."""
    by_pod = 0
    for s in _all(seen, "controller-manager/endpoint-controller", "update", "endpoints", 200):
        assert s.cause is not None, s.said
        ref, name = s.cause.hop.ref, s.exchange.info.name
        assert (ref.resource == "pods" and ref.name.startswith(f"{name}-")) or ref.name == name
        by_pod += ref.resource == "pods"
    assert by_pod
    for s in _all(seen, "controller-manager/endpoint-controller", "create", "endpoints", 201):
        assert s.cause is not None, s.said
        ref, name = s.cause.hop.ref, s.exchange.info.name or s.sent["metadata"]["name"]
        assert (ref.resource, ref.name) == ("services", name) or (
            ref.resource == "pods" and ref.name.startswith(f"{name}-")
        ), s.said


def test_a_kubelets_token_request_follows_the_pod_it_is_bound_to(seen: list[Seen]) -> None:
    for s in _all(seen, "kubelet", "create", "serviceaccounts/token"):
        bound = s.sent["spec"]["boundObjectRef"]
        assert s.cause is not None, s.said
        assert (s.cause.hop.ref.resource, s.cause.hop.ref.name) == ("pods", bound["name"])


def test_a_refused_write_has_its_cause_too(seen: list[Seen]) -> None:
    conflicts = _all(
        seen, "controller-manager/deployment-controller", "update", "deployments/status", 409
    )
    assert all(s.cause is not None for s in conflicts)
    assert all(s.json["caused_by"]["event"]["object"] for s in conflicts)


def test_leases_are_renewed_on_a_timer_whatever_came_before(seen: list[Seen]) -> None:
    """The kubelet's Lease is owned by its Node, whose events reach it: a renewal is still
    its timer, not a reaction."""
    for who in ("kubelet", "controller-manager/leader-election", "scheduler/leader-election"):
        for s in _all(seen, who, "update", "leases", 200):
            assert s.cause is None and s.json["caused_by"] is None
            assert s.reason is not None and s.reason.kind == "timer"
            assert s.json["reason"]["kind"] == "timer"
            assert s.said.startswith("a timer: every ")


def test_start_ups_are_named(seen: list[Seen]) -> None:
    (register,) = _all(seen, "kubelet", "create", "nodes", 201)
    assert register.said.startswith("its start-up: at start it registers its node")
    accounts = _all(seen, "controller-manager", "create", "serviceaccounts", 201)
    assert all(s.reason and s.reason.kind == "start-up" for s in accounts)
    leader = [
        s
        for s in _all(seen, "scheduler", "create", "events", 201)
        if (s.sent.get("involvedObject") or s.sent.get("regarding"))["kind"] == "Lease"
    ]
    assert leader and leader[0].said.startswith("its start-up: once it becomes the leader")


def test_a_write_again_after_a_failure_is_a_retry_of_it(seen: list[Seen]) -> None:
    """The same client sends the same write of the same object again after the API server
    refused it, with no success of it in between (a success ends the retrying)."""
    by_id = {s.exchange.id: s for s in seen}
    retries = [s for s in seen if s.reason is not None and s.reason.kind == "retry"]
    assert retries
    for s in retries:
        assert s.reason is not None and s.reason.exchange is not None
        failed = by_id[s.reason.exchange]
        info, then = s.exchange.info, failed.exchange.info
        assert failed.exchange.component == s.exchange.component
        assert (then.verb, then.resource, then.namespace) == (
            info.verb,
            info.resource,
            info.namespace,
        )
        assert failed.exchange.status is not None and failed.exchange.status >= 400
        assert 0 < s.exchange.time - failed.exchange.time <= 60
        between = [
            o
            for o in seen
            if failed.exchange.time < o.exchange.time < s.exchange.time
            and o.exchange.component == s.exchange.component
            and (o.exchange.info.verb, o.exchange.info.resource) == (info.verb, info.resource)
            and o.exchange.info.name == info.name
            and (o.exchange.status or 0) < 300
        ]
        assert between == [], s.said
        assert s.said.startswith(f"a retry: it sends its {info.verb} again, ")
        assert s.said.endswith(f"after the API server refused it ({failed.exchange.status})")
        assert s.json["reason"]["exchange"] == failed.exchange.id


def test_a_write_nothing_explains_says_so(seen: list[Seen]) -> None:
    """The daemon set controller's new pod for the one the namespace controller deleted (5 s
    after `kubectl delete namespace`), refused 403 in the terminating namespace: no event of
    its DaemonSet came shortly before it, and the deleted pod is neither it nor its owner, so
    nothing the chains follow explains it, and nothing is made up for it. Every controller's
    write so left (a garbage collector's delete that no event reached in time, in some
    recordings) is said the same way."""
    refused = [
        s
        for s in _all(seen, "controller-manager/daemon-set-controller", "create", "pods", 403)
        if "is being terminated" in str((s.answer or {}).get("message"))
    ]
    assert len(refused) == 1
    assert refused[0].cause is None and refused[0].reason is None
    unexplained = [
        s
        for s in seen
        if s.exchange.info.verb in ("create", "update", "patch", "delete")
        and s.exchange.component.startswith("controller-manager/")
        and s.cause is None
        and s.reason is None
    ]
    assert refused[0] in unexplained
    for s in unexplained:
        assert s.said == "no watch event explains it, and no timer or start-up is known for it"
        assert s.json["caused_by"] is None and s.json["reason"] is None


REVISION = "deployment.kubernetes.io/revision"  # the deployment controller's, on each ReplicaSet


def _rollout_writes(seen: list[Seen]) -> list[tuple[Seen, Seen]]:
    """The deployment controller's scale-downs of a Deployment's old ReplicaSets (of a lower
    revision than its newest) and its refused (409) status updates, each with the change of
    that Deployment that started its latest rollout: the latest write by another client
    whose answer holds a pod template the Deployment had not had just before (its create,
    `set image`, `rollout restart`, `rollout undo`)."""
    template: dict[tuple[str, str], Any] = {}
    started: dict[tuple[str, str], Seen] = {}
    replicas: dict[tuple[str, str], int] = {}
    newest: dict[tuple[str, str], int] = {}  # a Deployment's highest ReplicaSet revision
    found: list[tuple[Seen, Seen]] = []
    for s in seen:
        info, answer = s.exchange.info, s.answer
        if s.is_("controller-manager/deployment-controller", "update", "deployments/status", 409):
            found.append((s, started[(info.namespace, info.name)]))
        if not isinstance(answer, dict) or not isinstance(answer.get("metadata"), dict):
            continue
        meta = answer["metadata"]
        if answer.get("kind") == "Deployment":
            key = (meta["namespace"], meta["name"])
            changed = answer["spec"]["template"] != template.get(key)
            template[key] = answer["spec"]["template"]
            if changed and _a_persons(s):
                started[key] = s
        owners = [o for o in meta.get("ownerReferences", []) if o["kind"] == "Deployment"]
        if answer.get("kind") != "ReplicaSet" or not owners:
            continue
        rs, deployment = (meta["namespace"], meta["name"]), (meta["namespace"], owners[0]["name"])
        revision = int(meta.get("annotations", {}).get(REVISION, 0))
        before = replicas.get(rs)
        replicas[rs] = answer["spec"]["replicas"]
        newest[deployment] = max(revision, newest.get(deployment, 0))
        if (
            s.is_("controller-manager/deployment-controller", "update", "replicasets")
            and before is not None
            and replicas[rs] < before
            and revision < newest[deployment]
        ):
            found.append((s, started[deployment]))
    return found


def _a_persons(s: Seen) -> bool:
    """A write that succeeded, by a client that is no controller (kubectl)."""
    return (
        s.exchange.info.verb in ("create", "update", "patch")
        and (s.exchange.status or 0) < 300
        and not s.exchange.component.startswith("controller-manager/")
    )


def test_a_rollouts_writes_belong_to_the_change_that_started_it(seen: list[Seen]) -> None:
    """`kubectl set image` starts a rollout: the deployment controller scales the old
    ReplicaSet down as the new one's pods come up, and a status update of it sent with a
    stale resourceVersion is refused (409). Each of these is in the tree of the change
    that started that rollout, or of a later change of the same Deployment (a `kubectl
    apply` of its replicas meanwhile) — never of an older one (the first `kubectl apply`,
    through an event of the old ReplicaSet's pods seconds before), and through an event
    shortly before it (the new ReplicaSet's, whose pods came up)."""
    by_id = {s.exchange.id: s for s in seen}
    found = _rollout_writes(seen)
    assert any(s.exchange.status == 409 for s, _ in found)
    assert any(s.exchange.info.resource == "replicasets" for s, _ in found)
    for s, started in found:
        assert s.cause is not None, s.said
        root = by_id[s.json["chain"][0]]
        assert _a_persons(root), (s.said, root.said)
        assert root.exchange.info.name == started.exchange.info.name, s.said
        assert started.exchange.time <= root.exchange.time < s.exchange.time, s.said
        assert s.exchange.time - s.cause.hop.time < 0.5, s.said


@pytest.mark.parametrize("name", ["apply-story", "history-session"])
def test_the_other_sessions_rollouts_too(name: str) -> None:
    """The same in the apply story and the history session (a `kubectl apply --server-side`
    of the replicas while `set image`'s rollout goes on)."""
    recorded: list[Seen] = []
    explained(iter_records(RECORDING.with_name(f"{name}.jsonl.gz"), []), _seen, recorded.append)
    test_a_rollouts_writes_belong_to_the_change_that_started_it(recorded)
