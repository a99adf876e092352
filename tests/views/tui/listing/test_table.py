"""The index's rows as columns: read back, they are what one object an exchange held."""

from __future__ import annotations

import gzip
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest

from k8s_wiretap.capture import records
from k8s_wiretap.capture.exchange import Exchange, Request
from k8s_wiretap.explain.who import who_of
from k8s_wiretap.views.tui.ids import Ids
from k8s_wiretap.views.tui.listing.explaining import explain_rows
from k8s_wiretap.views.tui.listing.index import RecordingIndex
from k8s_wiretap.views.tui.listing.rows import Fact, Row
from k8s_wiretap.views.tui.listing.table import RowTable
from tests.views.tui.recorded import STORY, STORY_1_20

FIELDS = (
    "id",
    "time",
    "method",
    "path",
    "component",
    "verb",
    "resource",
    "namespace",
    "name",
    "status",
    "ended",
    "size",
    "events",
    "error",
    "watch",
    "summary",
    "noise",
    "version",
    "target",
    "duration",
    "status_text",
)


def old_rows(index: RecordingIndex) -> list[OldRow]:
    """The rows as the index made them before it kept columns: one object an exchange,
    from its records read back in file order."""
    rows: list[OldRow] = []
    by_id: dict[str, OldRow] = {}
    every = [index.rows.spans(p) for p in range(len(index))]
    spans = sorted((s[at], s[at + 1]) for s in every for at in range(0, len(s), 2))
    for offset, length in spans:
        record = index.read(offset, length)
        kind = record["record"]
        if kind == "request":
            row = by_id[record["id"]] = _request(record)
            rows.append(row)
        row = by_id[record["id"]]
        row.spans.extend((offset, length))
        row.facts["version"] += 1
        _fill(row.facts, kind, record)
    return rows


@dataclass
class OldRow:
    """A row as an object of its own: its facts as `Row` takes them, and its spans."""

    facts: dict[str, Any]
    spans: list[int] = field(default_factory=list)

    @property
    def row(self) -> Row:
        return Row(**self.facts)


def _request(record: dict[str, Any]) -> OldRow:
    exchange = Exchange(record["id"], Request.from_record(cast(records.Request, record)))
    info = exchange.info
    resource = f"{info.resource}/{info.subresource}" if info.subresource else info.resource
    facts = asdict(
        Row(
            exchange.id,
            exchange.time,
            exchange.method,
            exchange.path,
            who_of(exchange).component,
            info.verb,
            resource,
            info.namespace,
            info.name,
            watch=info.verb == "watch",
        )
    )
    facts["size"] += exchange.request_body.size if exchange.request_body else 0
    return OldRow(facts)


def _fill(row: dict[str, Any], kind: str, record: dict[str, Any]) -> None:
    if kind == "response":
        row["status"] = int(record.get("status") or 0) or None
    elif kind == "event":
        row["events"] += 1
        row["size"] += int((record.get("data") or {}).get("size") or 0)
    elif kind == "end":
        row["ended"] = float(record.get("time") or row["time"])
        row["size"] += int((record.get("body") or {}).get("size") or 0)
        row["error"] = str(record.get("error") or "")


@pytest.mark.parametrize("path", [STORY, STORY_1_20])
def test_rows_read_back_are_what_a_row_object_held(path: Path) -> None:
    index = RecordingIndex(path)
    index.scan()
    said: dict[str, tuple[str, str, bool]] = {}
    explained = index.explained

    def keep(exchange_id: str, component: str, summary: str, noise: bool, **more: Fact) -> None:
        said[exchange_id] = (component, summary, noise)
        explained(exchange_id, component, summary, noise, **more)

    before = old_rows(index)
    assert [_fields(r) for r in index.rows] == [_fields(r.row) for r in before]
    assert [list(index.rows.spans(n)) for n in range(len(index))] == [r.spans for r in before]
    index.explained = keep  # type: ignore[method-assign]
    explain_rows(index, lambda _count: None)
    for row in before:
        facts = row.facts
        facts["component"], facts["summary"], facts["noise"] = said[facts["id"]]
        facts["version"] += 1
    assert [_fields(r) for r in index.rows] == [_fields(r.row) for r in before]
    assert all(index.by_id[r.facts["id"]] == n for n, r in enumerate(before))


def _fields(row: object) -> tuple[object, ...]:
    return tuple(getattr(row, name) for name in FIELDS)


def test_a_row_read_again_after_it_grows_shows_what_came_since() -> None:
    table = RowTable()
    words: dict[str, Fact] = {"method": "GET", "path": "/api/v1/pods?watch=1"}
    words |= {"component": "kubelet", "verb": "watch", "resource": "pods", "watch": True}
    position = table.append("a", 1.0, words)
    row = table[position]
    assert (row.events, row.ended, row.status, row.noise, row.summary) == (0, None, None, None, "")
    other = table.append("b", 1.5, words)
    for offset in (10, 30):
        table.span(position, offset, 5)
        table.span(other, offset + 10, 5)
    table.events[position] += 2
    table.ended[position], table.status[position] = 9.0, 200
    table.explain(
        position, {"component": "kubelet", "summary": "kubelet watches pods", "noise": False}
    )
    row = table[position]
    assert (row.events, row.ended, row.status, row.noise) == (2, 9.0, 200, False)
    assert row.summary == "kubelet watches pods" and row.version == 1 and row.watch
    assert list(table.spans(position)) == [10, 5, 30, 5]
    assert list(table.spans(other)) == [20, 5, 40, 5]
    assert table[-1] == table[other] and len(table[:]) == 2


def _story_lines() -> list[str]:
    return gzip.decompress(STORY.read_bytes()).decode().splitlines()


def test_following_a_file_grows_its_rows(tmp_path: Path) -> None:
    lines = [line + "\n" for line in _story_lines()]
    path = tmp_path / "growing.jsonl"
    path.write_text("".join(lines[:200]))
    index = RecordingIndex(path)
    reached = []

    def follow() -> bool:
        reached.append(len(index))
        if len(reached) == 1:
            with path.open("a") as out:
                out.write("".join(lines[200:]))
        return len(reached) < 3

    index.scan(follow=follow)
    complete = RecordingIndex(STORY)
    complete.scan()
    assert 0 < reached[0] < len(index) == len(complete)
    assert [_fields(r)[:-4] for r in index.rows] == [_fields(r)[:-4] for r in complete.rows]


def test_ids_find_their_rows_as_they_grow() -> None:
    ids = Ids()
    made = [f"{n:08x}-uuid" for n in range(5000)]
    for number, exchange_id in enumerate(made):
        assert ids.add(exchange_id) == number
    assert all(ids[exchange_id] == n for n, exchange_id in enumerate(made))
    assert ids.get("nope") is None and "nope" not in ids and made[7] in ids
    assert ids.add(made[7]) == 5000 and ids[made[7]] == 5000  # a repeated id: its last row
    assert ids.id_of(5000) == made[7] and len(ids) == 5001
