"""The `:` command line: what it reads, and each command run in the app."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from k8s_wiretap.capture.reader import load
from k8s_wiretap.views.tui import ReplayApp
from k8s_wiretap.views.tui.detail.chain_view import ChainScreen
from k8s_wiretap.views.tui.filtering.command_line import Command, CommandError, parse
from k8s_wiretap.views.tui.help_screen import HelpScreen
from k8s_wiretap.views.tui.messages import Saving
from tests.recorded import (
    STORY,
    etcd_count,
    exchange_count,
    is_binding,
    is_kubectl_apply,
    positions,
)
from tests.views.tui.filtering.test_search import press_text
from tests.views.tui.pilot import drive, settle
from tests.views.tui.test_app import APPLY, status, type_filter
from tests.views.tui.test_save import unwritable

ALL, ETCD = exchange_count(STORY), etcd_count(STORY)  # counted from the file
BINDINGS = positions(STORY, is_binding)


@pytest.mark.parametrize(
    ("text", "command"),
    [
        (":filter ~c scheduler ~v patch", Command("filter", "~c scheduler ~v patch")),
        ("filter", Command("filter")),
        ("search binds Pod", Command("search", "binds Pod")),
        ("save out.jsonl", Command("save", "out.jsonl")),
        ("save! out.jsonl", Command("save", "out.jsonl", force=True)),
        ("save-filtered! a b.jsonl.gz", Command("save-filtered", "a b.jsonl.gz", force=True)),
        ("copy response", Command("copy", "response")),
        ("copy", Command("copy")),
        ("theme light", Command("theme", "light")),
        ("help", Command("help")),
        ("q", Command("quit")),
    ],
)
def test_a_command_line_is_read(text: str, command: Command) -> None:
    assert parse(text) == command


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", "no command"),
        ("frobnicate", "unknown command :frobnicate"),
        ("save", "usage: :save FILE"),
        ("copy headers", "usage: :copy request|response"),
        ("help me", "takes no argument"),
        ("theme! dark", "takes no !"),
    ],
)
def test_what_is_not_a_command_says_why_in_one_line(text: str, error: str) -> None:
    with pytest.raises(CommandError, match=error) as raised:
        parse(text)
    assert "\n" not in str(raised.value)


async def command(pilot: Pilot[int], text: str) -> None:
    await pilot.press("colon", *press_text(text), "enter")
    await pilot.pause()


async def saved(app: ReplayApp, pilot: Pilot[int], text: str) -> str:
    """Run the `:save` command `text`; what its worker said, once it has."""
    app.commands.said = ""
    await command(pilot, text)
    for _ in range(200):
        await pilot.pause(0.05)
        if app.commands.said:
            return app.commands.said
    raise TimeoutError("the save said nothing")


def test_filter_search_theme_help_and_chain_commands() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await command(pilot, "filter " + APPLY)
        assert app.exchange_list.count == 3 and f"3 of {ALL} shown" in status(app)
        await command(pilot, "filter")
        assert app.exchange_list.count == ALL
        await command(pilot, "search binds pod")  # the first from the cursor (the apply) on
        first = positions(STORY, is_kubectl_apply)[0]
        after = next(n for n, at in enumerate(BINDINGS, 1) if at > first)
        assert f"{after} of {len(BINDINGS)}" in status(app)
        await command(pilot, "theme light")
        assert app.theme == "wiretap-light" and not app.current_theme.dark
        await pilot.press("t")
        assert app.theme == "wiretap-dark"
        await command(pilot, "theme sepia")
        assert "usage: :theme light|dark" in app.commands.said and app.theme == "wiretap-dark"
        await command(pilot, "help")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await command(pilot, "chain")
        assert isinstance(app.screen, ChainScreen)
        await pilot.press("escape")
        await command(pilot, "nope")
        assert "unknown command :nope" in app.commands.said
        assert app.exchange_list.has_focus

    drive(script)


def test_a_save_says_how_far_it_has_got_and_is_one_at_a_time(tmp_path: Path) -> None:
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"

    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        commands = app.commands
        commands.run(f"save {first}")
        assert "saving 0%: first.jsonl" in status(app)  # the worker has not begun yet
        commands.run(f"save {second}")
        assert commands.said == f"cannot save: still saving {first}"
        commands.saving_at(Saving(str(first), "writing", 0.42))
        assert "saving 42%: first.jsonl" in status(app)
        commands.saving_at(Saving(str(first), "finding their etcd records", 0))
        assert "saving (finding their etcd records): first.jsonl" in status(app)
        commands.said = ""
        for _ in range(200):
            await pilot.pause(0.05)
            if commands.said:
                break
        assert commands.said.startswith(f"saved {ALL} exchanges") and "saving" not in status(app)
        assert not second.exists() and first.stat().st_mode & 0o777 == 0o600

    drive(script)


def test_esc_gives_up_a_command() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await pilot.press("colon", *press_text("quit"), "escape")
        assert app.is_running and app.exchange_list.has_focus
        await pilot.press("colon", "w", "right", "escape")  # typed, not the walkthrough
        assert app.is_running and not app._narration.is_open

    drive(script)


def test_save_and_save_filtered_read_back_and_never_overwrite(tmp_path: Path) -> None:
    whole, subset = tmp_path / "whole.jsonl", tmp_path / "kubectl.jsonl.gz"

    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        assert (await saved(app, pilot, f"save {whole}")).startswith(
            f"saved {ALL} exchanges and {ETCD} etcd records"
        )
        await type_filter(pilot, APPLY)
        assert "saved 4 exchanges" in await saved(
            app, pilot, f"save-filtered {subset}"
        )  # and /version
        before = whole.read_bytes()
        said = await saved(app, pilot, f"save {whole}")
        assert said == f"cannot save: {whole} exists (:save! {whole} replaces it)"
        assert whole.read_bytes() == before
        assert f"saved {ALL}" in await saved(app, pilot, f"save! {whole}")
        assert "does not exist" in await saved(app, pilot, f"save {tmp_path / 'no' / 'such.jsonl'}")
        denied = unwritable(tmp_path) / "out.jsonl"
        assert await saved(app, pilot, f"save {denied}") == (
            f"cannot save to {denied}: Permission denied"
        )

    app = drive(script)
    rows = {row.id for row in app.index.rows}
    assert {e.id for e in load(whole).exchanges} == rows
    kept = load(subset)
    assert [e.method for e in kept.exchanges].count("PATCH") == 3
    assert {e.path.split("?")[0] for e in kept.exchanges} >= {"/version"}
    # the etcd records of the three writes: the Deployment at each PATCH's revision
    assert [c.key for c in kept.etcd] == ["/registry/deployments/default/web"] * 3
    assert len(load(whole).etcd) == ETCD


def test_copy_a_body_as_shown() -> None:
    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await type_filter(pilot, APPLY)
        await settle(app, pilot)
        await command(pilot, "copy request")
        assert "replicas: 3" in app.clipboard and "last-applied-configuration" in app.clipboard
        assert app.commands.said.startswith("copied the request body (")
        await command(pilot, "copy response")
        assert "kind: Deployment" in app.clipboard and "resourceVersion" in app.clipboard
        await pilot.press("2", "y")  # the Request tab: its body
        assert "last-applied-configuration" in app.clipboard
        await type_filter(pilot, "~c kubelet ~v get")
        await settle(app, pilot)
        await command(pilot, "copy request")
        assert app.commands.said == "nothing to copy: the request has no body"

    drive(script)
