"""Snapshot tests' comparison: a screen's SVG screenshot against a committed file.

Rolled here rather than pytest-textual-snapshot (whose 1.1 pins an old syrupy, and with it
pytest < 9). What varies from run to run is taken out of the SVG before comparing: the
`terminal-NNN` prefix of its ids and CSS classes (a hash), the title. The rest is made
the same by the test: the terminal size, the time zone (UTC: the list's clock), the
explanation finished and the detail shown, no animation (the tabs' underline), no
notifications, no cursor blink.
`K8S_WIRETAP_UPDATE_SNAPSHOTS=1` writes the expected files instead of comparing; a screen
that differs is written beside the test's temporary folder, to look at.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from textual.widgets import Input

from k8s_wiretap.views.tui import ReplayApp

__all__ = ["SNAPSHOTS", "Shots"]

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = "K8S_WIRETAP_UPDATE_SNAPSHOTS"


def normalised(svg: str) -> str:
    svg = re.sub(r"terminal-\d+", "terminal", svg)
    return re.sub(r"<title[^>]*>.*?</title>", "<title/>", svg, flags=re.S)


class Shots:
    """Screens compared as they are taken; `check()` fails naming every one that differs."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.differ: list[str] = []
        self.update = os.environ.get(UPDATE) == "1"

    def take(self, app: ReplayApp, name: str) -> None:
        app.clear_notifications()
        for typed in app.screen.query(Input):
            typed.cursor_blink = False
        svg = normalised(app.export_screenshot(title="k8s-wiretap"))
        expected = SNAPSHOTS / f"{name}.svg"
        if self.update:
            SNAPSHOTS.mkdir(exist_ok=True)
            expected.write_text(svg)
        elif not expected.exists() or expected.read_text() != svg:
            (self.out / f"{name}.svg").write_text(svg)
            self.differ.append(name)

    def check(self) -> None:
        assert not self.differ, (
            f"screens differ from tests/views/tui/snapshots/: {', '.join(self.differ)}; "
            f"as they are now: {self.out}; if the change is meant, {UPDATE}=1 updates them"
        )
