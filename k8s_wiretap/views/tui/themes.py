"""Light and dark themes readable on a projector, and the colours the components are drawn in.

The components keep the colour names the story gives them (`views/story.py` COLOURS:
cyan, green, magenta, yellow, dim); what each name looks like is the theme's ANSI
palette. Textual's own palettes are made for a monitor: on the light one yellow is
2.3:1 on the background, and on the dark one magenta is the red of errors. These keep
every component colour at least 4.5:1 on the background (WCAG AA for text) and 3:1 on
the list's cursor (`contrast` says how much; tests check it), and the cursor a colour
that the component colours can be read on.
"""

from __future__ import annotations

from argparse import ArgumentTypeError
from typing import Any

from rich.color import Color
from rich.terminal_theme import TerminalTheme
from textual.app import App
from textual.theme import Theme

__all__ = [
    "DARK",
    "LIGHT",
    "THEMES",
    "contrast",
    "install",
    "palette",
    "theme_option",
    "toggled",
]

DARK, LIGHT = "wiretap-dark", "wiretap-light"
NAMES = {"dark": DARK, "light": LIGHT}

THEMES = {
    DARK: Theme(
        name=DARK,
        primary="#3b8eea",
        secondary="#1c5fa8",
        accent="#1f5aa6",
        warning="#f0a030",
        error="#ff5f6f",
        success="#5fd35f",
        foreground="#f2f2f2",
        background="#101010",
        surface="#1a1a1a",
        panel="#262626",
        dark=True,
    ),
    LIGHT: Theme(
        name=LIGHT,
        primary="#0b5cad",
        secondary="#3d7cc9",
        accent="#6aa5f2",
        warning="#9a5b00",
        error="#b00020",
        success="#006e00",
        foreground="#000000",
        background="#ffffff",
        surface="#f3f3f3",
        panel="#e2e2e2",
        dark=False,
        variables={"footer-key-foreground": "#0b5cad"},
    ),
}


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    triplet = Color.parse(hex_colour).get_truecolor()
    return triplet.red, triplet.green, triplet.blue


# the 16 ANSI colours: black, red, green, yellow, blue, magenta, cyan, white, bright black,
# then the other bright ones (as Textual lays its palettes out)


def _palette(colours: str) -> list[tuple[int, int, int]]:
    return [_rgb(colour) for colour in colours.split()]


DARK_ANSI = TerminalTheme(
    _rgb("#101010"),
    _rgb("#f2f2f2"),
    _palette("#1a1a1a #ff5f6f #98e024 #fd971f #8fa8ff #e07ce0 #58d1eb #d0d0c8 #8a8a80"),
    _palette("#ff7f8a #b4f05a #f0e070 #aabaff #f09cf0 #8ae2f2 #ffffff"),
)
LIGHT_ANSI = TerminalTheme(
    _rgb("#ffffff"),
    _rgb("#000000"),
    _palette("#000000 #b00020 #006e00 #8a5a00 #0040c0 #960096 #006e8c #505050 #606060"),
    _palette("#c8102e #1f7a1f #7a4f00 #2050d0 #a020a0 #00708f #303030"),
)
ANSI = {DARK: DARK_ANSI, LIGHT: LIGHT_ANSI}


def install(app: App[Any], name: str = DARK) -> None:
    """Register both themes on `app` (with their ANSI palettes) and use `name`."""
    for theme in THEMES.values():
        app.register_theme(theme)
    app.ansi_theme_dark, app.ansi_theme_light = DARK_ANSI, LIGHT_ANSI
    app.theme = name


def theme_name(word: str) -> str | None:
    """`light` or `dark` (or a theme's full name) → the theme; None if it is neither."""
    return NAMES.get(word.strip().lower()) or (word if word in THEMES else None)


def theme_option(value: str) -> str:
    """`--theme`'s value (`wiretap-dark`, `wiretap-light`, or `dark`, `light`) → the
    theme; ArgumentTypeError, said in one line by argparse, for any other."""
    name = theme_name(value)
    if name is None:
        raise ArgumentTypeError(f"no theme {value!r}: {' or '.join(THEMES)}")
    return name


def toggled(current: str) -> str:
    return LIGHT if current == DARK else DARK


def palette(name: str, colour: str) -> tuple[int, int, int]:
    """What a Rich colour name (the story's `cyan`, ...) is drawn as in theme `name`."""
    triplet = Color.parse(colour).get_truecolor(ANSI[name], foreground=True)
    return triplet.red, triplet.green, triplet.blue


def _luminance(rgb: tuple[int, int, int]) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else float(((c + 0.055) / 1.055) ** 2.4)

    red, green, blue = (channel(v) for v in rgb)
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(one: tuple[int, int, int], other: tuple[int, int, int]) -> float:
    """The WCAG contrast ratio of two colours (1 to 21)."""
    light, dark = sorted((_luminance(one), _luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)
