"""Search: free text over what the rows show, a match count, next and previous."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

import pytest
from textual.pilot import Pilot

from k8s_wiretap.views.tui import ReplayApp
from k8s_wiretap.views.tui.filtering import search as search_module
from k8s_wiretap.views.tui.filtering.search import Search, matches_row, matching_rows
from tests.recorded import STORY, exchange_count, is_binding, positions, sent_by
from tests.views.tui.pilot import drive
from tests.views.tui.recorded import explained_index
from tests.views.tui.test_app import APPLY, status, type_filter

# counted from the story's file: its exchanges, the scheduler's bindings ("binds Pod ..."),
# and the scheduler's requests
ALL = exchange_count(STORY)
BINDINGS = len(positions(STORY, is_binding))
SCHEDULER = len(sent_by("kube-scheduler/"))


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
    assert len(lines) == BINDINGS  # the scheduler's bindings, case-insensitively
    assert all("binds Pod" in rows[n].summary for n in lines)
    assert Search.step(lines, 0, 0) == lines[0]
    assert Search.step(lines, lines[0], 1) == lines[1]
    assert Search.step(lines, lines[-1], 1) == lines[0]  # wraps
    assert Search.step(lines, lines[0], -1) == lines[-1]
    assert f"2 of {BINDINGS}" in search.status(lines, lines[1])
    assert f"{BINDINGS} matches" in search.status(lines, lines[1] + 1)
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


def test_a_search_over_the_columns_goes_a_chunk_at_a_time_and_can_stop() -> None:
    rows = explained_index().rows
    said: list[float] = []
    found = matching_rows(rows, "binds pod", said.append, chunk=100)
    assert found == matching_rows(rows, "binds pod")
    assert (
        said == sorted(said) and len(said) == -(-ALL // 100) and said[-1] == 1.0
    )  # a chunk of 100 rows
    asked: list[int] = []

    def stopped() -> bool:
        asked.append(1)
        return len(asked) > 3

    assert matching_rows(rows, "binds pod", said.append, stopped, chunk=100) is None
    assert len(asked) == 4  # it gave up at its fourth chunk


def test_the_lines_of_a_view_from_what_matched() -> None:
    found = bytes([0, 1, 1, 0, 1])
    assert list(Search.lines(found, None)) == [1, 2, 4]
    assert list(Search.lines(found, [0, 2, 3, 4, 7, 9])) == [1, 3]  # 7, 9: not looked at yet


def press_text(text: str) -> list[str]:
    return [{" ": "space", "/": "slash", "~": "tilde"}.get(key, key) for key in text]


def test_s_searches_and_the_angle_brackets_step_through_the_matches() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        rows = app.exchange_list
        await pilot.press("s", *press_text("binds pod"), "enter")
        assert rows.has_focus
        first = rows.cursor
        assert "binds Pod" in app.index.rows[rows.selected or 0].summary
        assert f'search "binds pod": 1 of {BINDINGS}' in status(app)
        await pilot.press("greater_than_sign")
        assert rows.cursor > first and f"2 of {BINDINGS}" in status(app)
        await pilot.press("less_than_sign", "less_than_sign")
        assert f"{BINDINGS} of {BINDINGS}" in status(app)  # round to the last
        await pilot.press("n")  # still the noise switch
        assert app.filter_state.hide_noise
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
        assert "1 of 3" in status(app) and f"3 of {ALL} shown" in status(app)
        await pilot.press("greater_than_sign")
        assert app.exchange_list.cursor == 1 and "2 of 3" in status(app)

    drive(script)


def wait_for_search(app: ReplayApp) -> Awaitable[None]:
    async def wait() -> None:
        for _ in range(200):
            if not app.commands.finder.searching and app.commands.finder.progress is None:
                return
            await asyncio.sleep(0.05)
        raise TimeoutError("the search did not finish")

    return wait()


def test_a_large_index_is_searched_in_a_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_module, "BACKGROUND", 1)

    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        rows, commands = app.exchange_list, app.commands
        commands.search("binds pod")
        assert f'search "binds pod": searching {ALL}… 0%' in status(app)  # at once, no match yet
        commands.find(1)  # > before the matches came: made when they come
        await wait_for_search(app)
        await pilot.pause()
        assert f'search "binds pod": 2 of {BINDINGS}' in status(app)
        assert "binds Pod" in app.index.rows[rows.selected or 0].summary
        await pilot.press("greater_than_sign")
        assert f"3 of {BINDINGS}" in status(app)
        await pilot.press("less_than_sign", "less_than_sign", "less_than_sign")
        assert f"{BINDINGS} of {BINDINGS}" in status(app)  # round to the last
        await type_filter(pilot, "~c scheduler")  # a new view: the same matches, its lines
        assert f"{SCHEDULER} of {ALL} shown" in status(app)
        assert f"{BINDINGS} of {BINDINGS}" in status(app)
        await pilot.press("greater_than_sign")
        assert f"1 of {BINDINGS}" in status(app) and app.exchange_list.cursor < SCHEDULER

    drive(script)


def test_a_new_search_cancels_the_one_still_running(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_module, "BACKGROUND", 1)

    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        commands = app.commands
        commands.search("binds pod")
        (first,) = [w for w in app.workers if w.group == "search" and not w.is_finished]
        commands.search("no such text")
        assert first.is_cancelled
        await wait_for_search(app)
        await pilot.pause()
        assert 'search "no such text": no match' in status(app)
        assert commands.said == "search: nothing matches 'no such text'"
        commands.search("binds pod")
        commands.search("")  # cleared before it answered: nothing is said of it
        await pilot.pause(0.3)
        assert "search" not in status(app)

    drive(script)
