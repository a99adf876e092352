"""Every claim a walkthrough's chapter makes, checked on its recording: the chapters of
recordings/*.walkthrough.yaml other than the apply story's (test_walkthrough.py drives that
one), each found as the TUI finds it (`find_steps`), then held against the exchanges, their
watch events and etcd's records."""

from __future__ import annotations

from functools import cache
from urllib.parse import parse_qs, urlsplit

import pytest
from textual.pilot import Pilot

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.reader import Recording, load
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.views.tui import ReplayApp
from k8s_wiretap.views.tui.listing.window import Windows
from k8s_wiretap.views.tui.walkthrough import chapters
from k8s_wiretap.views.tui.walkthrough.steps import find_steps
from tests.conftest import cli
from tests.recorded import STORY
from tests.views.tui.recorded import explained_index
from tests.views.tui.walkthrough.test_walkthrough import at_step, narration, panel, walk


@cache
def _story() -> tuple[Recording, Analysis]:
    recording = load(STORY)
    return recording, Analysis.of(recording)


@cache
def etcd_steps() -> dict[str, Exchange]:
    """The etcd-and-watches chapters' exchanges, by chapter id."""
    index = explained_index("1.37")
    spec = chapters.load("etcd-and-watches")
    assert spec.recording == STORY
    steps = find_steps(spec, index, Windows(index))
    assert steps.missing == [], steps.missing
    recording, _ = _story()
    return {s.chapter.id: recording.by_id()[index.rows[s.position].id] for s in steps.steps}


def query(exchange: Exchange) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(exchange.path).query).items()}


def answered_rv(exchange: Exchange) -> int:
    body = _story()[1].response_body(exchange).value
    return int(body["metadata"]["resourceVersion"])


def etcd_at(key: str) -> list[tuple[int, bytes]]:
    recording, _ = _story()
    return [(c.revision, c.value.data if c.value else b"") for c in recording.etcd if c.key == key]


def test_the_walkthroughs_are_listed_with_their_titles() -> None:
    result = cli("walkthrough", "--list")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    for name in chapters.names():
        title = chapters.load(name).title
        assert any(line.split()[0] == name and title in line for line in lines), (name, lines)


def test_the_chapters_are_the_story_in_order() -> None:
    assert list(etcd_steps()) == [
        "stored",
        "created",
        "watch-list",
        "kubectl-watch",
        "broken",
        "resume",
        "relist",
        "rewatch",
        "too-old",
    ]


def test_the_record_is_protobuf_at_its_key_and_its_revision_is_the_resource_version() -> None:
    patch = etcd_steps()["stored"]
    assert (patch.method, patch.info.resource, patch.info.name) == ("PATCH", "deployments", "web")
    stored = dict(etcd_at("/registry/deployments/default/web"))
    assert answered_rv(patch) in stored
    assert stored[answered_rv(patch)].startswith(b"k8s\x00")  # the protobuf envelope's magic
    recording, _ = _story()
    custom = [c for c in recording.etcd if c.key.startswith("/registry/workshop.example.com/")]
    assert custom and all(c.value is None or c.value.data.startswith(b"{") for c in custom)


def test_a_create_is_a_new_key_and_other_writes_take_the_revisions_between() -> None:
    created, patched = etcd_steps()["created"], etcd_steps()["stored"]
    assert (created.method, created.status) == ("POST", 201)
    first, later = answered_rv(created), answered_rv(patched)
    revisions = [r for r, _ in etcd_at("/registry/deployments/default/web")]
    assert min(revisions) == first < later
    recording, _ = _story()
    between = {c.key.split("/")[2] for c in recording.etcd if first < c.revision < later}
    assert {"replicasets", "pods", "leases", "events"} <= between


def test_the_informer_s_watch_list_then_the_patch_as_a_modified_event() -> None:
    watch, patch = etcd_steps()["watch-list"], etcd_steps()["stored"]
    options = query(watch)
    assert options["sendInitialEvents"] == "true"
    assert options["resourceVersionMatch"] == "NotOlderThan"
    events = _story()[1].events(watch)
    end = next(n for n, e in enumerate(events) if e.ends_initial_events)
    assert end == 0  # no Deployment yet: no initial ADDED before the bookmark
    added = events[1]
    assert (added.type, added.name) == ("ADDED", "web")
    assert added.resource_version == str(answered_rv(etcd_steps()["created"]))
    (modified,) = [
        e
        for e in events[end:]
        if e.type == "MODIFIED"
        and e.name == "web"
        and e.resource_version == str(answered_rv(patch))
    ]
    assert modified.time is not None and patch.end is not None
    assert 0 <= modified.time - patch.time < 1.0  # milliseconds after the write


def test_kubectl_watches_from_its_list_s_resource_version_and_gets_only_what_came_after() -> None:
    watch = etcd_steps()["kubectl-watch"]
    recording, analysis = _story()
    (listed,) = [
        e
        for e in recording.exchanges
        if e.component == "kubectl" and e.info.verb == "list" and e.info.resource == "pods"
        if e.time < watch.time and "labelSelector" not in query(e)
    ][-1:]
    since = answered_rv(listed)
    assert int(query(watch)["resourceVersion"]) == since
    versions = [int(e.resource_version) for e in analysis.events(watch) if e.resource_version]
    assert versions and min(versions) > since and len(set(versions)) == len(versions)


def test_the_broken_watch_resumes_from_its_last_resource_version_then_lists_then_watches() -> None:
    steps = etcd_steps()
    broken, resume, relist, rewatch = (steps[k] for k in ("broken", "resume", "relist", "rewatch"))
    assert query(broken)["fieldSelector"] == "metadata.name=node-1"
    assert broken.end is not None and "closed" in (broken.end.error or "")
    last = [e.resource_version for e in _story()[1].events(broken) if e.resource_version][-1]
    assert (resume.status, query(resume)["resourceVersion"]) == (503, last)
    assert query(resume)["sendInitialEvents"] == "true"
    assert resume.time > broken.time
    assert (relist.info.verb, query(relist)["resourceVersion"]) == ("list", last)
    assert answered_rv(relist) > int(last) and relist.time > resume.time
    assert rewatch.status == 200 and "sendInitialEvents" not in query(rewatch)
    assert int(query(rewatch)["resourceVersion"]) == answered_rv(relist)
    assert rewatch.time > relist.time


def test_nodes_are_kept_under_minions() -> None:
    assert etcd_at("/registry/minions/node-1")


def test_too_old_is_one_error_event_410_expired() -> None:
    watch = etcd_steps()["too-old"]
    assert (watch.status, query(watch)["resourceVersion"]) == (200, "1")
    (event,) = _story()[1].events(watch)
    assert event.type == "ERROR" and event.expired
    assert event.object["reason"] == "Expired"


@pytest.mark.parametrize("name", ["etcd-and-watches"])
def test_the_text_runs_every_chapter(name: str) -> None:
    result = cli("walkthrough", name, "--text")
    assert result.returncode == 0, result.stderr
    for chapter in chapters.load(name).chapters:
        assert chapter.title in result.stdout


@pytest.mark.parametrize("name", ["etcd-and-watches"])
def test_every_step_in_the_tui_selects_its_exchange_and_tab(name: str) -> None:
    """Driven as a person drives it: → through every chapter, each selecting the exchange
    the TUI's own finder gave it and showing its tab, with its title in the narration."""
    spec = chapters.load(name)

    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        total = len(spec.chapters)
        for number, chapter in enumerate(spec.chapters, 1):
            said = narration(app)
            assert f"{number}/{total}" in said and chapter.title in said
            step = panel(app).current
            assert step is not None and step.chapter.id == chapter.id
            assert app.exchange_list.selected == step.position
            assert app.detail_pane.active == chapter.tab
            await pilot.press("right")
            await at_step(app, pilot)

    walk(script, name)
