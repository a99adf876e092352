"""A renderable's control characters escaped as the TUI draws it, its styles kept."""

from __future__ import annotations

from rich.console import Console, Group
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from k8s_wiretap.views.tui.escaped import Escaped, escaped, escaped_segments


def test_a_text_stays_a_text_with_each_style_on_its_part() -> None:
    text = Text.assemble(("a\x1b[2Kb", "bold"), " c\u202ed", ("\x9b", "red"))
    shown = escaped(text)
    assert isinstance(shown, Text)
    assert shown.plain == "a\\x1b[2Kb c\\u202ed\\x9b"
    styled = {shown.plain[s.start : s.end]: str(s.style) for s in shown.spans}
    assert styled == {"a\\x1b[2Kb": "bold", "\\x9b": "red"}
    clean = escaped(Text("clean", style="dim"))
    assert isinstance(clean, Text) and clean.plain == "clean"


def test_any_renderable_is_drawn_escaped_its_line_breaks_kept() -> None:
    group = Group(Text("one\x1b]0;T\x07"), Text("two\nthree\u2066"))
    console = Console(width=40, record=True, color_system=None)
    console.print(escaped(group))
    assert console.export_text() == "one\\x1b]0;T\ntwo\nthree\\u2066\n"
    assert isinstance(escaped(group), Escaped)


def test_control_segments_and_clean_text_are_kept_as_they_are() -> None:
    clean, move = Segment("plain", Style(bold=True)), Segment("", None, [(1, 2)])  # type: ignore[list-item]
    dirty = Segment("x\x1by\nz\x9b", Style(italic=True))
    assert list(escaped_segments([clean, move, dirty])) == [
        clean,
        move,
        Segment("x\\x1by\nz\\x9b", Style(italic=True)),
    ]
