"""The replay app driven as a person drives it, on the committed recordings."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from rich.text import Text
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Static

from k8s_wiretap.views.tui import ReplayApp
from k8s_wiretap.views.tui import app as app_module
from k8s_wiretap.views.tui.detail.detail_pane import DetailPane
from k8s_wiretap.views.tui.help_screen import HelpScreen
from k8s_wiretap.views.tui.listing.exchange_list import ExchangeList
from k8s_wiretap.views.tui.messages import DetailReady, Explained
from tests.recorded import STORY, STORY_1_20, exchange_count
from tests.views.tui.pilot import drive, line_text, settle, tab_text

APPLY = "~c kubectl ~v patch ~r ^deployments$"
ALL = exchange_count(STORY)  # every exchange of the story, counted from its file


def status(app: ReplayApp) -> str:
    return Text.from_markup(str(app.query_one("#filter-status", Static).content)).plain


async def type_filter(pilot: Pilot[int], text: str) -> None:
    await pilot.press("slash")
    for key in text:
        await pilot.press({" ": "space", "$": "dollar_sign", "!": "exclamation_mark"}.get(key, key))
    await pilot.press("enter")


def test_the_list_shows_rows_with_their_summaries() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        assert app.exchange_list.count == len(app.index) == ALL
        header = line_text(app, 0)
        for title in ("time", "component", "verb", "resource", "namespace/name", "summary"):
            assert title in header
        first = line_text(app, 1)
        assert "k8s-wiretap" in first and "/version" in first and "200" in first
        assert "k8s-wiretap asks the server's version" in first
        assert any(
            "kubelet" in line_text(app, y) and "watch" in line_text(app, y) for y in range(2, 12)
        )

    drive(script, size=(160, 40))


def test_j_k_g_and_G_move_the_cursor_and_the_detail_follows() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        rows = app.exchange_list
        await pilot.press("j", "j", "j")
        assert rows.cursor == 3
        await pilot.press("k")
        assert rows.cursor == 2
        await pilot.press("G")
        assert rows.cursor == rows.count - 1
        await settle(app, pilot)
        last = app.index.rows[-1]
        assert app.detail_pane.detail is not None
        assert app.detail_pane.detail.exchange.id == last.id
        assert last.summary in tab_text(app, "explain").replace("\n", " ")
        assert rows.scroll_offset.y > 0  # scrolled to show it
        await pilot.press("g")
        assert rows.cursor == 0 and rows.scroll_offset.y == 0

    drive(script)


def test_the_three_replica_apply_in_every_tab() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await type_filter(pilot, APPLY)
        await settle(app, pilot)
        detail = app.detail_pane.detail
        assert detail is not None and detail.exchange.method == "PATCH"
        explain = tab_text(app, "explain")
        assert "kubectl apply patches Deployment default/web" in explain
        assert "/registry/deployments/default/web" in explain  # the etcd record
        for key, tab in (("2", "request"), ("3", "response"), ("4", "patch"), ("5", "events")):
            await pilot.press(key)
            assert app.detail_pane.active == tab
        assert "strategic-merge-patch" in tab_text(app, "request")
        assert "replicas: 3" in tab_text(app, "request")
        assert "kind: Deployment" in tab_text(app, "response")
        patch = tab_text(app, "patch")
        assert "matches the server's result" in patch
        assert "set" in patch and "/spec/replicas" in patch and "changed by your file" in patch
        assert "not a watch" in tab_text(app, "events")
        await pilot.press("tab")
        assert app.detail_pane.active == "explain"
        await pilot.press("shift+tab")
        assert app.detail_pane.active == "events"

    drive(script)


def test_a_watch_shows_its_events() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await type_filter(pilot, "~c kubelet ~w ~r ^nodes$")
        await settle(app, pilot)
        await pilot.press("5")
        events = tab_text(app, "events")
        assert "BOOKMARK" in events and "initial-end" in events
        assert "events" in line_text(app, 0) or "ev" in line_text(app, 0)

    drive(script)


def test_the_filter_narrows_the_list_and_says_how_many() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await type_filter(pilot, APPLY)
        assert app.exchange_list.count == 3
        assert f"3 of {ALL} shown" in status(app) and APPLY in status(app)
        assert all("kubectl" in line_text(app, y) for y in (1, 2, 3))
        assert line_text(app, 4).strip() == ""
        await pilot.press("f")  # off, still shown
        assert app.exchange_list.count == ALL and "off" in status(app)
        await pilot.press("f")
        assert app.exchange_list.count == 3
        await pilot.press("escape")  # on the list: clears it
        assert app.exchange_list.count == ALL and "no filter" in status(app)

    drive(script)


def test_a_filter_that_does_not_parse_says_why_and_changes_nothing() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await type_filter(pilot, "~q x")
        assert "unknown filter ~q" in status(app)
        assert app.exchange_list.count == ALL

    drive(script)


def test_the_filter_input_takes_every_key_and_esc_gives_up() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await pilot.press("slash", "q", "n", "1", "question_mark")
        assert app.is_running and not isinstance(app.screen, HelpScreen)
        assert app.query_one("#filter-input").value == "qn1?"  # type: ignore[attr-defined]
        await pilot.press("escape")
        assert app.exchange_list.has_focus and app.exchange_list.count == ALL

    drive(script)


def test_one_key_hides_the_noise() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        noise = sum(1 for row in app.index.rows if row.noise)
        assert 0 < noise < ALL
        await pilot.press("n")
        assert app.exchange_list.count == ALL - noise
        assert "noise hidden" in status(app) and f"{ALL - noise} of {ALL}" in status(app)
        await type_filter(pilot, "~r leases ~c kubelet")
        assert app.exchange_list.count == 0  # the kubelet's heartbeats are all noise
        await pilot.press("n")
        assert app.exchange_list.count > 0

    drive(script)


def test_help_lists_every_binding_with_its_id() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        ids = {b.id for b in app.BINDINGS if hasattr(b, "id")}  # type: ignore[union-attr]
        ids |= {b.id for b in ExchangeList.BINDINGS if hasattr(b, "id")}  # type: ignore[union-attr]
        assert None not in ids
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)

    drive(script)


def test_help_opened_at_once_does_not_stop_the_file_being_read() -> None:
    """The workers' messages arrive while the help screen is the active screen."""

    async def main() -> None:
        app = ReplayApp(STORY)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)
            await settle(app, pilot)  # indexed, explained and the first detail shown
            assert isinstance(app.screen, HelpScreen)
            await pilot.press("escape")
            assert app.exchange_list.count == ALL
            assert f"{ALL} exchanges" in str(app.query_one("#title", Static).content)

    asyncio.run(main())


def test_a_worker_message_after_the_widgets_went_is_dropped() -> None:
    """As when the app shuts down while a detail is being explained (a CI failure)."""

    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        detail = app.detail_pane.detail
        assert detail is not None
        await app.exchange_list.remove()
        app.post_message(DetailReady(detail))
        app.post_message(Explained(len(app.index), done=True))
        await pilot.pause()

    drive(script)


def test_enter_opens_the_detail_and_esc_comes_back() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await pilot.press("enter")
        assert app.detail_pane.scroller().has_focus
        await pilot.press("escape")
        assert app.exchange_list.has_focus

    drive(script)


def test_a_click_selects_a_row() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await pilot.click(ExchangeList, offset=(20, 5))
        assert app.exchange_list.cursor == 4
        await settle(app, pilot)
        assert app.detail_pane.detail is not None
        assert app.detail_pane.detail.exchange.id == app.index.rows[4].id

    drive(script)


def test_the_layout_holds_at_80x24() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        header = line_text(app, 0)
        assert len(header) <= 80 and header.rstrip().endswith("summary")
        assert app.exchange_list.size.height >= 6
        assert app.detail_pane.size.height >= 8
        assert "kubelet" in "".join(line_text(app, y) for y in range(1, 6))
        assert app.query_one("#filter-status").region.bottom <= 23

    drive(script, size=(80, 24))


def test_the_1_20_recording_replays_too() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        assert app.exchange_list.count == len(app.index) > 0
        await type_filter(pilot, APPLY)
        await settle(app, pilot)
        await pilot.press("4")
        assert "matches the server's result" in tab_text(app, "patch")

    drive(script, path=STORY_1_20)


def test_a_hop_of_the_chain_jumps_to_its_exchange() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await type_filter(pilot, "~r pods/binding")
        await pilot.press("j", "j")
        await settle(app, pilot)
        detail = app.detail_pane.detail
        assert detail is not None and len(detail.chain) > 2
        apply = detail.chain[0]
        assert apply.component == "kubectl" and apply.position is not None
        body = app.query_one("#explain-body", Static)
        for y in range(body.size.height):  # the chain's first hop, clicked
            if apply.summary[:30] in line_text_of(body, y):
                await pilot.click(body, offset=(30, y))
                break
        else:
            raise AssertionError("the chain's first hop is not on screen")
        await pilot.pause()
        assert app.exchange_list.selected == apply.position  # the filter hid it: off now
        assert "off" in status(app)
        await settle(app, pilot)
        assert app.detail_pane.detail is not None
        assert app.detail_pane.detail.exchange.id == apply.id

    drive(script, size=(120, 50))


def line_text_of(widget: Static, y: int) -> str:
    return "".join(segment.text for segment in widget.render_lines(widget.region.reset_offset)[y])


def test_a_large_index_is_filtered_in_a_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_module, "BACKGROUND", 1)

    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await type_filter(pilot, APPLY)
        for _ in range(100):
            if not app.filtering:
                break
            await pilot.pause(0.05)
        assert app.exchange_list.count == 3 and f"3 of {ALL} shown" in status(app)
        await pilot.press("n")
        for _ in range(100):
            if not app.filtering:
                break
            await pilot.pause(0.05)
        assert app.exchange_list.count == 3 and "noise hidden" in status(app)

    drive(script)


def test_the_main_screen_as_an_svg_screenshot(tmp_path: Path) -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await type_filter(pilot, "~r pods/binding")
        await pilot.press("j", "j", "escape")
        await settle(app, pilot)
        path = Path(app.save_screenshot("main.svg", str(tmp_path)))
        svg = path.read_text()
        for said in ("namespace/name", "summary", "Explain", "Patch", "causal", "chain"):
            assert said in svg
        assert "binds" in svg and "scheduler" in svg and "kubectl" in svg

    drive(script)


def test_the_detail_pane_fills_before_its_tabs_are_mounted() -> None:
    """A selection can come before the pane's tabs exist (a million-row recording's first
    rows): filling them then must not fail (it raised NoMatches)."""

    async def main() -> None:
        app = App[None]()
        async with app.run_test():
            pane = DetailPane()  # made, not mounted yet
            pane.waiting()
            assert "explaining" in str(pane.body("explain").content)
            await app.mount(pane)
            assert pane.body("explain").is_mounted

    asyncio.run(main())
