"""Follow mode: while a recording is followed, the list keeps its newest row in view.

As in mitmproxy's flow list, the list follows the end as long as the cursor is on its last
row: each new row moves the cursor onto it. Moving the cursor up stops following, and the
title counts what came since ("12 new"); `F` (or `G`, or moving down onto the last row)
follows again. The selected exchange's detail is explained again when its row changes (a
watch's events arrive), at most every `REFRESH` seconds.

`policy()` says whether, and while what, the app follows its recording (`listing/follow.py`).
"""

from __future__ import annotations

from pathlib import Path

from textual.binding import Binding, BindingType

from k8s_wiretap.views.tui.listing.exchange_list import ExchangeList
from k8s_wiretap.views.tui.listing.follow import AutoFollow, KeepGoing
from k8s_wiretap.views.tui.listing.index import RecordingIndex

__all__ = ["FOLLOW_BINDINGS", "REFRESH", "SETTLE", "FollowMode", "policy"]

REFRESH = 1.0  # seconds between two explanations of a selected exchange that grows
SETTLE = 0.5  # seconds the cursor rests, while following, before its exchange is explained

FOLLOW_BINDINGS: list[BindingType] = [
    Binding("F", "follow", "follow", id="follow.resume"),
]


def policy(
    path: Path, index: RecordingIndex, follow: bool | None, writer: KeepGoing | None
) -> KeepGoing | None:
    """While what the index reads on past the end: `writer()` (a live proxy, a playback),
    always (`follow`), by `AutoFollow`'s rule (`follow` None), or never."""
    if writer is not None:
        return writer
    if follow is None:
        return AutoFollow(path, lambda: index.open)
    return (lambda: True) if follow else None


class FollowMode:
    """Whether the list follows its end, and how many rows came since it stopped."""

    def __init__(self, index: RecordingIndex) -> None:
        self.index = index
        self.active = False  # the end of a followed recording has been reached
        self.following = True
        self._seen = 0  # rows in the list when following stopped
        self._put: int | None = None  # where following last put the cursor
        self._loaded: tuple[int, int] | None = None  # position, version of the detail

    def grown(self, rows: ExchangeList) -> None:
        """The index has more rows (or rows changed): keep the end in view."""
        if not self.active and self.index.caught_up and not self.index.done:
            self.active = True  # `tail -f`: the end of what is there, then what comes
        elif self.active and self.index.done:
            self.active = False
        if not (self.active and self.following and rows.count):
            return
        if self._put is not None and rows.cursor != self._put:
            self.moved(rows)  # by a key whose message has not come yet
            if not self.following:
                return
        rows.cursor = self._put = rows.count - 1

    def moved(self, rows: ExchangeList) -> None:
        """The cursor moved: on the last row the list follows, elsewhere it stops. The
        cursor where following put it still follows: the index grows in its worker, so the
        list may hold more rows than the messages heard so far had (the message for them
        comes next and moves the cursor on)."""
        if self.following and self._put is not None and rows.cursor == self._put:
            return
        following = rows.cursor >= rows.count - 1
        if self.following and not following:
            self._seen = rows.count
        self.following = following
        if following:
            self._put = rows.cursor

    def resume(self, rows: ExchangeList) -> None:
        self.following = True
        if rows.count:
            rows.cursor = self._put = rows.count - 1

    def status(self, rows: ExchangeList) -> str:
        """For the title: following, or how many rows are new."""
        if not self.active:
            return ""
        if self.following:
            return "[green]following[/]"
        new = max(0, rows.count - self._seen)
        return f"[reverse] {new:,} new [/] [dim]F follows[/]" if new else "[dim]F follows[/]"

    @property
    def settle(self) -> float | None:
        """How long the cursor rests before its exchange is explained (None: the usual)."""
        return SETTLE if self.active and self.following else None

    # -- the selected exchange, as it grows -------------------------------------------------
    def loading(self, position: int) -> None:
        """The detail of `position` is being made, from the row as it is now."""
        self._loaded = (position, self.index.rows.version[position])

    def stale(self, selected: int | None) -> bool:
        """Whether the shown detail is of the selected row, and the row changed since."""
        if self._loaded is None or selected is None or self._loaded[0] != selected:
            return False
        return self.index.rows.version[selected] != self._loaded[1]
