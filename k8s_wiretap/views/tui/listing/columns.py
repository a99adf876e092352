"""The list's columns: which fit the width, and one row as a line of text.

Columns are dropped, least useful first (size, duration, then a watch's event count),
until the summary keeps at least `SUMMARY_MIN` cells: at 80 columns the list shows time,
component, verb, resource, name, status and the summary; at 100 also the event count;
from about 110 duration and size too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text

from k8s_wiretap.views.story import colour_of
from k8s_wiretap.views.tui.listing.rows import RowLike, clock, duration_text, human_size

__all__ = ["Column", "header", "layout", "line"]

SUMMARY_MIN = 30


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    width: int
    drop: int  # dropped in this order when the width is short (0: never)
    right: bool = False


def _events(row: RowLike) -> str:
    return str(row.events) if row.watch or row.events else ""


def _summary(row: RowLike) -> str:
    return row.summary or f"{row.method} {row.path}"


CELLS: dict[str, Callable[[RowLike], str]] = {
    "time": lambda r: clock(r.time),
    "component": lambda r: r.component,
    "verb": lambda r: r.verb,
    "resource": lambda r: r.resource,
    "target": lambda r: r.target,
    "status": lambda r: r.status_text,
    "duration": lambda r: duration_text(r.duration),
    "size": lambda r: human_size(r.size) if r.size else "",
    "events": _events,
    "summary": _summary,
}
COLUMNS = (
    Column("time", "time", 12, 0),
    Column("component", "component", 18, 0),
    Column("verb", "verb", 6, 0),
    Column("resource", "resource", 14, 0),
    Column("target", "namespace/name", 22, 0),
    Column("status", "st", 3, 0, right=True),
    Column("duration", "took", 6, 2, right=True),
    Column("size", "size", 6, 1, right=True),
    Column("events", "ev", 4, 3, right=True),
)
# below 140 and 100 columns: narrower cells, so that the summary keeps room
NARROWER = {
    140: {"component": 12, "resource": 11, "target": 16},
    100: {"component": 10, "resource": 11, "target": 14},
}


def layout(width: int) -> list[Column]:
    """The columns for `width` cells, the summary last with what is left."""
    narrow: dict[str, int] = {}
    for below, widths in NARROWER.items():
        if width < below:
            narrow = widths
    columns = [Column(c.key, c.title, narrow.get(c.key, c.width), c.drop, c.right) for c in COLUMNS]
    for drop in (1, 2, 3):
        if sum(c.width + 1 for c in columns) + SUMMARY_MIN <= width:
            break
        columns = [c for c in columns if c.drop != drop]
    used = sum(c.width + 1 for c in columns)
    return [*columns, Column("summary", "summary", max(8, width - used), 0)]


def _fit(text: str, width: int, right: bool) -> str:
    if len(text) > width:
        text = text[: width - 1] + "…"
    return text.rjust(width) if right else text.ljust(width)


def header(columns: list[Column]) -> Text:
    return Text(" ".join(_fit(c.title, c.width, c.right) for c in columns), style="bold")


def _component(component: str, width: int) -> str:
    """The component, or its last part when the whole does not fit (the colour still
    says whose): `controller-manager/deployment-controller` → `deployment-controller`."""
    return component if len(component) <= width else component.rsplit("/", 1)[-1]


def _target(target: str, width: int) -> str:
    """namespace/name cut in the middle: the start and the end say the most (a pod's
    namespace and the suffix that tells it from its siblings)."""
    if len(target) <= width or width < 5:
        return target
    tail = (width - 1) // 2
    return f"{target[: width - 1 - tail]}…{target[-tail:]}"


FITTED = {"component": _component, "target": _target}


def line(row: RowLike, columns: list[Column]) -> Text:
    """One row as text: the component in its colour, errors red, noise dim."""
    text = Text(no_wrap=True, overflow="crop", style="dim" if row.noise else "")
    for column in columns:
        value = CELLS[column.key](row)
        if column.key in FITTED:
            value = FITTED[column.key](value, column.width)
        cell = _fit(value, column.width, column.right)
        style = ""
        if column.key == "component":
            style = colour_of(row.component)
        elif column.key == "status" and ((row.status or 0) >= 400 or row.status is None):
            style = "red"
        elif column.key == "time":
            style = "dim"
        elif column.key == "summary" and not row.summary:
            style = "italic dim"
        text.append(cell, style)
        text.append(" ")
    text.right_crop(1)
    return text
