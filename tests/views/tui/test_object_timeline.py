"""`o`: the object timeline, on the recorded history session (one Deployment changed by
kubectl apply, scale, label as team-b, set image and a server-side apply that takes
replicas over). The TUI's timeline, made from the object's rows read back, tells the same
versions, writers, changes and causes as `explain/objects.history_of` over the whole
recording in memory; a field's story, a write's chain, the jump to its exchange; an
exchange with no single object; a write the proxy did not see; a followed recording; the
screens as a person sees them."""

from __future__ import annotations

import asyncio
import gzip
import json
import time
from collections.abc import Awaitable, Callable, Iterator
from functools import cache
from pathlib import Path

import pytest
from textual.pilot import Pilot

from k8s_wiretap.capture.reader import load
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.explainer import Explainer
from k8s_wiretap.explain.objects import ObjectHistory, Version, history_of
from k8s_wiretap.kube.refs import ObjectRef
from k8s_wiretap.views.tui import ReplayApp
from k8s_wiretap.views.tui.detail.chain_view import ChainScreen
from k8s_wiretap.views.tui.detail.object_timeline import TimelineScreen
from k8s_wiretap.views.tui.help_screen import HelpScreen
from tests.recorded import RECORDINGS, etcd_revisions
from tests.views.tui.pilot import settle, until
from tests.views.tui.snapshots import Shots

SESSION = RECORDINGS / "history-session.jsonl.gz"
WEB = ObjectRef("apps", "deployments", "default", "web")
# its versions: each revision at which etcd stored it, read from the recording's etcd records
REVISIONS = etcd_revisions("/registry/deployments/default/web", SESSION)
Script = Callable[[ReplayApp, Pilot[int]], Awaitable[None]]


@cache
def whole() -> ObjectHistory:
    """The history from the whole recording in memory (`k8s-wiretap history`'s)."""
    return history_of(Explainer(Analysis.of(load(SESSION))), WEB)


def drive(script: Script, path: Path = SESSION, **options: object) -> None:
    async def main() -> None:
        app = ReplayApp(path, **options)  # type: ignore[arg-type]
        async with app.run_test(size=(120, 40)) as pilot:
            if not options.get("follow"):
                await settle(app, pilot)
            await script(app, pilot)

    asyncio.run(main())


def row(app: ReplayApp, method: str, resource: str, component: str = "") -> int:
    return next(
        n
        for n, r in enumerate(app.index.rows)
        if r.method == method and r.resource == resource and component in r.component
    )


async def opened(app: ReplayApp, pilot: Pilot[int], position: int) -> TimelineScreen:
    app.action_jump(position)
    await pilot.pause()
    await pilot.press("o")
    await until(pilot, lambda: isinstance(app.screen, TimelineScreen), "the timeline")
    screen = app.screen
    assert isinstance(screen, TimelineScreen)
    await until(pilot, lambda: screen.history is not None, "its history")
    await pilot.pause()
    return screen


def said(version: Version) -> tuple[object, ...]:
    writer = version.writer
    return (
        version.uid,
        version.resource_version,
        writer and (writer.exchange.id, writer.who, writer.field_manager, writer.summary),
        [c.words for c in version.changes],
        [str(m) for m in version.managers],
        [str(lost) for lost in version.lost],
    )


async def because_shown(screen: TimelineScreen, pilot: Pilot[int]) -> str:
    await until(pilot, lambda: "finding the causal chain" not in why(screen), "the chain")
    return why(screen)


def why(screen: TimelineScreen) -> str:
    return str(screen.query_one("#timeline-why").render())


def lines(option_list: object) -> list[str]:
    from textual.widgets import OptionList

    assert isinstance(option_list, OptionList)
    return [str(option_list.get_option_at_index(n).prompt) for n in range(option_list.option_count)]


def test_the_timeline_tells_what_the_whole_recording_tells_opened_on_the_scale() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        scale = row(app, "PATCH", "deployments/scale")
        screen = await opened(app, pilot, scale)
        history = screen.history
        assert history is not None and history.ref == WEB
        assert [said(v) for v in history.versions] == [said(v) for v in whole().versions]
        title = str(screen.query_one("#timeline-title").render())
        assert "Deployment default/web" in title and f"{len(REVISIONS)} versions" in title
        shown = lines(screen.versions)
        assert len(shown) == len(REVISIONS) and shown[0].startswith(f"rv {REVISIONS[0]}")
        # opened on the version the scale made (its answer is a Scale, not the Deployment)
        current = screen.current
        assert current is not None and current.writer is not None
        assert current.writer.exchange.id == app.index.rows[scale].id
        assert "kubectl scale" in shown[screen.versions.highlighted or 0]
        assert lines(screen.changes) == ["metadata.generation 1 → 2", "replicas 2 → 3"]
        text = await because_shown(screen, pilot)
        assert "kubectl scale: patch (merge) of scale, field manager kubectl" in text
        assert "why: kubectl scale sets Deployment default/web's replicas 2 → 3" in text
        assert "managedFields: kubectl-client-side-apply no longer manages spec.replicas" in text

    drive(script)


def test_a_status_write_says_its_whole_chain_up_to_kubectl() -> None:
    """The cause runs through other objects (the ReplicaSet, its Pods): found over the
    window around the write, as `k8s-wiretap history` finds it over the whole file."""

    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        screen = await opened(app, pilot, row(app, "PATCH", "deployments/scale"))
        wanted = next(v for v in whole().versions if v.writer and len(v.writer.because) > 3)
        assert wanted.writer is not None
        screen.versions.highlighted = next(
            n
            for n, v in enumerate(screen.history.versions)  # type: ignore[union-attr]
            if v.resource_version == wanted.resource_version
        )
        await pilot.pause()
        text = await because_shown(screen, pilot)
        because = wanted.writer.because
        assert f"because: {because[0]}" in text and f"because: {because[-1]}" in text
        assert f"… ({len(because) - 2} more: c shows them) …" in text

    drive(script)


def test_a_field_s_story_from_a_change_and_enter_jumps_to_its_write() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        screen = await opened(app, pilot, row(app, "PATCH", "deployments/scale"))
        await pilot.press("tab", "j", "f")  # the replicas change
        assert screen.field == "spec.replicas"
        assert "spec.replicas: 3 steps" in str(screen.query_one("#timeline-title").render())
        shown = lines(screen.changes)
        assert [s.strip() for s in shown[1::2]] == [
            "spec.replicas = 2",
            "replicas 2 → 3",
            "replicas 3 → 4",
        ]
        assert "kubectl apply" in shown[0] and "kubectl scale" in shown[2]
        await pilot.press("j", "j", "j", "j", "j")  # the server-side apply's step
        current = screen.current
        assert current is not None and current.writer is not None
        assert current.writer.field_manager == "platform"
        text = await because_shown(screen, pilot)
        assert "managedFields: kubectl no longer manages spec.replicas" in text
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, TimelineScreen), "back to the list")
        selected = app.exchange_list.selected
        assert selected is not None
        assert app.index.rows[selected].id == current.writer.exchange.id

    drive(script)


def test_f_or_esc_leaves_the_field_and_esc_closes() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        scale = row(app, "PATCH", "deployments/scale")
        screen = await opened(app, pilot, scale)
        assert screen.versions.has_focus
        await pilot.press("l", "l")  # to the changes, and stays there
        assert screen.changes.has_focus
        await pilot.press("h")
        assert screen.versions.has_focus
        await pilot.press("f")  # on the versions: no change selected
        assert screen.field is None
        await pilot.press("tab", "j", "f", "f")
        assert screen.field is None and lines(screen.changes)[1] == "replicas 2 → 3"
        await pilot.press("tab", "f", "escape")
        assert screen.field is None and isinstance(app.screen, TimelineScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, TimelineScreen)
        assert app.exchange_list.selected == scale

    drive(script)


def test_c_opens_the_chain_of_the_version_s_write() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        scale = row(app, "PATCH", "deployments/scale")
        await opened(app, pilot, scale)
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ChainScreen), "the chain view")
        chain = app.screen
        assert isinstance(chain, ChainScreen) and chain.position == scale
        await until(pilot, lambda: chain.hops is not None, "its hops")
        await pilot.press("escape")
        assert isinstance(app.screen, TimelineScreen)  # back on the timeline
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ChainScreen), "the chain view")
        await until(pilot, lambda: app.screen.hops is not None, "its hops")  # type: ignore[attr-defined]
        await pilot.press("j", "enter")  # the next hop, shown in the list
        await until(pilot, lambda: len(app.screen_stack) == 1, "back to the list")
        assert app.exchange_list.selected not in (None, scale)

    drive(script)


def test_an_exchange_about_many_objects_or_none_says_so() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        for position, words in (
            (row(app, "GET", "", ""), "is not a Kubernetes object"),
            (
                next(n for n, r in enumerate(app.index.rows) if r.watch and not r.name),
                "about many objects",
            ),
        ):
            app.action_jump(position)
            await pilot.pause()
            await pilot.press("o")
            await until(pilot, lambda: len(app.screen_stack) == 1, "the timeline gone")
            await until(
                pilot,
                lambda w=words: any(  # type: ignore[misc]
                    w in str(n.message) for n in app._notifications
                ),
                "the notification",
            )

    drive(script)


def test_a_write_the_proxy_did_not_see_is_said_with_its_sightings_and_managed_fields(
    tmp_path: Path,
) -> None:
    """The recording without kubectl label's PATCH (a client not routed through the
    proxy): its version is seen only in watch events and GETs."""
    records = [json.loads(line) for line in gzip.decompress(SESSION.read_bytes()).splitlines()]
    label = next(
        r["id"]
        for r in records
        if r["record"] == "request"
        and r["method"] == "PATCH"
        and ["kubectl-command", "kubectl label"] in r["headers"]
    )
    path = tmp_path / "unseen.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records if r.get("id") != label))

    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        screen = await opened(app, pilot, row(app, "PATCH", "deployments/scale"))
        history = screen.history
        assert history is not None
        unseen = [n for n, v in enumerate(history.versions) if v.writer is None]
        assert len(unseen) == 1
        version = history.versions[unseen[0]]
        assert [c.words for c in version.changes] == ["label tier=front"]
        assert "not seen written" in lines(screen.versions)[unseen[0]]
        screen.versions.highlighted = unseen[0]
        await pilot.pause()
        text = why(screen)
        assert "written by a client the wiretap did not see; seen in" in text
        assert "managedFields: team-b (Update" in text
        await pilot.press("enter")  # to where it was first seen
        await until(pilot, lambda: len(app.screen_stack) == 1, "back to the list")
        selected = app.exchange_list.selected
        assert selected is not None
        first = next(s for s in version.sightings if s.exchange)  # not etcd's record
        assert app.index.rows[selected].id == first.exchange

    drive(script, path)


def test_a_followed_recording_s_new_versions_come_into_the_open_timeline(
    tmp_path: Path,
) -> None:
    lines_ = gzip.decompress(SESSION.read_bytes()).splitlines(keepends=True)
    records = [json.loads(line) for line in lines_]
    scale = next(
        n for n, r in enumerate(records) if r.get("path", "").endswith("/deployments/web/scale")
    )
    cut = scale + 40  # the scale, its answer and a few of the controllers' writes after it
    path = tmp_path / "growing.jsonl"
    path.write_bytes(b"".join(lines_[:cut]))

    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await until(pilot, lambda: app.index.caught_up, "the file read")
        screen = await opened(app, pilot, row(app, "PATCH", "deployments/scale"))
        history = screen.history
        assert history is not None
        early = len(history.versions)
        assert 0 < early < len(REVISIONS)
        with path.open("ab") as handle:
            handle.write(b"".join(lines_[cut:]))
        await until(
            pilot,
            lambda: screen.history is not None and len(screen.history.versions) == len(REVISIONS),
            "the versions written since",
        )
        title = str(screen.query_one("#timeline-title").render())
        assert f"{len(REVISIONS) - early} since it opened" in title
        current = screen.current
        assert current is not None and current.writer is not None  # still the scale's
        assert (
            current.writer.exchange.id == app.index.rows[row(app, "PATCH", "deployments/scale")].id
        )

    drive(script, path, follow=True)


def test_help_lists_the_key_and_no_key_is_bound_twice() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        from textual.binding import Binding

        main = [b for b in (*app.BINDINGS, *type(app.exchange_list).BINDINGS)]
        keys = [k.strip() for b in main if isinstance(b, Binding) for k in b.key.split(",")]
        assert keys.count("o") == 1
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "help")
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        listed = {b.id: (b.key, b.description) for b in help_screen.shown}
        assert listed["app.timeline"] == ("o", "object history")
        assert listed["timeline.field"] == ("f", "field's story")
        assert {"timeline.switch", "timeline.jump", "timeline.chain", "timeline.back"} <= set(
            listed
        )

    drive(script)


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The clock in one time zone, wherever the tests run."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("size", ["120x40", "80x24"])
def test_the_timeline_screens(size: str, tmp_path: Path, utc: None) -> None:
    """As a person sees it: opened on the scale, then the replicas' story (snapshots in
    tests/views/tui/snapshots/, as test_snapshots.py takes them)."""
    shots = Shots(tmp_path)
    width, height = (int(n) for n in size.split("x"))

    async def main() -> None:
        app = ReplayApp(SESSION)
        async with app.run_test(size=(width, height)) as pilot:
            await settle(app, pilot)
            screen = await opened(app, pilot, row(app, "PATCH", "deployments/scale"))
            await because_shown(screen, pilot)
            shots.take(app, f"timeline-{size}")
            await pilot.press("tab", "j", "f", "j", "j")
            await pilot.pause()
            await because_shown(screen, pilot)
            shots.take(app, f"timeline-field-{size}")

    asyncio.run(main())
    shots.check()


def test_a_get_that_found_nothing_opens_on_the_version_after_it_or_says_none(
    tmp_path: Path,
) -> None:
    """kubectl apply's GET of web, 404 (it is created next): the timeline opens on the
    first version; in the recording cut right after that GET, there is none to show."""
    lines_ = gzip.decompress(SESSION.read_bytes()).splitlines(keepends=True)
    records = [json.loads(line) for line in lines_]
    missing = next(
        r["id"]
        for r in records
        if r["record"] == "request"
        and r["path"].startswith("/apis/apps/v1/namespaces/default/deployments/web")
    )
    end = next(n for n, r in enumerate(records) if r["record"] == "end" and r["id"] == missing)
    cut = tmp_path / "before-the-create.jsonl"
    cut.write_bytes(b"".join(lines_[: end + 1]))

    async def whole_recording(app: ReplayApp, pilot: Pilot[int]) -> None:
        position = app.index.by_id[missing]
        assert app.index.rows[position].status == 404
        screen = await opened(app, pilot, position)
        current = screen.current
        assert current is not None and current.resource_version == REVISIONS[0] and current.created

    async def cut_short(app: ReplayApp, pilot: Pilot[int]) -> None:
        screen = await opened(app, pilot, app.index.by_id[missing])
        assert screen.history is not None and screen.history.versions == []
        assert "0 versions" in str(screen.query_one("#timeline-title").render())
        assert "the recording shows no version of it" in why(screen)
        await pilot.press("enter", "f", "c")  # nothing to show: said, nothing breaks
        assert isinstance(app.screen, TimelineScreen)

    drive(whole_recording)
    drive(cut_short, cut)


def test_a_terminal_made_narrow_leaves_the_time_to_the_pane() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        screen = await opened(app, pilot, row(app, "PATCH", "deployments/scale"))
        current = screen.current
        assert ":" in lines(screen.versions)[0]  # rv 284  19:57:53.224  kubectl apply …
        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: ":" not in lines(screen.versions)[0], "lines without time")
        assert screen.current is current  # the cursor kept on its version
        await pilot.resize_terminal(120, 40)
        await until(pilot, lambda: ":" in lines(screen.versions)[0], "the time back")

    drive(script)
