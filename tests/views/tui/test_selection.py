"""The list's selection: a mask kept up to date as rows come and are explained."""

from __future__ import annotations

from dataclasses import replace

import pytest

from k8s_wiretap.views.tui import selection as selection_module
from k8s_wiretap.views.tui.filtering.filters import parse
from k8s_wiretap.views.tui.listing.explaining import explain_rows
from k8s_wiretap.views.tui.listing.index import RecordingIndex
from k8s_wiretap.views.tui.listing.rows import Row
from k8s_wiretap.views.tui.selection import Selection
from tests.recorded import exchange_count
from tests.views.tui.recorded import STORY, explained_index


def test_the_view_is_the_filters_matches_in_order() -> None:
    rows = explained_index().rows
    selection = Selection(rows)
    assert selection.view() is None
    check = parse("~c scheduler")
    selection.set(check)
    view = selection.view()
    assert view is not None and list(view) == [n for n, r in enumerate(rows) if check(r)]


def test_rows_that_come_later_are_checked_as_they_come() -> None:
    rows = explained_index().rows
    growing: list[Row] = list(rows[:100])
    selection = Selection(growing)
    selection.set(parse("~c kubectl"))
    first = list(selection.view() or [])
    growing += rows[100:]
    selection.extend()
    assert list(selection.view() or [])[: len(first)] == first
    assert len(selection.view() or []) == sum(r.component == "kubectl" for r in rows)


def test_a_changed_row_is_checked_again() -> None:
    rows = [
        Row(
            r.id,
            r.time,
            r.method,
            r.path,
            r.component,
            r.verb,
            r.resource,
            r.namespace,
            r.name,
            summary=r.summary,
            noise=r.noise,
        )
        for r in explained_index().rows
    ]
    selection = Selection(rows)
    selection.set(lambda row: not row.noise)
    noisy = next(n for n, r in enumerate(rows) if r.noise)
    assert noisy not in (selection.view() or [])
    rows[noisy] = replace(rows[noisy], noise=False)  # the row explained again
    assert selection.update([noisy])
    assert noisy in (selection.view() or [])
    assert not selection.update([noisy])  # nothing changed the second time


def test_over_the_columns_a_filter_is_checked_a_chunk_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(selection_module, "CHUNK", 100)
    rows = explained_index().rows
    check = parse("~c kubelet")
    said: list[float] = []
    selection = Selection(rows)
    selection.set(check, said.append)
    chunks = -(-exchange_count(STORY) // 100)  # of the story's rows, counted from its file
    assert said == sorted(said) and len(said) == chunks and said[-1] == 1.0
    assert list(selection.view() or []) == [n for n, r in enumerate(rows) if check(r)]


def test_changed_rows_of_the_columns_are_checked_again_as_a_run() -> None:
    index = RecordingIndex(STORY)
    index.scan()
    explain_rows(index, lambda _count: None)
    selection = Selection(index.rows)
    selection.set(parse("!~noise"))
    noisy = [n for n, r in enumerate(index.rows) if r.noise][:3]
    shown = len(selection.view() or [])
    for position in noisy:
        row = index.rows[position]
        index.explained(row.id, row.component, row.summary, noise=False)
    assert selection.update(index.changed())
    assert len(selection.view() or []) == shown + 3
    assert not selection.update(noisy)
