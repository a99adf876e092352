"""Every claim a walkthrough's chapter makes, checked on its recording: the chapters of
recordings/*.walkthrough.yaml other than the apply story's (test_walkthrough.py drives that
one), each found as the TUI finds it (`find_steps`), then held against the exchanges, their
watch events and etcd's records."""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from itertools import pairwise
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from textual.pilot import Pilot

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.reader import Recording, load
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.views.tui import ReplayApp
from k8s_wiretap.views.tui.listing.explaining import explain_rows
from k8s_wiretap.views.tui.listing.index import RecordingIndex
from k8s_wiretap.views.tui.listing.window import Windows
from k8s_wiretap.views.tui.walkthrough import chapters
from k8s_wiretap.views.tui.walkthrough.steps import find_steps
from tests.conftest import cli
from tests.recorded import RECORDINGS, STORY
from tests.views.tui.recorded import explained_index
from tests.views.tui.walkthrough.test_walkthrough import at_step, narration, panel, walk


@cache
def _story() -> tuple[Recording, Analysis]:
    recording = load(STORY)
    return recording, Analysis.of(recording)


@cache
def etcd_steps() -> dict[str, Exchange]:
    """The etcd-and-watches chapters' exchanges, by chapter id."""
    index = explained_index("default")
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
    assert {"replicasets", "pods", "events"} <= between


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


def _refused(attempt: Exchange) -> None:
    """A watch the restarting API server refused: 503 from the wiretap while the server did
    not listen, or 403 while its authorizer had not loaded the RBAC bindings yet."""
    said = _story()[1].response_body(attempt).value
    if attempt.status == 503:
        assert said["reason"] == "ServiceUnavailable" and "is unreachable" in said["message"]
    else:
        assert attempt.status == 403
        assert 'User "system:kube-scheduler" cannot watch resource "nodes"' in said["message"]


def test_the_broken_watch_resumes_from_its_last_resource_version_then_lists_then_watches() -> None:
    steps = etcd_steps()
    broken, resume, relist, rewatch = (steps[k] for k in ("broken", "resume", "relist", "rewatch"))
    assert {e.component for e in (broken, resume, relist, rewatch)} == {"scheduler"}
    assert broken.end is not None and "closed" in (broken.end.error or "")
    last = [e.resource_version for e in _story()[1].events(broken) if e.resource_version][-1]
    attempts = [
        e
        for e in _story()[1].exchanges
        if e.component == "scheduler"
        and (e.info.verb, e.info.resource) == ("watch", "nodes")
        and broken.time < e.time < relist.time
    ]
    assert attempts[0] is resume
    for attempt in attempts:  # a watch from there, or a watch list not older than that
        _refused(attempt)
        assert query(attempt)["resourceVersion"] == last
        if "sendInitialEvents" in query(attempt):
            assert query(attempt)["sendInitialEvents"] == "true"
            assert query(attempt)["resourceVersionMatch"] == "NotOlderThan"
    assert (relist.info.verb, query(relist)["resourceVersion"]) == ("list", last)
    assert answered_rv(relist) > int(last)
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


@cache
def explained_story() -> dict[str, dict[str, Any]]:
    """`explain --format json` of the apply story, by exchange id."""
    result = cli("explain", str(STORY), "--format", "json")
    assert result.returncode == 0, result.stderr
    said = [json.loads(line) for line in result.stdout.splitlines()]
    return {row["id"]: row for row in said}


@cache
def who_steps() -> dict[str, str]:
    """The who-does-what chapters' exchange ids, by chapter id."""
    index = explained_index("default")
    steps = find_steps(chapters.load("who-does-what"), index, Windows(index))
    assert steps.missing == [], steps.missing
    return {s.chapter.id: index.rows[s.position].id for s in steps.steps}


def test_the_map_is_every_client_counted_as_explain_says() -> None:
    """The first chapter's narration lists every component once, most requests first,
    with its reads, watches and writes counted as explain --format json counts them."""
    index = explained_index("default")
    steps = find_steps(chapters.load("who-does-what"), index, Windows(index))
    lines = steps.steps[0].clients
    assert lines and all(not s.clients for s in steps.steps[1:])
    kinds = {"get": "reads", "list": "reads", "watch": "watches"}
    writes = {"create", "update", "patch", "delete", "deletecollection"}
    counted: dict[str, Counter[str]] = {}
    for row in explained_story().values():
        kind = kinds.get(row["verb"]) or ("writes" if row["verb"] in writes else "other")
        counted.setdefault(row["component"], Counter())[kind] += 1
    by_component = {line.split(": ", 1)[0]: line for line in lines}
    assert by_component["k8s-wiretap"].endswith(": /version 1, /readyz 1")  # the wiretap's own
    assert set(by_component) == set(counted) and len(lines) == len(counted)
    totals = [sum(counted[line.split(": ", 1)[0]].values()) for line in lines]
    assert totals == sorted(totals, reverse=True)
    for component, counts in counted.items():
        line = by_component[component]
        total = sum(counts.values())
        assert f"{component}: {total} request{'' if total == 1 else 's'} · " in line
        for kind in ("reads", "watches", "writes"):
            assert (f"{kind} {counts[kind]} · " in line) == bool(counts[kind]), (kind, line)


def test_the_change_is_followed_through_three_components_to_the_kubelet() -> None:
    steps, said = who_steps(), explained_story()
    patch = said[steps["map"]]
    assert patch["component"] == "kubectl" and steps["etcd"] == steps["map"]
    assert patch["etcd"]["key"] == "/registry/deployments/default/web"
    assert isinstance(patch["etcd"]["stored"], dict)  # as etcd recorded it
    assert patch["request_body"]["spec"]["replicas"] == 3
    order = ["controller", "replicaset", "scheduler", "kubelet"]
    components = [said[steps[k]]["component"] for k in order]
    assert components == [
        "controller-manager/deployment-controller",
        "controller-manager/replicaset-controller",
        "scheduler",
        "kubelet",
    ]
    assert said[steps["controller"]]["request_body"]["spec"]["replicas"] == 3
    created = said[steps["replicaset"]]["response_body"]
    assert "nodeName" not in created["spec"]  # no node yet: nothing runs it
    chain = said[steps["kubelet"]]["chain"]
    assert chain[0] == steps["map"] and chain[-1] == steps["kubelet"]
    assert [said[i]["component"] for i in chain[1:-1]] == components[:3]
    for hop in chain[1:]:
        assert said[hop]["caused_by"]["event"]["watch"] is not None  # each a watch event


KUBELET = RECORDINGS / "kubelet-life.jsonl.gz"


@cache
def kubelet_life() -> tuple[dict[str, Exchange], Analysis, list[Exchange]]:
    """The kubelet-life chapters' exchanges by chapter id, the recording's analysis, and
    its exchanges."""
    index = RecordingIndex(KUBELET)
    index.scan()
    explain_rows(index, lambda _count: None)
    spec = chapters.load("kubelet-life")
    assert spec.recording == KUBELET
    steps = find_steps(spec, index, Windows(index))
    assert steps.missing == [], steps.missing
    recording = load(KUBELET)
    by_id = recording.by_id()
    found = {s.chapter.id: by_id[index.rows[s.position].id] for s in steps.steps}
    index.close()
    return found, Analysis.of(recording), recording.exchanges


def _body(exchange: Exchange, answer: bool = False) -> Any:
    analysis = kubelet_life()[1]
    decoded = analysis.response_body(exchange) if answer else analysis.request_body(exchange)
    return decoded.value


def test_the_kubelet_registers_over_mtls_http2_in_protobuf() -> None:
    node = kubelet_life()[0]["register"]
    assert (node.method, node.path, node.status) == ("POST", "/api/v1/nodes", 201)
    assert node.request.identity is not None
    assert node.request.identity.user.startswith("system:node:node-1 (system:nodes)")
    assert "[client certificate]" in node.request.identity.user
    assert node.request.http_version == "HTTP/2.0"
    assert node.request_header("content-type") == "application/vnd.kubernetes.protobuf"


def test_its_lease_is_created_once_and_renewed_every_10_seconds() -> None:
    steps, _, exchanges = kubelet_life()
    mine = [e for e in exchanges if e.component == "kubelet" and e.info.resource == "leases"]
    looked, created = mine[0], next(e for e in mine if e.info.verb == "create")
    assert (looked.info.verb, looked.status) == ("get", 404) and looked.time < created.time
    renewals = [e for e in mine if e.info.verb == "update"]
    assert steps["lease"] is renewals[0] and len(renewals) >= 3
    times = [created.time] + [e.time for e in renewals]
    assert all(9 < b - a < 11 for a, b in pairwise(times))
    spec = _body(renewals[0])["spec"]
    assert spec["leaseDurationSeconds"] == 40 and spec["holderIdentity"] == "node-1"
    renewed = [_body(e)["spec"]["renewTime"] for e in renewals]
    assert len(set(renewed)) == len(renewed)


def test_its_node_status_goes_as_a_patch_when_it_changed_not_as_the_heartbeat() -> None:
    steps, _, exchanges = kubelet_life()
    kubelet = [e for e in exchanges if e.component == "kubelet"]
    patches = [e for e in kubelet if e.info.resource == "nodes" and e.info.subresource]
    assert steps["status"] is patches[0] and _body(patches[0]) == {}  # nothing changed yet
    for patch in patches:
        assert patch.request_header("content-type") == "application/strategic-merge-patch+json"
    conditions = _body(patches[1])["status"]["conditions"]  # the others' heartbeats, maybe
    ready = [c for c in conditions if set(c) - {"type", "lastHeartbeatTime"}]
    assert [(c["type"], c["status"], c["reason"]) for c in ready] == [
        ("Ready", "True", "KubeletReady")
    ]
    assert any("images" in _body(p)["status"] for p in patches[2:])
    for patch in patches[1:]:  # each changes more than its conditions' heartbeat times
        status = _body(patch)["status"]
        changed = {k for k in status if not k.startswith("$")} - {"conditions"}
        told = {k for c in status.get("conditions", []) for k in c} - {"type", "lastHeartbeatTime"}
        assert changed or told, status
    renewals = [e for e in kubelet if e.info.resource == "leases" and e.info.verb == "update"]
    quiet = [  # the Lease is the heartbeat: renewed with no status patch in between
        (a, b) for a, b in pairwise(renewals) if not any(a.time < p.time < b.time for p in patches)
    ]
    assert quiet


def test_its_watch_of_the_pods_bound_to_it_delivers_the_pod_once_bound() -> None:
    steps, analysis, _ = kubelet_life()
    watch, binding = steps["pod-watch"], steps["binding"]
    assert watch.path.startswith("/api/v1/pods?")  # every namespace
    assert query(watch)["fieldSelector"] == "spec.nodeName=node-1"
    assert watch.request.http_version == "HTTP/2.0"
    assert watch.response_header("content-type").startswith("application/vnd.kubernetes.protobuf")
    assert (binding.component, _body(binding)["target"]["name"]) == ("scheduler", "node-1")
    created = next(
        e
        for e in kubelet_life()[2]
        if e.component == "kubectl" and (e.info.verb, e.info.resource) == ("create", "pods")
    )
    assert _body(created, answer=True)["metadata"]["name"] == binding.info.name == "web"
    assert created.request_header("kubectl-command") == "kubectl apply"  # "kubectl apply created"
    web = [e for e in analysis.events(watch) if e.name == "web"]
    assert web[0].type == "ADDED" and web[0].object["spec"]["nodeName"] == "node-1"
    assert web[0].time is not None and web[0].time > binding.time


def test_the_pod_status_patches_carry_the_uid() -> None:
    steps, _, exchanges = kubelet_life()
    patches = [
        e
        for e in exchanges
        if e.component == "kubelet" and e.info.subresource == "status" and e.info.name == "web"
    ]
    assert steps["pod-status"] is patches[0] and len(patches) >= 2
    created = next(e for e in exchanges if e.component == "kubectl" and e.info.verb == "create")
    uid = _body(created, answer=True)["metadata"]["uid"]
    for patch in patches:
        assert patch.request_header("content-type") == "application/strategic-merge-patch+json"
        assert _body(patch)["metadata"]["uid"] == uid
    first = _body(patches[0])["status"]
    assert "hostIP" in first and "conditions" in first
    assert [list(c["state"]) for c in first["containerStatuses"]] == [["waiting"]]
    running = next(_body(p)["status"] for p in patches if "podIP" in _body(p)["status"])
    assert running["phase"] == "Running"
    assert [list(c["state"]) for c in running["containerStatuses"]] == [["running"]]


def test_a_static_pod_is_shown_as_a_mirror_pod_owned_by_the_node() -> None:
    mirror = kubelet_life()[0]["mirror"]
    meta = _body(mirror, answer=True)["metadata"]
    assert meta["name"] == "static-web-node-1"
    assert "kubernetes.io/config.mirror" in meta["annotations"]
    (owner,) = meta["ownerReferences"]
    assert (owner["kind"], owner["name"]) == ("Node", "node-1")


def test_a_graceful_delete_then_the_kubelet_s_final_delete() -> None:
    steps, _, _ = kubelet_life()
    asked, final = steps["delete"], steps["final-delete"]
    still = _body(asked, answer=True)["metadata"]
    assert asked.status == 200 and "deletionTimestamp" in still
    assert still["deletionGracePeriodSeconds"] == 30
    assert final.component == "kubelet" and final.time > asked.time
    options = _body(final)
    assert options["gracePeriodSeconds"] == 0
    assert options["preconditions"]["uid"] == still["uid"]
    gone = [c for c in load(KUBELET).etcd if c.key == "/registry/pods/default/web" and c.deleted]
    assert gone and gone[0].time >= final.time - 1


def test_a_silent_kubelet_is_marked_unknown_after_the_grace_period_then_tainted() -> None:
    steps, _, exchanges = kubelet_life()
    unknown, taint = steps["unknown"], steps["taint"]
    renewals = [
        e
        for e in exchanges
        if e.component == "kubelet" and e.info.resource == "leases" and e.info.verb == "update"
    ]
    ready = next(c for c in _body(unknown)["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "Unknown"
    assert ready["message"] == "Kubelet stopped posting node status."
    assert 50 <= unknown.time - renewals[-1].time < 70  # the 50 s grace period, then a pass
    marked = [
        e
        for e in exchanges
        if e.component == "controller-manager/node-controller" and e.info.subresource == "status"
        if e.info.resource == "pods"
    ]
    assert marked and all(e.time >= unknown.time for e in marked)
    taints = {(t["key"], t["effect"]) for t in _body(taint)["spec"]["taints"]}
    unreachable = "node.kubernetes.io/unreachable"
    assert taints == {(unreachable, "NoSchedule"), (unreachable, "NoExecute")}
    created = next(e for e in exchanges if e.component == "kubectl" and e.info.verb == "create")
    tolerations = _body(created, answer=True)["spec"]["tolerations"]
    assert {(t["key"], t["effect"], t["tolerationSeconds"]) for t in tolerations} >= {
        ("node.kubernetes.io/unreachable", "NoExecute", 300)
    }
    standby = [e for e in exchanges if e.info.resource == "nodes" and e.info.name == "standby"]
    assert standby  # the node that stayed Ready


@pytest.mark.parametrize("name", ["etcd-and-watches", "who-does-what", "kubelet-life"])
def test_the_text_runs_every_chapter(name: str) -> None:
    result = cli("walkthrough", name, "--text")
    assert result.returncode == 0, result.stderr
    for chapter in chapters.load(name).chapters:
        assert chapter.title in result.stdout


@pytest.mark.parametrize("name", ["etcd-and-watches", "who-does-what", "kubelet-life"])
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
