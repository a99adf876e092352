"""Pictures of a recording, as SVG (and PNG): for handouts, the README and slides.

- `chain`: a causal chain as lanes, one per component, its hops' delays on the arrows;
- `map`: who talks to whom, the API server in the middle;
- `sequence`: a range of exchanges as a sequence diagram.

Each reads the recording as a stream (`rows.read`) and keeps only what it draws; `svg`
writes them, `png` renders them with headless Chromium. docs/pictures.md shows each.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable
from contextlib import suppress
from typing import Any

from k8s_wiretap.views.pictures.chain import NotInRecording, chain_picture, chain_rows
from k8s_wiretap.views.pictures.png import ChromiumMissing, png
from k8s_wiretap.views.pictures.sequence import BadRange, Range, range_rows, sequence_picture
from k8s_wiretap.views.pictures.svg import Svg
from k8s_wiretap.views.pictures.talkmap import map_picture, tally

__all__ = [
    "HANDOUT",
    "KINDS",
    "BadRange",
    "ChromiumMissing",
    "NotInRecording",
    "Range",
    "Svg",
    "data_uri",
    "draw",
    "handout",
    "png",
]

KINDS = ("chain", "map", "sequence")


def draw(
    kind: str,
    records: Callable[[], Iterable[dict[str, Any]]],
    *,
    exchange: str | None = None,
    span: Range | None = None,
) -> Svg:
    """The picture `kind` of the recording `records()` reads (the chain reads it twice):
    the chain of `exchange`, the sequence of `span`, or their defaults."""
    if kind == "chain":
        return chain_picture(chain_rows(records, exchange))
    if kind == "map":
        return map_picture(tally(records()))
    if kind == "sequence":
        return sequence_picture(range_rows(records(), span or Range()))
    raise ValueError(f"no picture {kind!r}")


HANDOUT = ("map", "chain")  # the pictures a Markdown handout opens with


def handout(records: Callable[[], Iterable[dict[str, Any]]]) -> list[tuple[str, Svg]]:
    """The pictures of a recording's handout, by kind: who talks to whom, then the chain
    a kubectl command set off (none when no kubectl command set anything off)."""
    pictures = [("map", draw("map", records))]
    with suppress(NotInRecording):
        pictures.append(("chain", draw("chain", records)))
    return pictures


def data_uri(svg: Svg) -> str:
    """The picture as a `data:` URI, for a Markdown file that must stand alone."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg.render().encode()).decode()
