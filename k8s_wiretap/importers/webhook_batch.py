"""One audit webhook POST's body read item by item: an `EventList`'s items parsed one at a
time, each given to the importer before the next is parsed, so that a batch never exists as
a whole list of parsed events (which takes some twenty times the bytes of its JSON).

The body is decoded once (UTF-8, as the API server sends it) and walked with the standard
library's JSON decoder: the object's members before and after `items` are read whole (they
are small: `kind`, `apiVersion`, `metadata`), each item of `items` is one `raw_decode`. What
is refused, `BadEvent` with why (the caller skips the whole body): no UTF-8, no JSON, no
object, a `kind` other than `EventList`, no list of `items`, two of them, anything after
the object. An item nested deeper than `audit.MAX_DEPTH` or holding a lone surrogate is
refused by itself (an `ItemError` in its place, with its index): the other items are read on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Iterator
from typing import Any

from k8s_wiretap.importers.audit import TOO_DEEP, BadEvent, checked_value

__all__ = ["ItemError", "items"]

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


class ItemError(BadEvent):
    """One item that cannot be read (the rest of the batch can)."""


def _value(text: str, at: int) -> tuple[Any, int]:
    """The JSON value at `at` and where it ends; BadEvent if there is none."""
    try:
        return _DECODER.raw_decode(text, at)
    except json.JSONDecodeError as error:
        raise BadEvent(f"the body is not JSON ({error})") from None
    except RecursionError:
        raise BadEvent(TOO_DEEP) from None


def _skip(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    return match.end() if match else at


def _expect(text: str, at: int, chars: str) -> tuple[str, int]:
    """The character at `at` (after white space), which must be one of `chars`."""
    at = _skip(text, at)
    if at >= len(text) or text[at] not in chars:
        found = repr(text[at]) if at < len(text) else "its end"
        raise BadEvent(f"the body is not JSON (expected one of {chars!r} at {at}, found {found})")
    return text[at], at + 1


def items(body: bytes | bytearray) -> Iterator[Any]:
    """The items of the EventList `body`, parsed one by one (an `ItemError` yielded in
    the place of one that cannot be read: the caller goes on); BadEvent raised when the body
    is no EventList. A bytearray `body` is emptied once decoded."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BadEvent(f"the body is not UTF-8 ({error.reason} at {error.start})") from None
    if isinstance(body, bytearray):
        del body[:]  # its memory given back: the batch is held once, as text
    char, at = _expect(text, 0, '{["-0123456789tfn')
    if char != "{":
        value, _ = _value(text, at - 1)
        raise BadEvent(f"a JSON {type(value).__name__}, not an object")
    seen_items = False
    char, at = _expect(text, at, '"}')
    while char == '"':
        key, at = _value(text, at - 1)
        _, at = _expect(text, at, ":")
        at = _skip(text, at)
        if key == "items":
            if seen_items:
                raise BadEvent("an EventList with two lists of items")
            seen_items = True
            at = yield from _list(text, at)
        else:
            value, at = _value(text, at)
            if key == "kind" and value != "EventList":
                raise BadEvent(f"not an audit EventList (kind {value!r})")
        char, at = _expect(text, at, ",}")
        if char == ",":
            char, at = _expect(text, at, '"')
    if _skip(text, at) != len(text):
        raise BadEvent("the body is not JSON (more after its object)")
    if not seen_items:
        raise BadEvent("an EventList without a list of items")


def _list(text: str, at: int) -> Generator[Any, None, int]:
    """The items of the JSON array at `at`, one at a time; returns where it ends."""
    if not text.startswith("[", at):
        raise BadEvent("an EventList without a list of items")
    at, index = _skip(text, at + 1), 0
    if text.startswith("]", at):
        return at + 1
    while True:
        start = at
        value, at = _value(text, at)
        try:
            yield checked_value(text[start:at].encode("utf-8", "surrogatepass"), value)
        except BadEvent as error:
            yield ItemError(str(error))
        index += 1
        char, at = _expect(text, at, ",]")
        if char == "]":
            return at
        at = _skip(text, at)
