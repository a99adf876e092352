"""The list's summaries: the explanation layer over the whole recording, as a stream.

`explain_rows` runs in a worker behind the index: it reads the recording once more as a
stream (`explain/stream.py`, bounded memory whatever the size) and hands each exchange's
component, summary and noise to its row, a few strings per exchange. Until then a row
shows what its request says. A recording being written is followed (`follow`): what is
explained is told each time the end of the file is reached; an exchange is explained once
the stream has seen `explain.stream.LOOKAHEAD` seconds of the recording after it.

Followed, that leaves the newest rows (for `LOOKAHEAD` seconds) and every watch still open
(for minutes) without their words, where a replay of the finished file has them all; so
the rows on screen that the stream has not explained yet are explained at once over their
window (`explain_now`), as the detail pane explains the selected one, and the stream's
word replaces that when it comes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.reader import iter_records
from k8s_wiretap.explain.explainer import Explainer
from k8s_wiretap.explain.stream import explained
from k8s_wiretap.views.tui.listing.follow import KeepGoing, followed_records
from k8s_wiretap.views.tui.listing.index import RecordingIndex
from k8s_wiretap.views.tui.listing.window import Windows

__all__ = ["explain_now", "explain_rows"]


def explain_rows(
    index: RecordingIndex,
    notify: Callable[[int], None],
    stopped: Callable[[], bool] = lambda: False,
    every: int = 200,
    follow: KeepGoing | None = None,
) -> int:
    """Explain every exchange of `index`'s recording into its row, calling `notify(count)`
    every `every` exchanges and at the end; stop early when `stopped()`. With `follow`,
    read on past the end of the file while `follow()`. Returns the count."""
    warnings: list[str] = []
    count = 0

    def source() -> Iterator[dict[str, Any]]:
        if follow is None:
            return iter_records(index.path, warnings)
        keep_going = lambda: not stopped() and follow()  # noqa: E731
        return followed_records(index.path, keep_going, lambda: notify(count), warnings)

    def records() -> Iterator[dict[str, Any]]:
        for number, record in enumerate(source()):
            if stopped():
                return
            if number % 100 == 0:
                time.sleep(0)  # the screen's thread first: it is what people wait for
            yield record

    def line(explainer: Explainer, exchange: Exchange) -> str:
        nonlocal count
        said = explainer.summaries.explain(exchange)
        component = explainer.analysis.who(exchange).component
        index.explained(exchange.id, component, said.summary, said.noise)
        count += 1
        if count % every == 0:
            notify(count)
        return ""

    explained(records(), line, lambda _text: None)
    notify(count)
    return count


def explain_now(index: RecordingIndex, windows: Windows, positions: Iterable[int]) -> int:
    """Explain the rows at `positions` that have no summary yet over their window (the
    caller holds the windows' lock); returns how many were explained."""
    count = 0
    for position in positions:
        row = index.rows[position]
        if row.summary:
            continue
        explainer, exchanges = windows.around(position)
        exchange = exchanges.get(row.id)
        if exchange is None:
            continue
        said = explainer.summaries.explain(exchange)
        component = explainer.analysis.who(exchange).component
        index.explained(exchange.id, component, said.summary, said.noise)
        count += 1
    return count
