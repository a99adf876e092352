"""The analysis gives the same answers fed live, record by record, as over the whole file."""

from __future__ import annotations

from k8s_wiretap.capture.assemble import Assembler
from k8s_wiretap.explain.analysis import Analysis
from tests.recorded import records_of, story, story_records

Replayed = tuple[bool | None, list[str], str | None]  # matches_server, mismatches, note


def replays(analysis: Analysis) -> dict[str, Replayed]:
    found: dict[str, Replayed] = {}
    for exchange in analysis.exchanges:
        replay = analysis.replay(exchange)
        if replay is not None:
            found[exchange.id] = (replay.matches_server, replay.mismatches, replay.note)
    return found


def test_live_and_batch_agree() -> None:
    batch = Analysis.of(story())
    live, assembler = Analysis(), Assembler()
    for number, record in enumerate(story_records()[1:]):
        update = assembler.feed(record)
        if update is not None:
            live.feed(update)
        if number % 500 == 0:
            len(live.history)  # questions asked while the traffic still arrives
    assert [e.id for e in live.exchanges] == [e.id for e in batch.exchanges]
    assert replays(live) == replays(batch)
    assert sum(r[0] is True for r in replays(batch).values()) >= 10
    assert sorted(live.history) == sorted(batch.history)
    for ref in batch.history:
        assert live.history.timeline(ref) == batch.history.timeline(ref)


def test_a_body_asked_for_before_the_end_is_decoded_again_when_it_comes() -> None:
    get = next(
        e
        for e in story().exchanges
        if e.method == "GET"
        and e.info.verb == "get"
        and e.info.resource == "deployments"
        and e.status == 200
    )
    analysis, assembler = Analysis(), Assembler()
    *head, end = records_of(get.id)
    for record in head:
        update = assembler.feed(record)
        assert update is not None
        analysis.feed(update)
    (exchange,) = analysis.exchanges
    assert analysis.response_body(exchange).format == "empty"
    assert analysis.history.timeline(analysis.ref(exchange)) == []
    update = assembler.feed(end)
    assert update is not None
    analysis.feed(update)
    body = analysis.response_body(exchange)
    assert body.format == "json" and body.value["metadata"]["name"] == "web"
    (observation,) = analysis.history.timeline(analysis.ref(exchange))
    assert observation.source == "get" and observation.component == "kubectl"


def test_watch_events_are_taken_in_as_they_arrive() -> None:
    watch = next(
        e for e in story().exchanges if e.component == "kubelet" and len(e.watch_events()) >= 3
    )
    analysis, assembler = Analysis(), Assembler()
    counts = []
    for record in records_of(watch.id):
        update = assembler.feed(record)
        assert update is not None
        analysis.feed(update)
        counts.append(len(analysis.events(update.exchange)))
    assert counts[-1] == len(watch.watch_events())
    assert counts == sorted(counts) and len(set(counts)) > 2
