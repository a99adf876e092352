"""The object history: time order, the (object, resourceVersion) index, staleness, uids."""

from __future__ import annotations

from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.history import History, Observation
from k8s_wiretap.kube.refs import ObjectRef
from tests.recorded import story

WEB = ObjectRef("apps", "deployments", "default", "web")


def seen(time: float, version: int, uid: str = "u1", source: str = "get") -> Observation:
    obj = {"metadata": {"name": "web", "resourceVersion": str(version), "uid": uid}}
    return Observation.of(obj, time, source, f"x{time}")


def test_observations_arriving_out_of_order_are_kept_in_time_order() -> None:
    history = History()
    for time, version in [(3.0, 30), (1.0, 10), (2.0, 20), (2.0, 21)]:
        history.add(WEB, seen(time, version))
    assert [o.resource_version for o in history.timeline(WEB)] == [10, 20, 21, 30]
    assert history.versions(WEB) == [10, 20, 21, 30]
    before = history.before(WEB, 2.5)
    assert before is not None and before.resource_version == 21
    assert history.before(WEB, 1.0) is None  # strictly before


def test_a_version_indexes_every_observation_of_it() -> None:
    history = History()
    history.add(WEB, seen(1.0, 10, source="patch"))
    history.add(WEB, seen(1.1, 10, source="watch"))
    history.add(WEB, seen(1.2, 11, source="watch"))
    assert [o.source for o in history.at(WEB, 10)] == ["patch", "watch"]
    assert history.at(WEB, 12) == [] and history.at(WEB.with_name("db"), 10) == []


def test_stale_when_a_write_came_between() -> None:
    history = History()
    for time, version in [(1.0, 10), (2.0, 15), (3.0, 20)]:
        history.add(WEB, seen(time, version))
    first, second = history.timeline(WEB)[:2]
    assert history.stale(WEB, first, 20)  # version 15 was written in between
    assert not history.stale(WEB, second, 20)
    assert history.stale(WEB, history.timeline(WEB)[2], 15)  # newer than the write's result
    assert not history.stale(WEB, Observation.of({}, 1.0, "get", "x"), 20)  # no version known


def test_an_object_created_again_under_its_name_is_another_object() -> None:
    history = History()
    history.add(WEB, seen(1.0, 10, uid="old"))
    assert history.before(WEB, 2.0, uid="new") is None
    assert history.before(WEB, 2.0, uid="old") is not None
    history.add(WEB, seen(1.5, 12, uid="new"))
    history.add(WEB, seen(1.6, 13, uid="old"))  # a late event of the old one
    found = history.before(WEB, 2.0, uid="new")
    assert found is not None and found.resource_version == 12


def test_a_write_is_linked_to_the_watch_events_it_caused() -> None:
    analysis = Analysis.of(story())
    patch = next(
        e
        for e in analysis.exchanges
        if e.component == "kubectl" and e.method == "PATCH" and e.info.resource == "deployments"
    )
    after = analysis.response_body(patch).value
    ref = analysis.ref(patch, after)
    assert ref == WEB
    seen_by = analysis.history.at(ref, int(after["metadata"]["resourceVersion"]))
    assert [o.time for o in seen_by] == sorted(o.time for o in seen_by)
    assert [o.source for o in seen_by if o.exchange == patch.id] == ["patch"]
    watchers = {o.component for o in seen_by if o.source == "watch"}
    # the controller manager's controllers share one informer factory, whose watches carry
    # its own User-Agent suffix: it is what receives the event for the deployment controller
    assert "controller-manager/shared-informers" in watchers, watchers
    assert all(o.event is not None for o in seen_by if o.source == "watch")


def test_a_namespace_has_one_history_however_it_was_seen() -> None:
    analysis = Analysis.of(story())
    refs = {r for r in analysis.history if r.resource == "namespaces"}
    assert refs and all(r.namespace == "" for r in refs)
    sources = {
        o.source for o in analysis.history.timeline(ObjectRef("", "namespaces", "", "default"))
    }
    assert "watch" in sources or "list" in sources


def test_forgetting_keeps_the_latest_observation_before_and_everything_after() -> None:
    history = History()
    for time, version in [(1.0, 10), (2.0, 15), (3.0, 20), (4.0, 25)]:
        history.add(WEB, seen(time, version))
    history.forget(3.5)
    assert [o.resource_version for o in history.timeline(WEB)] == [20, 25]
    assert history.at(WEB, 10) == [] and len(history.at(WEB, 20)) == 1
    assert history.versions(WEB) == [20, 25]
    before = history.before(WEB, 3.7)  # what a patch at 3.7 starts from is still there
    assert before is not None and before.resource_version == 20
    assert history.stale(WEB, before, 30)  # 25 came between, still known
    assert history.held == 2
    history.forget(100.0)  # an object seen long ago keeps its latest observation
    assert [o.resource_version for o in history.timeline(WEB)] == [25]
