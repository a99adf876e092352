"""A walkthrough's chapters found in a recording: one step per chapter, each an exchange.

A chapter's filter runs over the index's rows once the explanation layer has filled them
(component, summary). What one exchange set off (`chain`) and which watch event set it off
(`watch_of`) come from the explanation layer's causal chains, over the exchange's window
(`listing/window.py`), as its Explain tab tells them. Each step carries its exchange's `Detail`,
which the narration and the detail pane show. A chapter whose exchange is not in the
recording is left out, and said (`Steps.missing`).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from k8s_wiretap.views.pictures.rows import kind_of, target_of
from k8s_wiretap.views.pictures.talkmap import Tally
from k8s_wiretap.views.tui.filtering.filters import parse
from k8s_wiretap.views.tui.listing.index import RecordingIndex
from k8s_wiretap.views.tui.listing.window import Detail, Windows
from k8s_wiretap.views.tui.walkthrough.chapters import Chapter, Walkthrough

__all__ = ["Step", "Steps", "find_steps"]


@dataclass(frozen=True)
class Step:
    chapter: Chapter
    detail: Detail
    cause: dict[str, Any] | None = None  # watch_of: the event it carried (chains' caused_by)
    clients: tuple[str, ...] = ()  # "clients" asked: who talks to whom, a line a component

    @property
    def position(self) -> int:
        return self.detail.position


@dataclass
class Steps:
    walkthrough: Walkthrough
    steps: list[Step] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # why a chapter was left out


def find_steps(
    walkthrough: Walkthrough,
    index: RecordingIndex,
    windows: Windows,
    lock: AbstractContextManager[Any] | None = None,
) -> Steps:
    """The steps of `walkthrough` in `index` (read and explained); `lock` guards `windows`
    (the detail pane's worker uses it too)."""
    finder = _Finder(index, windows, lock or nullcontext())
    found: dict[str, tuple[int, dict[str, Any] | None]] = {}
    result = Steps(walkthrough)
    for chapter in _in_order(walkthrough.chapters):
        try:
            found[chapter.id] = finder.find(chapter, found)
        except LookupError as error:
            result.missing.append(f"chapter {chapter.id!r} ({chapter.title}): {error}")
    talk = _clients(index) if any("clients" in c.facts for c in walkthrough.chapters) else ()
    for chapter in walkthrough.chapters:
        if chapter.id in found:
            position, cause = found[chapter.id]
            clients = talk if "clients" in chapter.facts else ()
            result.steps.append(Step(chapter, finder.detail(position), cause, clients))
    return result


def _clients(index: RecordingIndex) -> tuple[str, ...]:
    """Who talks to whom over the whole recording, as the map picture counts it
    (`pictures.talkmap.Tally`), a line a component."""
    tally = Tally()
    for row in index.rows:
        tally.count(row.component, kind_of(row.verb), target_of(row.resource, row.path), row.time)
    return tuple(tally.lines())


def _in_order(chapters: tuple[Chapter, ...]) -> list[Chapter]:
    """Each chapter after the one it is anchored to (a cycle keeps the file's order)."""
    by_id = {c.id: c for c in chapters}
    done: dict[str, Chapter] = {}

    def visit(chapter: Chapter, seen: frozenset[str]) -> None:
        if chapter.id in done or chapter.id in seen:
            return
        if chapter.of in by_id:
            visit(by_id[chapter.of], seen | {chapter.id})
        done[chapter.id] = chapter

    for chapter in chapters:
        visit(chapter, frozenset())
    return list(done.values())


class _Finder:
    def __init__(
        self, index: RecordingIndex, windows: Windows, lock: AbstractContextManager[Any]
    ) -> None:
        self.index, self.windows, self.lock = index, windows, lock

    def detail(self, position: int) -> Detail:
        with self.lock:
            return self.windows.detail(position)

    def find(
        self, chapter: Chapter, found: dict[str, tuple[int, dict[str, Any] | None]]
    ) -> tuple[int, dict[str, Any] | None]:
        match = parse(chapter.find) if chapter.find else lambda _row: True
        rows = self.index.rows
        if chapter.anchor == "":
            return self._first(range(len(rows)), match), None
        if chapter.of not in found:
            raise LookupError(f"{chapter.anchor} {chapter.of!r}, which was not found")
        anchor = found[chapter.of][0]
        if chapter.anchor == "same":
            return anchor, None
        if chapter.anchor == "before":
            return self._first(range(anchor - 1, -1, -1), match), None
        if chapter.anchor == "chain":
            return self._first(self._tree(anchor), match), None
        return self._watch(anchor, match)

    def _first(self, positions: Any, match: Callable[[Any], bool]) -> int:
        rows = self.index.rows
        for position in positions:
            if match(rows[position]):
                return int(position)
        raise LookupError("no exchange matches")

    def _tree(self, anchor: int) -> list[int]:
        """The rows of what the exchange at `anchor` set off, in time order."""
        with self.lock:
            explainer, exchanges = self.windows.around(anchor)
            root = exchanges[self.index.rows[anchor].id]
            tree = explainer.chains.tree(root)
        by_id = self.index.by_id
        return [by_id[e.id] for e in tree if e.id in by_id]

    def _watch(
        self, anchor: int, match: Callable[[Any], bool]
    ) -> tuple[int, dict[str, Any] | None]:
        """The watch whose event set off the exchange at `anchor`, and that event."""
        with self.lock:
            explainer, exchanges = self.windows.around(anchor)
            caused = explainer.chains.to_json(exchanges[self.index.rows[anchor].id])
        cause = caused.get("caused_by")
        if not cause:
            raise LookupError("nothing set it off")
        position = self.index.by_id.get(cause["event"]["watch"])
        if position is None or not match(self.index.rows[position]):
            raise LookupError("its watch is not in the recording")
        return position, cause
