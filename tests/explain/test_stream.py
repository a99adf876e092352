"""Explaining a recording as a stream: the same lines as the whole-file analysis, in
memory that does not grow with the recording."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.reader import iter_records, load
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.explainer import Explainer
from k8s_wiretap.explain.stream import explained
from k8s_wiretap.views.json import dumps, exchange_record, write_json
from tests.recorded import STORY, STORY_1_20, story_records


def assert_the_stream_is_the_whole_file_analysis(path: Path) -> None:
    """`explain --format json`'s stream of `path` writes, line for line, what the analysis of
    the whole file says of each exchange."""
    analysis = Analysis.of(load(path))
    explainer = Explainer(analysis)
    batch = [dumps(exchange_record(analysis, e, explainer)) for e in analysis.exchanges]
    out = io.BytesIO()
    write_json(iter_records(path, []), out)
    assert out.getvalue().splitlines(keepends=True) == batch


@pytest.mark.parametrize("path", [STORY, STORY_1_20], ids=["default", "1.20"])
def test_the_stream_writes_what_the_whole_file_analysis_says(path: Any) -> None:
    assert_the_stream_is_the_whole_file_analysis(path)


def repeated(copies: int) -> list[dict[str, Any]]:
    """The story's records `copies` times over, each copy later, with ids of its own."""
    header, *body = story_records()
    times = [float(r["time"]) for r in body if "time" in r]
    span = max(times) - min(times) + 1.0
    records = [header]
    for copy in range(copies):
        for record in body:
            shifted = dict(record)
            if "id" in shifted:
                shifted["id"] = f"{shifted['id']}-{copy}"
            if "time" in shifted:
                shifted["time"] = float(shifted["time"]) + copy * span
            records.append(shifted)
    return records


def held_at_most(copies: int) -> tuple[int, int]:
    """The most exchanges and observations the stream's analysis ever held."""
    most = [0, 0]

    def line(explainer: Explainer, exchange: Exchange) -> str:
        analysis = explainer.analysis
        held = (len(analysis.exchanges), analysis.history.held)
        most[:] = [max(m, h) for m, h in zip(most, held, strict=True)]
        return exchange.id

    lines: list[str] = []
    explained(repeated(copies), line, lines.append)
    assert len(lines) == copies * len(load(STORY).exchanges)
    return most[0], most[1]


def test_what_the_stream_holds_does_not_grow_with_the_recording() -> None:
    three, six = held_at_most(3), held_at_most(6)
    assert six == three  # the third copy already held as much as any later one
    assert three[0] < len(load(STORY).exchanges)  # less than one copy of the story


def late_watch_requests(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """`records` with each watch's request record moved after the request record that follows
    it (their times kept): what the proxy writes when two clients' requests race; and how
    many were moved."""
    out, moved = list(records), 0
    for index in range(len(out) - 2, 0, -1):
        record, following = out[index], out[index + 1]
        if "watch=true" in record.get("path", "") and following.get("record") == "request":
            out[index], out[index + 1] = following, record
            moved += 1
    return out, moved


def test_a_watch_whose_request_is_recorded_late_keeps_its_place_in_time(tmp_path: Any) -> None:
    records, moved = late_watch_requests(list(story_records()))
    assert moved > 0
    path = tmp_path / "late.jsonl"
    path.write_bytes(b"".join(dumps(record) for record in records))
    assert_the_stream_is_the_whole_file_analysis(path)
