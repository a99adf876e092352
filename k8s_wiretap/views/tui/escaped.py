"""What the TUI draws of the wire, its control characters shown (`wire/controls.py`).

Textual writes a segment's text to the terminal as it is: an ESC in a recorded value
would reach the terminal as a sequence it obeys. The list's cells are escaped as they are
cut to their column (`listing/columns.py`); whatever else shows recorded text (the detail's
tabs, a watch event, the chain, the timeline) is drawn through `escaped` (a `Text` made
again with its styles, any other renderable wrapped in `Escaped`), or its segments through
`escaped_segments`. Line breaks stay: they are the renderable's own layout. (Rich drops
CR, BEL, BS, VT and FF from a `Text` as it is made: those are gone, not shown.)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text

from k8s_wiretap.wire.controls import escape_controls, escape_lines

__all__ = ["Escaped", "escaped", "escaped_segments", "escaped_text"]


def escaped_segments(segments: Iterable[Segment]) -> Iterator[Segment]:
    """`segments`, each text's control characters escaped (control segments kept)."""
    for segment in segments:
        text = segment.text
        if segment.control or text.isprintable():
            yield segment
        else:
            yield Segment(escape_lines(text), segment.style)


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


def escaped_text(text: Text) -> Text:
    """`text` with its control characters escaped, each span's style kept on its part."""
    if text.plain.isprintable():
        return text
    cuts = sorted({offset for span in text.spans for offset in (span.start, span.end)})
    shown = text.blank_copy()
    for piece in text.divide(cuts):
        start = len(shown)
        shown.append(escape_lines(piece.plain))
        for span in piece.spans:  # each covers the whole piece: it was cut at every edge
            shown.stylize(span.style, start, len(shown))
    return shown


def escaped(renderable: RenderableType) -> RenderableType:
    """`renderable` as the TUI may draw it: a `Text` escaped as text (it stays a `Text`,
    read as one), anything else wrapped in `Escaped`."""
    if isinstance(renderable, Text):
        return escaped_text(renderable)
    if isinstance(renderable, str):
        return escape_lines(renderable)
    return Escaped(renderable)
