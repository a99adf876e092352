"""Assembling records into exchanges, one record at a time, as the proxy writes them."""

from __future__ import annotations

from k8s_wiretap.capture.assemble import Assembler
from tests.recorded import story, story_records


def test_feeding_the_records_one_by_one_gives_the_recording() -> None:
    assembler = Assembler()
    updates = [assembler.feed(r) for r in story_records()[1:]]
    recording = story()
    assert [e.id for e in assembler.exchanges] == [e.id for e in recording.exchanges]
    for mine, theirs in zip(assembler.exchanges, recording.exchanges, strict=True):
        assert (mine.request, mine.response, mine.end) == (
            theirs.request,
            theirs.response,
            theirs.end,
        )
        assert mine.events == theirs.events
    kinds = [u.record for u in updates if u is not None]
    assert kinds.count("request") == len(recording.exchanges)
    assert kinds.count("end") == sum(e.end is not None for e in recording.exchanges)
    assert kinds.count("event") == sum(len(e.events) for e in recording.exchanges) > 200
    assert {e.id for e in assembler.open} == {e.id for e in recording.exchanges if not e.end}
    assert not assembler.warnings


def test_an_open_exchange_is_there_before_it_ends() -> None:
    watch = next(e for e in story().exchanges if e.info.verb == "watch" and len(e.events) > 2)
    assembler = Assembler()
    records = [r for r in story_records() if r.get("id") == watch.id]
    for record in records[:-1]:
        assembler.feed(record)
    (live,) = assembler.open
    assert live.id == watch.id and live.end is None and len(live.events) == len(watch.events)
    update = assembler.feed(records[-1])
    assert update is not None and update.record == "end" and update.exchange is live
    assert not assembler.open


def test_a_record_whose_request_was_not_recorded_is_kept_and_said() -> None:
    assembler = Assembler()
    end = {"record": "end", "id": "lost", "time": 5.0, "error": "bad chunk header"}
    update = assembler.feed(end)
    assert update is not None
    (exchange,) = assembler.exchanges
    assert exchange.error == "bad chunk header" and exchange.time == 5.0
    assert exchange.method == "" and exchange.request.unrecorded is True
    assert assembler.warnings == [
        "end record for exchange lost whose request was not recorded: "
        "shown with an unknown method and path"
    ]


def test_notes_and_unknown_records_make_no_exchange() -> None:
    assembler = Assembler()
    assert assembler.feed({"record": "note", "time": 1.0, "level": "info", "message": "m"}) is None
    assert assembler.feed({"record": "header"}) is None
    assert assembler.exchanges == [] and len(assembler.notes) == 1


def test_the_committed_recording_ends_every_exchange() -> None:
    """Recorded since the proxy ends what is open when it stops (it had 65 open watches)."""
    recording = story()
    assert recording.exchanges and all(e.end is not None for e in recording.exchanges)
    watches = [e for e in recording.exchanges if e.info.verb == "watch" and e.status == 200]
    assert watches and all(e.end is not None and e.end.events is not None for e in watches)
    # refused watches end with their Status: 403 before the API server's RBAC policy was in
    # place at start, 429 when it sheds load while starting (when a recording has any), 503
    # from the proxy itself while the API server restarted
    refused = [e for e in recording.exchanges if e.info.verb == "watch" and e.status != 200]
    statuses = {e.status for e in refused}
    assert refused and 503 in statuses and statuses <= {403, 429, 503}
    assert all(e.end is not None and e.end.body for e in refused)
