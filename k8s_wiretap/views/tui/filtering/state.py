"""What the list is filtered by and searched for: one value, held by the app, said by the
bottom line.

`FilterState` is the filter (the last expression that parsed, `filters.py`, and why the
last one typed did not), whether it is on (`f`), whether noise is hidden (`n`), and the
search (`s`, `search.py`: it hides nothing, it moves the cursor). Each key or command
makes a new state from the one before (`typed`, `toggled`, `noise_toggled`, `searching`,
`cleared`, `revealing`); the app holds it as a reactive whose watcher does what changed:
checks the rows again when what they are checked by changed (`check`, `shows_as`), runs
the search when a new one was typed, and says it (`FilterBar.status`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from k8s_wiretap.views.tui.filtering.filters import Filter, FilterError, parse, shown
from k8s_wiretap.views.tui.filtering.search import Search

__all__ = ["FilterState"]


@dataclass(frozen=True)
class FilterState:
    """The filter, its switch and its error, the noise switch, and the search."""

    filter: Filter | None = None  # the last expression that parsed (None: none)
    enabled: bool = True  # `f`: the filter is on
    error: str = ""  # why the expression typed last did not parse
    hide_noise: bool = False  # `n`
    search: Search = field(default_factory=Search)  # a new one for each search typed

    @property
    def text(self) -> str:
        """The filter's expression ("" for none)."""
        return self.filter.text if self.filter is not None else ""

    @property
    def check(self) -> Filter | None:
        """What the list lets through: the filter if it is on, without noise if it is
        hidden (None: every row)."""
        return shown(self.filter if self.enabled else None, self.hide_noise)

    def shows_as(self, other: FilterState) -> bool:
        """Whether `other` lets the same rows through (its check is the same)."""
        active = self.filter if self.enabled else None
        return (active, self.hide_noise) == (
            other.filter if other.enabled else None,
            other.hide_noise,
        )

    def typed(self, text: str) -> FilterState:
        """A filter expression entered ("" clears it): on if it parses, else its error
        (the filter before stays)."""
        try:
            parsed = parse(text) if text else None
        except FilterError as error:
            return replace(self, error=str(error))
        return replace(self, filter=parsed, enabled=True, error="")

    def toggled(self) -> FilterState:
        """`f`: the filter off, or on again (nothing without one)."""
        return self if self.filter is None else replace(self, enabled=not self.enabled)

    def noise_toggled(self) -> FilterState:
        return replace(self, hide_noise=not self.hide_noise)

    def searching(self, text: str) -> FilterState:
        """A search typed ("" clears it): a new one even for the same text."""
        return replace(self, search=Search(text))

    def cleared(self) -> FilterState:
        """`esc` on the list: the search first, then the filter (and its error)."""
        if self.search:
            return self.searching("")
        if self.filter is not None or self.error:
            return replace(self, filter=None, error="")
        return self

    def revealing(self) -> FilterState:
        """The filter off and noise shown: a row the list must show (a chain's hop)."""
        return replace(self, enabled=False, hide_noise=False)
