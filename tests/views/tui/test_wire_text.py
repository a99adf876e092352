"""The TUI draws recorded control characters as escapes: in the list's rows, every tab
of the detail, a watch event, the object's timeline, and so in what reaches the terminal.

The recording is an imported audit log whose user agent, annotation and data hold an OSC
title, cursor moves, CR and a bidi override (tests/views/test_wire_text.py makes it)."""

from __future__ import annotations

import asyncio
import io
import re
from pathlib import Path

from rich.console import Console
from textual.pilot import Pilot

from k8s_wiretap.views.tui import ReplayApp
from k8s_wiretap.views.tui.detail.object_timeline import TimelineScreen
from k8s_wiretap.views.tui.detail.panes import TABS
from k8s_wiretap.views.tui.walkthrough.chapters import load
from k8s_wiretap.views.tui.walkthrough.narration_panel import NarrationPanel
from tests.views.test_wire_text import AGENT, ANNOTATION, DATA, OBEYED, audit_recording
from tests.views.tui.pilot import line_text, settle, shown, tab_text, until

AGENT_SHOWN = "\\x1b]0;PWNED\\x07\\x1b[1A\\x1b[2K"


def screen_output(app: ReplayApp) -> str:
    """What the app writes to the terminal for its whole screen, sequences and all."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system="truecolor")
    console.print(app.screen._compositor.render_update(full=True))
    return out.getvalue()


def obeyed_in(output: str) -> list[str]:
    """The wire's sequences in a terminal's output, whose own sequences are kept apart:
    the OSC title, the BEL, the cursor up and erase, the C1 CSI, the bidi override."""
    return [
        s for s in ("\x1b]0;PWNED", "\x07", "\x1b[1A", "\x1b[2K", "\x9b", "\u202e") if s in output
    ]


def shown_at(app: ReplayApp) -> int | None:
    detail = app.detail_pane.detail
    return None if detail is None else detail.position


def test_the_list_the_tabs_and_the_timeline_show_escapes(tmp_path: Path) -> None:
    recording = audit_recording(tmp_path, AGENT + "\x9b", ANNOTATION, DATA)
    seen: dict[str, str] = {}

    async def main() -> None:
        app = ReplayApp(recording)
        async with app.run_test(size=(160, 40)) as pilot:
            await settle(app, pilot)
            await visit(app, pilot)

    async def visit(app: ReplayApp, pilot: Pilot[int]) -> None:
        for position in (0, 1):
            app.action_jump(position)
            await until(pilot, lambda at=position: shown_at(app) == at, "its detail")  # type: ignore[misc]
            await pilot.pause()
            seen[f"row {position}"] = line_text(app, position + 1)
            for key in TABS:
                seen[f"{key} {position}"] = tab_text(app, key)
            seen[f"screen {position}"] = screen_output(app)
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, TimelineScreen), "the timeline")
        screen = app.screen
        assert isinstance(screen, TimelineScreen)
        await until(pilot, lambda: screen.history is not None, "its history")
        await pilot.pause(0.2)
        seen["timeline"] = screen_output(app)

    asyncio.run(main())
    for name, text in seen.items():
        if name.startswith(("screen", "timeline")):
            assert obeyed_in(text) == [], name
        else:
            found = OBEYED.search(text)
            assert found is None, f"{name} shows {found.group()!r}: {text!r}"
    assert AGENT_SHOWN[:10] in seen["row 0"]  # the component's column, cut to its width
    assert AGENT_SHOWN + "\\rFAKE/1.0 (\\u202eevil)\\x9b" in seen["request 0"]
    assert "annotation a=x\\x1b[1A\\x1b[2K" in seen["explain 1"]
    assert 'k: "v\\e]0;TITLE\\a"' in seen["response 1"]  # YAML's own escapes
    drawn = re.sub("\x1b\\[[0-9;]*[mH]", "", seen["timeline"])  # the app's own sequences
    assert re.search(r"rv 5 +[0-9:.]+ \\x1b\]0;PWN", drawn)  # its writer, cut to the width


def test_a_file_name_is_shown_escaped_in_the_title_and_the_warnings(tmp_path: Path) -> None:
    made = audit_recording(tmp_path, "kubectl/v1.33.2", "a", "b")
    recording = tmp_path / "rec\x1b]0;T\x07\u202e.jsonl"
    recording.write_bytes(made.read_bytes() + b"not a record\n")
    said: dict[str, str] = {}

    async def main() -> None:
        app = ReplayApp(recording)
        async with app.run_test(size=(160, 40)) as pilot:
            await settle(app, pilot)
            await until(pilot, lambda: bool(app._notifications), "the warning")
            said["title"] = str(app.query_one("#title").content)  # type: ignore[attr-defined]
            said["warnings"] = " ".join(n.message for n in app._notifications)
            said["screen"] = screen_output(app)

    asyncio.run(main())
    assert "rec\\x1b]0;T\\x07\\u202e.jsonl" in said["title"]
    assert "rec\\x1b]0;T\\x07\\u202e.jsonl: skipped a line" in said["warnings"]
    assert OBEYED.search(said["title"] + said["warnings"]) is None
    assert not [s for s in ("\x1b]0;T", "\x07", "\u202e") if s in said["screen"]]


def test_the_walkthrough_narrates_recorded_text_escaped(tmp_path: Path) -> None:
    recording = audit_recording(tmp_path, AGENT, ANNOTATION, DATA)
    (tmp_path / "t.walkthrough.yaml").write_text(
        f"title: 'a title\\x1b]0;T'\nrecording: {recording.name}\nchapters:\n"
        "  - id: create\n    title: the create\n    find: ~v ^create$\n    text: it creates\n"
    )
    said: dict[str, str] = {}

    async def main() -> None:
        spec = load("t", tmp_path)
        app = ReplayApp(spec.recording, walkthrough=spec)
        async with app.run_test(size=(160, 40)) as pilot:
            panel = app.query_one(NarrationPanel)
            await until(pilot, lambda: panel.current is not None, "the step")
            await pilot.pause(0.2)
            said["narration"] = shown(app.query_one("#narration-text").content)  # type: ignore[attr-defined]
            said["screen"] = screen_output(app)

    asyncio.run(main())
    # Rich drops the BEL as it makes the narration's Text; the rest is shown
    assert "\\x1b]0;PWNED\\x1b[1A\\x1b[2K (a third-party client) creates" in said["narration"]
    drawn = re.sub("\x1b\\[[0-9;]*[mH]", "", said["screen"])
    assert "k8s-wiretap walkthrough a title\\x1b]0;T" in drawn
    assert OBEYED.search(said["narration"]) is None
    assert obeyed_in(said["screen"]) == []
