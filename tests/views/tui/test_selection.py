"""The list's selection: a mask kept up to date as rows come and are explained."""

from __future__ import annotations

from k8s_wiretap.views.tui.filters import parse
from k8s_wiretap.views.tui.rows import Row
from k8s_wiretap.views.tui.selection import Selection
from tests.views.tui.recorded import explained_index


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
    rows[noisy].noise = False
    assert selection.update([noisy])
    assert noisy in (selection.view() or [])
    assert not selection.update([noisy])  # nothing changed the second time
