"""What and why, in words, on the real recording of the apply story."""

from __future__ import annotations

from functools import cache

from hypothesis import example, given
from hypothesis import strategies as st

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.reader import load
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.summaries import FACTS, Explanation, Summaries, _squeezed, rules
from k8s_wiretap.kube.reads import ETCD, WATCH_CACHE, served_from
from k8s_wiretap.kube.release import Release
from tests.recorded import STORY_1_20, story


@cache
def summaries() -> Summaries:
    return Summaries(Analysis.of(story()))


def first(component: str, verb: str, resource: str, subresource: str = "") -> Exchange:
    return next(
        e
        for e in summaries().analysis.exchanges
        if (e.component, e.info.verb, e.info.resource, e.info.subresource)
        == (component, verb, resource, subresource)
    )


def explained(exchange: Exchange) -> Explanation:
    return summaries().explain(exchange)


def test_the_apply_story_in_words() -> None:
    analysis = summaries().analysis
    kubectl = [e for e in analysis.exchanges if e.component == "kubectl"]
    get = next(e for e in kubectl if e.info.resource == "deployments" and e.status == 404)
    assert explained(get).summary == "kubectl apply finds no Deployment default/web"
    assert explained(get).etcd == {"key": "/registry/deployments/default/web"}
    create = next(
        e for e in kubectl if e.info.verb == "create" and e.info.resource == "deployments"
    )
    assert explained(create).summary == "kubectl apply creates Deployment default/web"
    patch = next(e for e in kubectl if e.info.verb == "patch" and e.info.resource == "deployments")
    text = explained(patch)
    assert text.summary == (
        "kubectl apply patches Deployment default/web (strategic merge patch, three-way)"
    )
    assert "fields of the last applied file you dropped (set to null)" in text.why
    assert text.etcd is not None and text.etcd["key"] == "/registry/deployments/default/web"
    written = analysis.response_body(patch).value["metadata"]["resourceVersion"]
    assert text.etcd["revision"] == int(written)


def test_a_controller_says_which_event_set_it_off() -> None:
    scale = first("controller-manager/deployment-controller", "update", "replicasets")
    text = explained(scale)
    assert text.summary.startswith("the deployment controller updates ReplicaSet web-")
    assert "the MODIFIED of Deployment default/web after kubectl's patch reached it" in text.why
    pod = first("controller-manager/replicaset-controller", "create", "pods")
    assert explained(pod).summary.startswith("the replicaset controller creates Pod web-")
    assert "gets an ownerReference to it and no node yet" in explained(pod).why
    bind = first("scheduler", "create", "pods", "binding")
    assert explained(bind).summary == f"the scheduler binds Pod {bind.info.name} to node node-1"
    assert "after the replicaset controller's create reached it" in (explained(bind).why)
    assert explained(bind).etcd == {
        "key": f"/registry/pods/default/{bind.info.name}",
        "note": "the binding sets the pod's spec.nodeName: the pod is written",
    }
    report = first("kubelet", "patch", "pods", "status")
    assert explained(report).summary == f"the kubelet reports Pod {report.info.name}'s status"
    assert "after the scheduler's binding reached it" in explained(report).why


def test_the_kubelet_and_informers() -> None:
    register = first("kubelet", "create", "nodes")
    assert explained(register).summary == "the kubelet registers node node-1"
    etcd = explained(register).etcd
    assert etcd is not None
    assert etcd["key"] == "/registry/minions/node-1"
    watch = first("kubelet", "watch", "pods")
    assert (
        explained(watch).summary
        == "the kubelet watches the pods bound to its node (spec.nodeName=node-1)"
    )
    informer = first("controller-manager/shared-informers", "watch", "deployments")
    assert explained(informer).rule == "informer-watch-list"
    assert explained(informer).summary.startswith(
        "controller-manager/shared-informers's informer starts: a watch list of every Deployment"
    )
    assert "k8s.io/initial-events-end" in explained(informer).why
    lease = first("kubelet", "update", "leases")
    assert explained(lease).noise and explained(lease).rule == "kubelet-lease"


def test_on_1_20_an_informer_starts_with_a_list() -> None:
    """1.20's informers LIST (in pages of 500) and then WATCH from the list's version."""
    old = Summaries(Analysis.of(load(STORY_1_20)))
    informer = next(
        e
        for e in old.analysis.exchanges
        if e.component == "controller-manager/shared-informers"
        and (e.info.verb, e.info.resource) == ("list", "deployments")
    )
    assert old.explain(informer).summary == (
        "controller-manager/shared-informers's informer starts: lists every Deployment "
        f"(from {WATCH_CACHE})"
    )
    assert not any(e.info.param("sendInitialEvents") for e in old.analysis.exchanges)


def test_refused_and_unavailable_requests_say_so() -> None:
    """While the default release's API server restarts the wiretap answers 503; right after, its
    RBAC authorizer has not loaded the roles yet and refuses the control plane (403)."""
    analysis = summaries().analysis
    refused = [e for e in analysis.exchanges if e.status in (403, 503)]
    assert {e.status for e in refused} == {403, 503}
    rules: dict[int | None, str] = {403: "forbidden", 503: "unavailable"}
    for exchange in refused:
        text = explained(exchange)
        assert text.rule == rules[exchange.status]
        assert str(exchange.status) in text.summary


def test_every_exchange_is_explained_by_a_rule_with_a_source() -> None:
    generic = {"write", "read", "other"}
    for exchange in summaries().analysis.exchanges:
        text = explained(exchange)
        assert text.summary and "?" not in text.summary, (exchange.path, text)
        rule = next(r for r in rules() if r.id == text.rule)
        assert rule.source or rule.id in generic
    counted = {explained(e).rule for e in summaries().analysis.exchanges}
    assert not counted & {"other"}  # nothing in the story falls through to the catch-all


def test_where_reads_are_served_from_depends_on_the_release() -> None:
    assert served_from("list", {}, Release(1, 20)) == ETCD
    assert served_from("list", {}, Release(1, 31)) == f"{WATCH_CACHE} (consistent, since 1.31)"
    assert (
        served_from("list", {"resourceVersion": "0", "limit": "500"}, Release(1, 20)) == WATCH_CACHE
    )
    assert served_from("list", {"resourceVersion": "42", "limit": "500"}, Release(1, 20)) == "etcd"
    assert served_from("get", {"resourceVersion": "0"}, Release(1, 20)) == WATCH_CACHE
    assert served_from("get", {}, Release(1, 33)) == ETCD


def test_an_api_server_restart_relists_and_an_old_watch_expires() -> None:
    analysis = summaries().analysis
    relists = [e for e in analysis.exchanges if explained(e).rule == "informer-relist"]
    assert relists and all(e.info.verb == "list" for e in relists)
    assert any(e.component == "controller-manager/shared-informers" for e in relists)
    (expired,) = [e for e in analysis.exchanges if explained(e).rule == "watch-expired"]
    assert explained(expired).summary == (
        "kubectl's watch of every ConfigMap in default from 1: 410 Gone, too old"
    )


def test_every_write_shows_what_etcd_stored() -> None:
    """The committed recording holds etcd's own view (the lab's wiretap runs --etcd): each
    write's key and revision find the record etcd stored, and it is the object written."""
    analysis = summaries().analysis
    assert analysis.etcd_recorded
    checked = deleted = 0
    for exchange in analysis.exchanges:
        etcd = explained(exchange).etcd
        if not etcd or "revision" not in etcd:
            continue
        stored = etcd["stored"]
        assert stored is not None, (exchange.method, exchange.path)
        value, written = stored["value"], analysis.response_body(exchange).value
        if stored["format"] == "deleted":  # a final DELETE (grace period over)
            change = analysis.stored(etcd["key"], etcd["revision"])
            assert exchange.method == "DELETE" and change is not None and change[0].deleted
            assert value is None
            deleted += 1
            continue
        assert value["metadata"]["name"] == written["metadata"]["name"]
        assert value["metadata"].get("uid") == written["metadata"].get("uid")
        checked += 1
    assert checked > 200 and deleted > 0


def test_kubectl_reads_openapi_v3_by_group_version_on_1_37_and_v2_on_1_20() -> None:
    said = {
        explained(e).rule: explained(e).summary
        for e in summaries().analysis.exchanges
        if e.path.startswith("/openapi/")
    }
    assert said["kubectl-openapi-v3-index"].endswith(
        "reads the OpenAPI v3 index (one URL per group version, with its hash)"
    )
    assert said["kubectl-openapi-v3-group-version"].startswith(
        "kubectl apply: downloads OpenAPI v3 /openapi/v3/"
    )
    # the custom resource: v3 offers it no strategic merge patch, so kubectl asks v2
    assert "kubectl-openapi" in said
    old = Summaries(Analysis.of(load(STORY_1_20)))
    rules_1_20 = {old.explain(e).rule for e in old.analysis.exchanges if "/openapi/" in e.path}
    assert rules_1_20 == {"kubectl-openapi-v3-absent", "kubectl-openapi", "kubectl-openapi-cached"}


@given(st.text(alphabet=st.sampled_from("ab \t\n\r\x0b\x0c\x1c\x85\xa0\u2003é.")))
@example(" a")
@example("a  b")
@example("a\u2003b")
def test_a_filled_template_is_squeezed_as_split_and_join_squeeze_it(text: str) -> None:
    """The fast path (nothing to squeeze) and the slow one say the same."""
    assert _squeezed(text) == " ".join(text.split())


def test_the_rules_match_on_the_facts_every_exchange_has() -> None:
    """FACTS (what a rule may match on, checked when the rules load) is what _facts gives."""
    analysis = summaries().analysis
    for exchange in analysis.exchanges[:50]:
        assert set(summaries()._facts(exchange)) == FACTS
    assert {key for rule in rules() for key in rule.match} <= FACTS
