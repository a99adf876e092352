"""Pictures of a recording, as SVG (and PNG): for handouts, the README and slides.

- `chain`: a causal chain as lanes, one per component, its hops' delays on the arrows;
- `map`: who talks to whom, the API server in the middle;
- `sequence`: a range of exchanges as a sequence diagram.

Each reads the recording as a stream (`rows.read`) and keeps only what it draws; `svg`
writes them, `png` renders them with headless Chromium. docs/pictures.md shows each.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from k8s_wiretap.views.pictures.chain import NotInRecording, chain_picture, chain_rows
from k8s_wiretap.views.pictures.png import ChromiumMissing, png
from k8s_wiretap.views.pictures.sequence import BadRange, Range, range_rows, sequence_picture
from k8s_wiretap.views.pictures.svg import Svg
from k8s_wiretap.views.pictures.talkmap import map_picture, tally

__all__ = [
    "KINDS",
    "BadRange",
    "ChromiumMissing",
    "NotInRecording",
    "Range",
    "Svg",
    "draw",
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
