"""The committed recordings, indexed once (the index is read-only after its scan)."""

from __future__ import annotations

from functools import cache

from k8s_wiretap.views.tui.listing.explaining import explain_rows
from k8s_wiretap.views.tui.listing.index import RecordingIndex
from tests.recorded import STORY, STORY_1_20

__all__ = ["STORY", "STORY_1_20", "explained_index", "indexed"]


@cache
def indexed(name: str = "default") -> RecordingIndex:
    """The index of STORY ("default": the default release's) or of STORY_1_20 ("1.20")."""
    index = RecordingIndex(STORY if name == "default" else STORY_1_20)
    index.scan()
    return index


@cache
def explained_index(name: str = "default") -> RecordingIndex:
    index = indexed(name)
    explain_rows(index, lambda _count: None)
    return index


def position(index: RecordingIndex, **fields: object) -> int:
    """The first row whose fields are these."""
    for number, row in enumerate(index.rows):
        if all(getattr(row, name) == value for name, value in fields.items()):
            return number
    raise LookupError(fields)
