"""The walkthrough, driven as a person drives it, on the committed recordings: the steps of
recordings/apply-story.walkthrough.yaml found by filter and by causal chain, forward and
back, each selected in the list and shown in its tab with its narration."""

from __future__ import annotations

import asyncio
import re
import shutil
import time
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Footer, Static

from k8s_wiretap.capture.reader import load as load_recording
from k8s_wiretap.views.tui import ReplayApp
from k8s_wiretap.views.tui.listing.window import Windows
from k8s_wiretap.views.tui.walkthrough.chapters import WalkthroughError, load, names
from k8s_wiretap.views.tui.walkthrough.narration import narration as narrated
from k8s_wiretap.views.tui.walkthrough.narration_panel import NarrationPanel
from k8s_wiretap.views.tui.walkthrough.steps import find_steps
from tests.conftest import cli
from tests.recorded import STORY
from tests.views.tui.pilot import settle, shown, tab_text
from tests.views.tui.recorded import explained_index
from tests.views.tui.test_app import type_filter

CHAPTERS = [
    "discovery",
    "openapi",
    "get",
    "patch",
    "etcd",
    "informer",
    "rs-update",
    "pod",
    "binding",
    "kubelet-watch",
    "status",
]


def panel(app: ReplayApp) -> NarrationPanel:
    return app.query_one(NarrationPanel)


def narration(app: ReplayApp) -> str:
    return shown(app.query_one("#narration-text", Static).content).replace("\n", " ")


async def at_step(app: ReplayApp, pilot: Pilot[int], timeout: float = 60) -> None:
    """Until the walkthrough's steps are found and the step's exchange is shown."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        await pilot.pause(0.05)
        step = panel(app).current
        detail = app.detail_pane.detail
        shown_now = detail is not None and step is not None and detail.position == step.position
        if shown_now and step is not None and app.exchange_list.selected == step.position:
            await pilot.pause()
            return
    raise TimeoutError("the walkthrough did not reach its step")


def walk(script, walkthrough: str = "apply-story", size: tuple[int, int] = (120, 40)):  # type: ignore[no-untyped-def]
    async def main() -> ReplayApp:
        spec = load(walkthrough)
        app = ReplayApp(spec.recording, walkthrough=spec)
        async with app.run_test(size=size) as pilot:
            await at_step(app, pilot)
            await script(app, pilot)
        return app

    return asyncio.run(main())


def selected_row(app: ReplayApp):  # type: ignore[no-untyped-def]
    position = app.exchange_list.selected
    assert position is not None
    return app.index.rows[position]


def test_every_chapter_is_found_on_both_recordings() -> None:
    for name, version in (("apply-story", "default"), ("apply-story-1.20", "1.20")):
        index = explained_index(version)
        steps = find_steps(load(name), index, Windows(index))
        assert steps.missing == [], steps.missing
        assert [s.chapter.id for s in steps.steps] == CHAPTERS
        positions = {s.chapter.id: s.position for s in steps.steps}
        by_id = {chapter: index.rows[position] for chapter, position in positions.items()}
        assert (by_id["patch"].method, by_id["patch"].resource) == ("PATCH", "deployments")
        assert by_id["get"].method == "GET" and by_id["get"].time < by_id["patch"].time
        assert positions["etcd"] == positions["patch"]  # the same row
        assert by_id["informer"].watch and "shared-informers" in by_id["informer"].component
        assert by_id["kubelet-watch"].watch and by_id["kubelet-watch"].component == "kubelet"
        assert (by_id["binding"].component, by_id["binding"].resource) == (
            "scheduler",
            "pods/binding",
        )
        assert by_id["status"].resource == "pods/status"
        assert by_id["status"].name == by_id["binding"].name  # the pod that was bound
        # "before it sends anything": step 1 shows a request sent before step 2's
        assert by_id["discovery"].time < by_id["openapi"].time


def test_the_second_apply_comes_after_the_first_is_introduced() -> None:
    """Steps 1 and 2 are the first kubectl apply's time (the one that creates web), step 3
    the next apply's, which a chapter before it has introduced as the second."""
    for name, version in (("apply-story", "default"), ("apply-story-1.20", "1.20")):
        spec = load(name)
        index = explained_index(version)
        steps = {s.chapter.id: s for s in find_steps(spec, index, Windows(index)).steps}
        recording = load_recording(spec.recording)
        applies: list[str] = []
        for exchange in recording.exchanges:
            session = exchange.request_header("kubectl-session")
            said = exchange.request_header("kubectl-command")
            if said == "kubectl apply" and session and session not in applies:
                applies.append(session)
        by_apply = [
            [e for e in recording.exchanges if e.request_header("kubectl-session") == apply]
            for apply in applies[:2]
        ]
        first, second = by_apply
        assert [(e.method, e.status) for e in first if e.info.resource == "deployments"] == [
            ("GET", 404),
            ("POST", 201),
        ]
        of = {k: s.detail.exchange.request_header("kubectl-session") for k, s in steps.items()}
        assert of["openapi"] == applies[0] and of["get"] == applies[1]
        schema = [e.status for e in second if e.path.startswith("/openapi/") and e.status != 404]
        assert schema[0] == 304  # "the next apply gets a 304"
        # the discovery is kubectl get's; the controller manager's watch opened before either apply
        assert steps["discovery"].detail.exchange.request_header("kubectl-command") == "kubectl get"
        assert steps["informer"].detail.exchange.time < first[0].time
        ids = [c.id for c in spec.chapters]
        told = [n for n, c in enumerate(spec.chapters) if "first kubectl apply" in c.text]
        assert "second apply" in spec.chapters[ids.index("get")].title.lower()
        assert told and told[0] < ids.index("get"), "the second apply, but which was the first?"


def test_a_step_names_its_component_once() -> None:
    """`kubectl get: discovery of /apis`, not `kubectl kubectl get: ...`; `controller-manager/
    shared-informers's informer starts`, its name not twice: in the panel and in the text."""
    versions = {"apply-story.jsonl.gz": "default", "apply-story-1.20.jsonl.gz": "1.20"}
    for name in names():
        spec = load(name)
        if spec.recording.name not in versions:
            continue  # the kubelet's recording: its walkthrough in test_stories.py
        index = explained_index(versions[spec.recording.name])
        steps = find_steps(spec, index, Windows(index)).steps
        for number, step in enumerate(steps, 1):
            component = step.detail.explained.who.component
            lines = shown(narrated(step, number, len(steps)), width=2000).splitlines()
            what = lines[2]  # after the head and the chapter's text: who did what
            assert f"{component} {component}" not in what, (name, number, what)
    out = cli("walkthrough", "--text").stdout
    assert "  kubectl get: discovery of /api\n" in out and "kubectl: kubectl" not in out
    assert "  controller-manager/shared-informers's informer starts: a watch list" in out
    assert "scheduler: the scheduler binds Pod web-" in out  # who in words stays


def test_no_chapter_points_above_itself() -> None:
    """A step is shown alone, its narration on top of the tabs: an earlier step is named,
    not pointed at ("the patch above"), and what a chapter points at is below it."""
    for name in names():
        for chapter in load(name).chapters:
            assert not re.search(r"\babove\b", chapter.text), (name, chapter.id, chapter.text)


def test_forward_and_back_through_the_apply_story() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        assert "1/11" in narration(app) and "kubectl asks what the server serves" in narration(app)
        assert selected_row(app).path.startswith("/api?")  # kubectl get's first request
        assert app.screen.has_class("-walking")

        await pilot.press("right", "l", "space")  # the three keys of the next step
        await at_step(app, pilot)
        row = selected_row(app)
        assert (row.component, row.method, row.resource) == ("kubectl", "PATCH", "deployments")
        assert "three-way" in row.summary
        assert app.detail_pane.active == "patch"
        patch = tab_text(app, "patch")
        assert "strategic patch" in patch and "replicas: 3" in patch
        assert "matches the server's result" in patch
        said = narration(app)
        assert "4/11" in said and "A three-way strategic merge patch" in said
        assert "set /spec/replicas: 2 → 3 (changed by your file)" in said
        assert "etcd: /registry/deployments/default/web @" in said
        patch_position = app.exchange_list.selected
        assert patch_position is not None

        await pilot.press("l")  # the same exchange, its etcd record, in the Explain tab
        await at_step(app, pilot)
        assert app.exchange_list.selected == patch_position
        assert app.detail_pane.active == "explain"
        assert "5/11" in narration(app) and "stored (protobuf): " in narration(app)

        await pilot.press("l", "l", "l", "l")
        await at_step(app, pilot)
        row = selected_row(app)
        assert (row.component, row.resource) == ("scheduler", "pods/binding")
        assert "9/11" in narration(app) and "binds Pod web-" in narration(app)
        assert "the scheduler binds Pod" in tab_text(app, "explain")

        await pilot.press("l", "l")
        await at_step(app, pilot)
        row = selected_row(app)
        assert (row.component, row.method, row.resource) == ("kubelet", "PATCH", "pods/status")
        explain = tab_text(app, "explain")
        assert "causal chain" in explain and "kubectl apply patches Deployment" in explain
        assert "11/11" in narration(app)
        # the chain it points at is in the Explain tab, under the narration
        assert "The causal chain below" in " ".join(narration(app).split())
        assert "causal chain (from the user's action)" not in narration(app)  # the tab has it
        assert app.detail_pane.region.y > panel(app).region.bottom - 1
        await pilot.press("l")  # past the end: stays
        await at_step(app, pilot)
        assert "11/11" in narration(app)

        await pilot.press("left")  # the kubelet's watch, its events
        await at_step(app, pilot)
        row = selected_row(app)
        assert row.watch and row.component == "kubelet"
        assert app.detail_pane.active == "events"
        assert "it carried event #" in narration(app) and "the ADDED of pods" in narration(app)
        assert marked_event(app) == carried(app)
        await pilot.press("h", "h", "h", "h", "h", "h")
        await at_step(app, pilot)
        assert selected_row(app).id == app.index.rows[patch_position].id  # back at 4/11

        await pilot.press("escape")  # leaves the walkthrough; the replay goes on
        await pilot.pause()
        assert not panel(app).is_open and not app.screen.has_class("-walking")
        cursor = app.exchange_list.cursor
        await pilot.press("space")  # the list's page down again
        assert app.exchange_list.cursor > cursor

    walk(script)


def carried(app: ReplayApp) -> tuple[int, str, str]:
    """The event the narration says the step's watch carried: its number, type and
    resourceVersion."""
    said = re.search(
        r"it carried event #(\d+) of \d+: the (\w+) of .*?\(resourceVersion (\d+)\)",
        narration(app),
    )
    assert said is not None, narration(app)
    return int(said[1]), said[2], said[3]


def marked_event(app: ReplayApp) -> tuple[int, str, str] | None:
    """The event the Events tab marks (▸), and that it is in sight."""
    rows = [line.split() for line in tab_text(app, "events").splitlines()]
    marked = [row for row in rows if row and row[0].startswith("▸")]
    if not marked:
        return None
    (row,) = marked
    number = int(row[0].removeprefix("▸"))
    scroller = app.detail_pane.scroller("events")
    at = rows.index(row)  # the heading and the table's header come first
    assert scroller.scroll_y <= at < scroller.scroll_y + scroller.size.height
    return number, row[2], row[5] if row[4].count("/") else row[4]


def test_the_footer_fits_at_120_columns() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        footer = app.query_one(Footer)
        palette = footer.query_one(".-command-palette")
        keys = [key for key in footer.children if key is not palette]
        assert max(key.region.right for key in keys) <= palette.region.x, "the footer is cut"
        assert footer.max_scroll_x == 0

    walk(script)


def test_the_event_a_step_names_is_marked_in_the_events_tab() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        assert marked_event(app) is None  # step 1 names no event
        await pilot.press("l", "l", "l", "l", "l")  # 6/11: the informer's watch
        await at_step(app, pilot)
        assert "6/11" in narration(app) and app.detail_pane.active == "events"
        assert marked_event(app) == carried(app)
        assert carried(app)[:2] == (7, "MODIFIED")
        await pilot.press("escape")  # left: the tab is the replay's again
        await pilot.pause()
        assert marked_event(app) is None

    walk(script)


def test_w_opens_it_in_replay_and_the_layout_holds_at_80x24() -> None:
    async def main() -> None:
        app = ReplayApp(STORY)
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(app, pilot)
            assert not panel(app).is_open
            await pilot.press("w")
            await at_step(app, pilot)
            assert "1/11" in narration(app)
            for widget in (app.exchange_list, panel(app), app.detail_pane):
                assert widget.region.height >= 4, widget
            await pilot.press("escape", "w")  # again: where it was
            await pilot.pause()
            assert panel(app).is_open and "1/11" in narration(app)

    asyncio.run(main())


def test_a_filter_typed_while_walking_gets_its_keys_and_a_step_shows_through_it() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await type_filter(pilot, "~c kubelet")  # space and esc are the input's, not the steps'
        await pilot.pause()
        assert app.filter_state.text == "~c kubelet"
        assert "1/11" in narration(app) and panel(app).is_open
        await pilot.press("l")  # kubectl's exchange, hidden by the filter: the filter goes off
        await at_step(app, pilot)
        assert "2/11" in narration(app) and selected_row(app).component == "kubectl"
        assert not app.filter_state.enabled
        await pilot.press("slash", "escape")  # esc gives up the input, the walkthrough stays
        await pilot.pause()
        assert panel(app).is_open

    walk(script)


def test_the_narration_scrolls_on_a_small_screen() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await pilot.press("l", "l", "l")  # the patch: the longest narration
        await at_step(app, pilot)
        assert panel(app).max_scroll_y > 0  # more than the panel holds at 80x24
        await pilot.press("J", "J")
        assert panel(app).scroll_y == 2
        await pilot.press("K")
        assert panel(app).scroll_y == 1

    walk(script, size=(80, 24))


def test_no_walkthrough_no_key(tmp_path: Path) -> None:
    copy = tmp_path / "story.jsonl.gz"
    shutil.copy(STORY, copy)

    async def main() -> None:
        app = ReplayApp(copy)
        async with app.run_test() as pilot:
            await settle(app, pilot)
            assert app.walkthrough is None
            assert app.check_action("walkthrough", ()) is False
            await pilot.press("w")
            assert not panel(app).is_open

    asyncio.run(main())


def test_unknown_names_and_missing_recordings_are_one_line(tmp_path: Path) -> None:
    assert names() == [
        "apply-story",
        "apply-story-1.20",
        "etcd-and-watches",
        "kubelet-life",
        "who-does-what",
    ]
    result = cli("walkthrough", "nope")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (
        "k8s-wiretap: no walkthrough 'nope': the walkthroughs are apply-story, apply-story-1.20,"
        " etcd-and-watches, kubelet-life, who-does-what\n"
    )
    (tmp_path / "gone.walkthrough.yaml").write_text("recording: gone.jsonl.gz\nchapters: []\n")
    result = cli("walkthrough", "gone", "--dir", str(tmp_path))
    assert result.returncode == 1
    assert result.stderr.startswith("k8s-wiretap: walkthrough 'gone': its recording ")
    assert "is missing (the walkthroughs are gone)" in result.stderr
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    ("chapter", "said"),
    [
        ("{title: t, find: '~x y'}", "unknown filter ~x"),
        ("{title: t}", "how to find its exchange"),
        ("{title: t, same: nowhere}", "same 'nowhere': no chapter has that id"),
        ("{title: t, find: x, tab: nope}", "tab 'nope'"),
        ("{find: x}", "a chapter needs a title"),
    ],
)
def test_a_bad_walkthrough_file_says_where(tmp_path: Path, chapter: str, said: str) -> None:
    shutil.copy(STORY, tmp_path / "story.jsonl.gz")
    (tmp_path / "bad.walkthrough.yaml").write_text(
        f"recording: story.jsonl.gz\nchapters:\n  - {chapter}\n"
    )
    with pytest.raises(WalkthroughError, match=r"bad\.walkthrough\.yaml") as raised:
        load("bad", tmp_path)
    assert said in str(raised.value)


def test_without_a_terminal_it_prints_the_narration() -> None:
    result = cli("walkthrough")  # stdout is a pipe here
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("What happens when you kubectl apply (apply-story.jsonl.gz)\n")
    headings = [line for line in out.splitlines() if line.startswith("== ")]
    assert len(headings) == 11 and headings[3] == "== 4/11 A three-way strategic merge patch"
    assert "set /spec/replicas: 2 → 3 (changed by your file)" in out
    assert "scheduler: the scheduler binds Pod web-" in out
    assert "kubelet: the kubelet reports Pod web-" in out
    last = out[out.index("== 11/11") :]  # "the causal chain below": there, from the apply
    chain = last[last.index("The causal chain below") :].split("causal chain (from the user")[1]
    hops = [line.strip() for line in chain.splitlines()[1:] if line.strip()]
    assert " kubectl apply patches Deployment default/web" in hops[0]
    assert hops[-1].startswith("▶ ") and "kubelet: the kubelet reports Pod web-" in hops[-1]
