"""The list's filter language, in the spirit of mitmproxy's `~` filters.

    ~c scheduler ~v patch !~r leases      the scheduler's patches, but not of leases
    ~c kubelet | ~c scheduler             either component
    !(~v watch | ~v list) web             not a watch or list, and "web" anywhere

Terms (each takes a regular expression, matched case-insensitively anywhere in the field):

| term | field |
|---|---|
| `~c` | component (`controller-manager/deployment-controller`) |
| `~v` | verb (`get`, `list`, `watch`, `patch`, ...) |
| `~m` | HTTP method |
| `~r` | resource (`pods`, `deployments/scale`) |
| `~ns` | namespace |
| `~n` | name |
| `~u` | path, with the query |
| `~s` | status code (`~s 404`, `~s ^4`) |
| `~t` | summary (the explanation's words) |
| `~e` | no argument: an error, or a status of 400 and above |
| `~w` | no argument: a watch |
| `~noise` | no argument: what the explanation calls noise (leases, health, discovery) |

A bare word (or a "quoted phrase") matches any of component, verb, resource, namespace,
name, path and summary. Terms side by side, or joined by `&`, must all match; `|` is or,
`!` is not, parentheses group: `!` binds tighter than `&`, `&` tighter than `|`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from k8s_wiretap.views.tui.filtering.terms import (
    NOISY,
    WATCHES,
    AllOf,
    AnyOf,
    Anywhere,
    Errors,
    Everything,
    Field,
    Not,
    Status,
    Term,
)
from k8s_wiretap.views.tui.listing.rows import Row
from k8s_wiretap.views.tui.listing.table import RowTable

__all__ = ["FILTER_HELP", "Filter", "FilterError", "parse", "shown"]


class FilterError(ValueError):
    """A filter expression that does not parse; its message says where."""


FIELDS = {
    "c": "component",
    "v": "verb",
    "m": "method",
    "r": "resource",
    "ns": "namespace",
    "n": "name",
    "u": "path",
    "s": "status",
    "t": "summary",
}
FLAGS: dict[str, Term] = {"e": Errors(), "w": WATCHES, "noise": NOISY}
FILTER_HELP = (
    "~c component  ~v verb  ~m method  ~r resource  ~ns namespace  ~n name  ~u path  "
    "~s status  ~t summary  ~e errors  ~w watches  ~noise;  ! not, & and, | or, ( );  "
    "a bare word matches anywhere"
)
TOKEN = re.compile(r'\s*(?:(?P<op>[()!&|])|"(?P<quoted>(?:[^"\\]|\\.)*)"|(?P<word>[^\s()!&|"]+))')


@dataclass(frozen=True)
class Filter:
    """A parsed expression: call it on a row, or ask it for a mask of the index's rows
    (`terms.py`: the columns read at C speed)."""

    text: str
    term: Term

    def __call__(self, row: Row) -> bool:
        return self.term(row)

    def mask(self, rows: RowTable, start: int, stop: int) -> int:
        return self.term.mask(rows, start, stop)


def parse(text: str) -> Filter:
    """The filter `text` says; FilterError if it does not parse."""
    parser = _Parser(_tokens(text))
    if not parser.tokens:
        return Filter(text, Everything())
    term = parser.expression()
    if parser.peek() is not None:
        raise FilterError(f"unexpected {parser.peek()!r}")
    return Filter(text, term)


def shown(active: Filter | None, hide_noise: bool) -> Filter | None:
    """What the list lets through: the active filter, without noise if it is hidden
    (None: every row)."""
    if not hide_noise:
        return active
    quiet = Not(NOISY)
    if active is None:
        return Filter("!~noise", quiet)
    return Filter(f"({active.text}) !~noise", AllOf([active.term, quiet]))


def _tokens(text: str) -> list[tuple[str, str]]:
    """(kind, value) pairs: kind is "op", "word" or "quoted"."""
    tokens, position = [], 0
    while position < len(text):
        if not text[position:].strip():
            break
        match = TOKEN.match(text, position)
        if match is None:
            raise FilterError(f"unclosed quote at {text[position:].strip()!r}")
        kind = match.lastgroup or "word"
        tokens.append((kind, match.group(kind)))
        position = match.end()
    return tokens


def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error as error:
        raise FilterError(f"bad pattern {pattern!r}: {error}") from error


def _field(name: str, pattern: str) -> Term:
    regex = _regex(pattern)
    return Status(regex) if name == "status" else Field(name, regex)


class _Parser:
    """Recursive descent: or ← and ('|' and)*; and ← not ('&'? not)*; not ← '!' not | atom."""

    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens = tokens
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at][1] if self.at < len(self.tokens) else None

    def _op(self, value: str) -> bool:
        if self.at < len(self.tokens) and self.tokens[self.at] == ("op", value):
            self.at += 1
            return True
        return False

    def expression(self) -> Term:
        terms = [self._and()]
        while self._op("|"):
            terms.append(self._and())
        return terms[0] if len(terms) == 1 else AnyOf(terms)

    def _and(self) -> Term:
        terms = [self._not()]
        while self.at < len(self.tokens) and self.tokens[self.at] not in (
            ("op", "|"),
            ("op", ")"),
        ):
            self._op("&")
            terms.append(self._not())
        return terms[0] if len(terms) == 1 else AllOf(terms)

    def _not(self) -> Term:
        if self._op("!"):
            return Not(self._not())
        return self._atom()

    def _atom(self) -> Term:
        if self.at >= len(self.tokens):
            raise FilterError("the expression ends where a term should be")
        if self._op("("):
            inner = self.expression()
            if not self._op(")"):
                raise FilterError("missing )")
            return inner
        kind, value = self.tokens[self.at]
        self.at += 1
        if kind == "op":
            raise FilterError(f"unexpected {value!r}")
        if kind == "quoted":
            return Anywhere(value.replace('\\"', '"'))
        if not value.startswith("~"):
            return Anywhere(value)
        name = value[1:]
        if name in FLAGS:
            return FLAGS[name]
        if name not in FIELDS:
            raise FilterError(f"unknown filter ~{name} (see ?)")
        if self.at >= len(self.tokens) or self.tokens[self.at][0] == "op":
            raise FilterError(f"~{name} needs a pattern")
        pattern = self.tokens[self.at][1]
        self.at += 1
        return _field(FIELDS[name], pattern)
