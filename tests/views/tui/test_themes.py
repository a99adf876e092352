"""The themes: every component's colour readable on the background and on the cursor."""

from __future__ import annotations

import asyncio
import sys

import pytest

from k8s_wiretap.cli import build_parser
from k8s_wiretap.commands import serve
from k8s_wiretap.views.story import COLOURS
from k8s_wiretap.views.tui import ReplayApp
from k8s_wiretap.views.tui.themes import (
    DARK,
    LIGHT,
    THEMES,
    contrast,
    palette,
    theme_name,
    toggled,
)
from tests.conftest import cli
from tests.recorded import STORY

CURSOR = 0.6  # the list's cursor: $accent 60% over the background


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    value = hex_colour.lstrip("#")
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


def _mix(one: tuple[int, int, int], other: tuple[int, int, int], part: float) -> tuple[int, ...]:
    return tuple(round(a * part + b * (1 - part)) for a, b in zip(one, other, strict=True))


def drawn(name: str, style: str) -> tuple[int, int, int]:
    """A component's style (`bold cyan`, `dim`) as theme `name` draws it: a colour name
    through its palette; dim blended towards the background as Textual does (66%)."""
    theme = THEMES[name]
    words = style.split()
    colours = [w for w in words if w not in ("bold", "dim", "italic")]
    colour = palette(name, colours[0]) if colours else _rgb(theme.foreground or "")
    if "dim" in words:
        mixed = _mix(colour, _rgb(theme.background or ""), 0.66)
        return mixed[0], mixed[1], mixed[2]
    return colour


@pytest.mark.parametrize("name", [DARK, LIGHT])
@pytest.mark.parametrize("style", [*COLOURS.values(), "white", "red"])
def test_component_colours_are_readable_on_both_themes(name: str, style: str) -> None:
    theme = THEMES[name]
    background = _rgb(theme.background or "")
    cursor = _mix(_rgb(theme.accent or ""), background, CURSOR)
    assert contrast(drawn(name, style), background) >= 4.5  # WCAG AA, for text
    assert contrast(drawn(name, style), (cursor[0], cursor[1], cursor[2])) >= 3.0


def test_the_theme_words() -> None:
    assert theme_name("light") == LIGHT and theme_name("Dark") == DARK
    assert theme_name(LIGHT) == LIGHT and theme_name("sepia") is None
    assert toggled(DARK) == LIGHT and toggled(LIGHT) == DARK
    assert contrast((0, 0, 0), (255, 255, 255)) == pytest.approx(21)


@pytest.mark.parametrize(
    "args",
    [
        ["replay", str(STORY)],
        ["walkthrough"],
        ["serve", "replay", str(STORY)],
        ["serve", "walkthrough"],
    ],
)
def test_an_unknown_theme_is_one_line(args: list[str]) -> None:
    result = cli(*args, "--theme", "sepia")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.endswith(
        "error: argument --theme: no theme 'sepia': wiretap-dark or wiretap-light (see --help)\n"
    )
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize("word", ["wiretap-light", "light"])
def test_the_theme_flag_of_replay_and_walkthrough(word: str) -> None:
    for args in (["replay", str(STORY)], ["walkthrough"]):
        assert build_parser(args).parse_args([*args, "--theme", word]).theme == LIGHT
        assert build_parser(args).parse_args(args).theme == DARK


@pytest.mark.parametrize("what", [["replay", str(STORY)], ["walkthrough"]])
def test_serve_passes_the_theme_to_each_session(
    monkeypatch: pytest.MonkeyPatch, what: list[str]
) -> None:
    commands: list[list[str]] = []
    monkeypatch.setattr(serve, "_serve", lambda _args, command, _title: commands.append(command))
    argv = ["serve", *what, "--theme", "light"]
    build_parser(argv).parse_args(argv).handler(build_parser(argv).parse_args(argv))
    (command,) = commands
    assert command[:3] == [sys.executable, "-m", "k8s_wiretap"]
    session = command[3:]  # what each browser tab runs, read as the command line reads it
    assert build_parser(session).parse_args(session).theme == LIGHT


def test_the_app_starts_in_the_theme_asked_for() -> None:
    async def main() -> tuple[str, bool]:
        app = ReplayApp(STORY, explain=False, theme=LIGHT)
        async with app.run_test() as pilot:
            await pilot.pause()
            started = app.theme, app.current_theme.dark
            await pilot.press("t")
            assert app.theme == DARK
        return started

    assert asyncio.run(main()) == (LIGHT, False)
