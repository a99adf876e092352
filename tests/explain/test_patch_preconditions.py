"""A PATCH that carries metadata.resourceVersion makes it a precondition: the API server
refuses it with 409 when the object changed since (the node controller's taint PATCHes
carry the version they read). On fixtures/node-taint-race.jsonl.gz, the Node exchanges and
etcd records of a kubelet-life recording (`scripts/record_wide.py --story kubelet`) in which
the node controller lost that race twice, to the kubelet and to the standby node's
renewals (a race: a recording made again may not hold one, so the exchanges are kept
here): each refused PATCH is refused by the replay alike, with the server's words, and
each accepted one still replays to what the server stored."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.reader import load
from k8s_wiretap.explain.analysis import Analysis

RACE = Path(__file__).resolve().parent / "fixtures" / "node-taint-race.jsonl.gz"


@cache
def taint_patches() -> tuple[Analysis, list[Exchange]]:
    recording = load(RACE)
    patches = [
        e
        for e in recording.exchanges
        if e.component == "controller-manager/node-controller" and e.method == "PATCH"
        if e.info.resource == "nodes" and not e.info.subresource
    ]
    return Analysis.of(recording), patches


def test_a_stale_resource_version_is_refused_as_the_server_refused_it() -> None:
    analysis, patches = taint_patches()
    refused = [e for e in patches if e.status == 409]
    assert refused  # the recording holds the race
    for exchange in refused:
        body = analysis.request_body(exchange).value
        assert body["metadata"]["resourceVersion"]
        replay = analysis.replay(exchange)
        assert replay is not None and replay.refused
        assert replay.matches_server is True, replay.mismatches
        assert replay.note is not None and "the object has been modified" in replay.note
        assert f'on nodes "{exchange.info.name}"' in replay.note


def test_an_accepted_patch_with_the_current_resource_version_still_replays() -> None:
    analysis, patches = taint_patches()
    accepted = [e for e in patches if e.status == 200]
    carrying = [e for e in accepted if analysis.request_body(e).value["metadata"]]
    assert carrying
    for exchange in carrying:
        replay = analysis.replay(exchange)
        assert replay is not None
        assert replay.matches_server is True, replay.mismatches
