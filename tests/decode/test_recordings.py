"""Every exchange of real recordings decodes, and every PATCH replays to what the server did.

Recordings of the workshop's apply story (k8s_wiretap/workshop/scenarios.py), on the
default release and on 1.20: the ones committed in recordings/ and ones made now on a
lab of each (client-side apply create and update, scale, server-side apply and its conflict,
a custom resource with merge and JSON patches, a Secret, kubectl get -w, and the
controllers' and kubelet's protobuf traffic through the wiretap). The live 1.20 recording
is the 1.20 lab's smaller set: that lab comes up, the proxy records it, everything decodes
and every PATCH replays.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.capture.reader import load
from k8s_wiretap.explain.analysis import Analysis
from tests.recorded import STORY, STORY_1_20

COMMITTED = {"committed": STORY, "committed-1.20": STORY_1_20}
LIVE = {"live": "story", "live-1.20": "story_1_20"}


@pytest.fixture(
    params=[
        *COMMITTED,
        # the session fixture this one takes by name: its group in a parallel run
        *(
            pytest.param(name, marks=[pytest.mark.lab, pytest.mark.xdist_group(fixture)])
            for name, fixture in LIVE.items()
        ),
    ],
    scope="module",
)
def analysis(request: pytest.FixtureRequest) -> Analysis:
    name = request.param
    path = COMMITTED[name] if name in COMMITTED else request.getfixturevalue(LIVE[name])
    recording = load(path)
    assert not recording.warnings
    return Analysis.of(recording)


def markers(value: Any) -> set[str]:
    """Keys the protobuf decoder uses when it had to fall back on the schemaless decode."""
    found: set[str] = set()
    if isinstance(value, dict):
        found |= {k for k in value if k in ("$schemaless", "$unknownFields")}
        for item in value.values():
            found |= markers(item)
    elif isinstance(value, list):
        for item in value:
            found |= markers(item)
    return found


def test_every_body_and_event_decodes(analysis: Analysis) -> None:
    formats: Counter[str] = Counter()
    for exchange in analysis.exchanges:
        for decoded in (analysis.request_body(exchange), analysis.response_body(exchange)):
            assert decoded.ok, (exchange.path, decoded.error)
            formats[decoded.format] += 1
            assert not markers(decoded.value), exchange.path
        for event in analysis.events(exchange):
            assert event.error is None, (exchange.path, event.error)
            assert not markers(event.object)
    assert formats["protobuf"] > 300 and formats["json"] > 50
    assert formats["yaml"] >= 2 and formats["openapi-protobuf"] >= 1


def test_protobuf_renders_with_field_names(analysis: Analysis) -> None:
    pods = [
        analysis.response_body(e).value
        for e in analysis.exchanges
        if e.component == "kubelet"
        and e.info.resource == "pods"
        and e.info.subresource == "status"
        and e.method == "PATCH"
    ]
    # the last reports of a deleted pod's status are terminal on the default release (Succeeded)
    running = [p for p in pods if p["status"]["phase"] == "Running"]
    assert running
    pod = running[-1]
    assert list(pod)[:2] == ["kind", "apiVersion"]
    assert pod["spec"]["nodeName"] == "node-1"
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"


def test_every_patch_replays_to_what_the_server_stored(analysis: Analysis) -> None:
    kinds: Counter[str] = Counter()
    refused = 0
    for exchange in analysis.exchanges:
        replay = analysis.replay(exchange)
        if replay is None:
            continue
        kinds[replay.type] += 1
        where = f"{exchange.component} {exchange.method} {exchange.path}"
        if exchange.status == 409:  # a refused patch is refused alike
            assert replay.refused and replay.after["reason"] == "Conflict"
            assert replay.matches_server is True, (where, replay.mismatches)
            # the story's own: another manager's server-side apply of a field kubectl owns;
            # a live lab may refuse another PATCH with 409 too (a CI run had two 409 PATCHes)
            refused += exchange.component == "kubectl" and replay.type == "apply"
            continue
        assert replay.before is not None, (where, replay.note)
        assert isinstance(replay.after, dict), where
        assert replay.matches_server is True, (where, replay.mismatches)
    assert set(kinds) == {"strategic", "merge", "json", "apply"}, kinds
    assert refused == 1


def test_watch_events_are_understood(analysis: Analysis) -> None:
    events = [(e, ev) for e in analysis.exchanges for ev in analysis.events(e)]
    kinds = Counter((e.component.split("/")[0], ev.type) for e, ev in events)
    assert kinds[("kubelet", "ADDED")] >= 3  # pods newly bound to node-1 enter its watch
    table = [ev for e, ev in events if e.component == "kubectl" and ev.type == "ADDED"]
    assert table and table[0].kind == "Pod" and table[0].name.startswith("web-")
    assert all(ev.resource_version for e, ev in events if ev.type != "ERROR")


def test_an_expired_resource_version_is_an_error_event_410(story: Path) -> None:
    analysis = Analysis.of(load(story))
    expired = [ev for e in analysis.exchanges for ev in analysis.events(e) if ev.expired]
    assert expired and expired[0].summary()["expired"] is True
    assert "too old resource version" in expired[0].object["message"]


def test_replaying_leaves_what_was_observed_untouched(analysis: Analysis) -> None:
    import json

    patches = [e for e in analysis.exchanges if e.info.verb == "patch"]
    observed = json.dumps(
        [[o.object for o in analysis.history.timeline(k)] for k in sorted(analysis.history)]
    )
    for exchange in patches:
        analysis.replay(exchange)
    assert (
        json.dumps(
            [[o.object for o in analysis.history.timeline(k)] for k in sorted(analysis.history)]
        )
        == observed
    )
