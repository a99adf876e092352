"""Search: free text over what the rows show, a match count, next and previous."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from k8s_wiretap.views.tui import ReplayApp
from k8s_wiretap.views.tui.search import Search, matches_row, matching_rows
from tests.views.tui.pilot import drive
from tests.views.tui.recorded import explained_index
from tests.views.tui.test_app import APPLY, status, type_filter


def test_a_row_matches_on_its_summary_path_component_and_name() -> None:
    rows = explained_index().rows
    binding = next(r for r in rows if r.resource == "pods/binding")
    for needle in ("binds pod", "/binding", "scheduler", binding.name.lower()):
        assert matches_row(binding, needle)
    assert not matches_row(binding, "no such thing")


def test_matches_next_previous_and_the_count() -> None:
    rows = explained_index().rows
    search = Search("Binds Pod")
    lines = search.matches(rows, None)
    assert len(lines) == 7  # the scheduler's bindings, case-insensitively
    assert all("binds Pod" in rows[n].summary for n in lines)
    assert Search.step(lines, 0, 0) == lines[0]
    assert Search.step(lines, lines[0], 1) == lines[1]
    assert Search.step(lines, lines[-1], 1) == lines[0]  # wraps
    assert Search.step(lines, lines[0], -1) == lines[-1]
    assert "2 of 7" in search.status(lines, lines[1])
    assert "7 matches" in search.status(lines, lines[1] + 1)
    assert "no match" in Search("zzz").status(Search("zzz").matches(rows, None), 0)


def test_matches_are_lines_of_the_view_and_found_again_when_it_changes() -> None:
    rows = explained_index().rows
    search = Search("binds")
    everything = search.matches(rows, None)
    view = [n for n, r in enumerate(rows) if r.component == "scheduler"]
    lines = search.matches(rows, view)
    assert len(lines) == len(everything) and [view[n] for n in lines] == list(everything)
    assert search.matches(rows, view) is lines  # the same view: not searched again
    assert search.matches(rows, list(view)) is not lines


@pytest.mark.parametrize(
    "needle", ["binds pod", "default/web", "kube-system/", "/", "get", "leases", "v1/nodes", "zz"]
)
def test_a_search_over_the_columns_finds_what_each_row_shows(needle: str) -> None:
    rows = explained_index().rows
    assert matching_rows(rows, needle) == bytes(matches_row(row, needle) for row in rows)


def press_text(text: str) -> list[str]:
    return [{" ": "space", "/": "slash", "~": "tilde"}.get(key, key) for key in text]


def test_s_searches_and_the_angle_brackets_step_through_the_matches() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        rows = app.exchange_list
        await pilot.press("s", *press_text("binds pod"), "enter")
        assert rows.has_focus
        first = rows.cursor
        assert "binds Pod" in app.index.rows[rows.selected or 0].summary
        assert 'search "binds pod": 1 of 7' in status(app)
        await pilot.press("greater_than_sign")
        assert rows.cursor > first and "2 of 7" in status(app)
        await pilot.press("less_than_sign", "less_than_sign")
        assert "7 of 7" in status(app)  # round to the last
        await pilot.press("n")  # still the noise switch
        assert app.hide_noise
        await pilot.press("escape")  # clears the search first
        assert "search" not in status(app)
        await pilot.press("s", *press_text("no such text"), "enter")
        assert "no match" in status(app) and "nothing matches" in app.commands.said
        await pilot.press("escape", "greater_than_sign")
        assert "no search" in app.commands.said

    drive(script)


def test_a_search_within_a_filter_counts_what_the_list_shows() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await type_filter(pilot, APPLY)
        await pilot.press("colon", *press_text("search Deployment default/web"), "enter")
        assert "1 of 3" in status(app) and "3 of 882 shown" in status(app)
        await pilot.press("greater_than_sign")
        assert app.exchange_list.cursor == 1 and "2 of 3" in status(app)

    drive(script)
