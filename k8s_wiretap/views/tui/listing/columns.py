"""The list's columns: which fit the width, and one row as a line of text.

Each column is one `Column`: its title and width, the order it is dropped in when the
terminal is narrow, the narrower widths it takes below 140 and 100 cells, and how it reads
its cell from the row's `Row` (`cell`), cuts a long one (`fit`) and colours it (`style`).
Columns are dropped, least useful first (size, duration, then a watch's event count),
until the summary keeps at least `SUMMARY_MIN` cells: at 80 columns the list shows time,
component, verb, resource, name, status and the summary; at 100 also the event count;
from about 110 duration and size too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from rich.text import Text

from k8s_wiretap.views.lines import shown_path
from k8s_wiretap.views.story import colour_of
from k8s_wiretap.views.tui.listing.rows import Row, clock, duration_text, human_size
from k8s_wiretap.wire.controls import escape_controls

__all__ = ["COLUMNS", "SUMMARY", "Column", "header", "layout", "line"]

SUMMARY_MIN = 30
NARROW = (140, 100)  # the widths below which a column takes its `narrow` width


def _cut(text: str, width: int) -> str:
    """The start of what does not fit, and "…"."""
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass(frozen=True)
class Column:
    """One column of the list, and how a row's `Row` fills it."""

    key: str
    title: str
    width: int
    cell: Callable[[Row], str]
    drop: int = 0  # dropped in this order when the width is short (0: never)
    right: bool = False
    narrow: Mapping[int, int] = field(default_factory=dict)  # below 140 and 100: its width
    fit: Callable[[str, int], str] = _cut  # a cell too long for the width
    style: Callable[[Row], str] = lambda _row: ""

    def at(self, width: int) -> Column:
        """The column in a list `width` cells wide."""
        narrowest = [
            self.narrow[below] for below in NARROW if width < below and below in self.narrow
        ]
        return replace(self, width=narrowest[-1]) if narrowest else self

    def text(self, row: Row) -> str:
        """The row's cell, fitted to the width."""
        value = self.fit(escape_controls(self.cell(row)), self.width)
        value = _cut(value, self.width)
        return value.rjust(self.width) if self.right else value.ljust(self.width)


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


def _failed(row: Row) -> str:
    return "red" if (row.status or 0) >= 400 or row.status is None else ""


COLUMNS = (
    Column("time", "time", 12, lambda r: clock(r.time), style=lambda _r: "dim"),
    Column(
        "component",
        "component",
        18,
        lambda r: r.component,
        narrow={140: 12, 100: 10},
        fit=_component,
        style=lambda r: colour_of(r.component),
    ),
    Column("verb", "verb", 6, lambda r: r.verb),
    Column("resource", "resource", 14, lambda r: r.resource, narrow={140: 11, 100: 11}),
    Column(
        "target", "namespace/name", 22, lambda r: r.target, narrow={140: 16, 100: 14}, fit=_target
    ),
    Column("status", "st", 3, lambda r: r.status_text, right=True, style=_failed),
    Column("duration", "took", 6, lambda r: duration_text(r.duration), drop=2, right=True),
    Column("size", "size", 6, lambda r: human_size(r.size) if r.size else "", drop=1, right=True),
    Column(
        "events",
        "ev",
        4,
        lambda r: str(r.events) if r.watch or r.events else "",
        drop=3,
        right=True,
    ),
)
SUMMARY = Column(
    "summary",
    "summary",
    SUMMARY_MIN,
    lambda r: r.summary or f"{r.method} {shown_path(r.path)}",
    style=lambda r: "" if r.summary else "italic dim",
)


def layout(width: int) -> list[Column]:
    """The columns for `width` cells, the summary last with what is left."""
    columns = [column.at(width) for column in COLUMNS]
    for drop in sorted({c.drop for c in columns} - {0}):
        if sum(c.width + 1 for c in columns) + SUMMARY_MIN <= width:
            break
        columns = [c for c in columns if c.drop != drop]
    used = sum(c.width + 1 for c in columns)
    return [*columns, replace(SUMMARY, width=max(8, width - used))]


def header(columns: list[Column]) -> Text:
    titles = (
        _cut(c.title, c.width).rjust(c.width) if c.right else _cut(c.title, c.width).ljust(c.width)
        for c in columns
    )
    return Text(" ".join(titles), style="bold")


def line(row: Row, columns: list[Column]) -> Text:
    """One row as text: each column's cell in its style, noise dim."""
    text = Text(no_wrap=True, overflow="crop", style="dim" if row.noise else "")
    for column in columns:
        text.append(column.text(row), column.style(row))
        text.append(" ")
    text.right_crop(1)
    return text
