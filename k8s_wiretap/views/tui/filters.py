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
from collections.abc import Callable
from dataclasses import dataclass

from k8s_wiretap.views.tui.rows import Row

__all__ = ["FILTER_HELP", "Filter", "FilterError", "parse"]

Predicate = Callable[[Row], bool]


class FilterError(ValueError):
    """A filter expression that does not parse; its message says where."""


FIELDS: dict[str, Callable[[Row], str]] = {
    "c": lambda r: r.component,
    "v": lambda r: r.verb,
    "m": lambda r: r.method,
    "r": lambda r: r.resource,
    "ns": lambda r: r.namespace,
    "n": lambda r: r.name,
    "u": lambda r: r.path,
    "s": lambda r: r.status_text,
    "t": lambda r: r.summary,
}
FLAGS: dict[str, Predicate] = {
    "e": lambda r: bool(r.error) or (r.status or 0) >= 400,
    "w": lambda r: r.watch,
    "noise": lambda r: bool(r.noise),
}
FILTER_HELP = (
    "~c component  ~v verb  ~m method  ~r resource  ~ns namespace  ~n name  ~u path  "
    "~s status  ~t summary  ~e errors  ~w watches  ~noise;  ! not, & and, | or, ( );  "
    "a bare word matches anywhere"
)
TOKEN = re.compile(r'\s*(?:(?P<op>[()!&|])|"(?P<quoted>(?:[^"\\]|\\.)*)"|(?P<word>[^\s()!&|"]+))')


@dataclass(frozen=True)
class Filter:
    """A parsed expression: call it on a row."""

    text: str
    predicate: Predicate

    def __call__(self, row: Row) -> bool:
        return self.predicate(row)


def parse(text: str) -> Filter:
    """The filter `text` says; FilterError if it does not parse."""
    parser = _Parser(_tokens(text))
    if not parser.tokens:
        return Filter(text, lambda _row: True)
    predicate = parser.expression()
    if parser.peek() is not None:
        raise FilterError(f"unexpected {parser.peek()!r}")
    return Filter(text, predicate)


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


def _field(get: Callable[[Row], str], pattern: str) -> Predicate:
    regex = _regex(pattern)
    return lambda row: regex.search(get(row)) is not None


def _anywhere(text: str) -> Predicate:
    needle = text.lower()
    fields = (FIELDS[k] for k in ("c", "v", "r", "ns", "n", "u", "t"))
    getters = tuple(fields)
    return lambda row: any(needle in get(row).lower() for get in getters)


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

    def expression(self) -> Predicate:
        terms = [self._and()]
        while self._op("|"):
            terms.append(self._and())
        if len(terms) == 1:
            return terms[0]
        return lambda row: any(term(row) for term in terms)

    def _and(self) -> Predicate:
        terms = [self._not()]
        while self.at < len(self.tokens) and self.tokens[self.at] not in (
            ("op", "|"),
            ("op", ")"),
        ):
            self._op("&")
            terms.append(self._not())
        if len(terms) == 1:
            return terms[0]
        return lambda row: all(term(row) for term in terms)

    def _not(self) -> Predicate:
        if self._op("!"):
            inner = self._not()
            return lambda row: not inner(row)
        return self._atom()

    def _atom(self) -> Predicate:
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
            return _anywhere(value.replace('\\"', '"'))
        if not value.startswith("~"):
            return _anywhere(value)
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
