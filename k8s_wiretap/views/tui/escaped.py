"""What the TUI draws of the wire, its control characters shown (`wire/controls.py`).

Textual writes a segment's text to the terminal as it is: an ESC in a recorded value
would reach the terminal as a sequence it obeys. The list's cells are escaped as they are
cut to their column (`listing/columns.py`); whatever else shows recorded text (the detail's
tabs, a watch event, the chain) is drawn through `Escaped`, or its segments through
`escaped_segments`. A segment's line breaks stay: they are the renderable's own layout.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment

from k8s_wiretap.wire.controls import escape_controls

__all__ = ["Escaped", "escaped_segments"]


def escaped_segments(segments: Iterable[Segment]) -> Iterator[Segment]:
    """`segments`, each text's control characters escaped (control segments kept)."""
    for segment in segments:
        text = segment.text
        if segment.control or text.isprintable():
            yield segment
        else:
            shown = "\n".join(escape_controls(part) for part in text.split("\n"))
            yield Segment(shown, segment.style)


class Escaped:
    """`renderable`, drawn with its text's control characters escaped."""

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable

    def __str__(self) -> str:
        return escape_controls(str(self.renderable))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from escaped_segments(console.render(self.renderable, options))

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.renderable)
