"""The bounds of an import's memory: what is held follows these, never the input
(docs/importing.md#bounds).

Each is a default that real input does not reach, and a flag of the import commands:

- `max_line`: the bytes of one line of an audit log (or one item of gcloud's JSON array);
  a longer one is read past a chunk at a time, never held, and skipped with its size;
- `max_values`: the JSON values one line may make when parsed, counted before it is
  parsed by its commas and opening brackets (`values`: a comma inside a string counts too,
  so the count is at least the values'); a line of more is skipped unparsed. A line's
  bytes do not bound what parsing makes of it: `[],` is 3 bytes and an empty list about 64;
- `max_open`: the exchanges an audit import holds open (begun, not yet ended); past it the
  oldest is written as far as the log had it, unanswered, with a note;
- `max_flow`: the bytes of one mitmproxy flow (read whole, as mitmproxy reads it); a flow
  over it is skipped unread;
- `max_file`: the bytes of a HAR file (one JSON document, read whole); a larger one is
  refused, and so is one of more than `max_values` JSON values.

A body's bound is the sink's `max_body` (`capture.recorder.DEFAULT_MAX_BODY`): a body is
kept up to it, and one with a content-encoding is inflated at most that far.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "DEFAULT",
    "MAX_FILE",
    "MAX_FLOW",
    "MAX_LINE",
    "MAX_OPEN",
    "MAX_VALUES",
    "Limits",
    "values",
]

MAX_LINE = 64 * 1024 * 1024  # twice the webhook receiver's largest batch (--max-batch)
# About 300 MB parsed at worst (an empty list, dict or float: 24 to 64 bytes, and a pointer);
# an audit line of real objects has a value every 30 bytes or so: 64 MiB of them, about 2M.
MAX_VALUES = 4_000_000
# Exchanges begun and not ended at one time: watches open (a 5,000-node cluster, the size
# Kubernetes is tested at, holds some 15 a node, 75,000) and requests in flight (hundreds).
# Each holds about 1 KB while open (past 10,000 open, a RequestReceived event is held as
# its JSON, `audit.COMPACT`): some 350 MB at the bound, measured.
MAX_OPEN = 250_000
MAX_FLOW = 256 * 1024 * 1024
MAX_FILE = 256 * 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """The bounds of one import (see the module's docstring)."""

    max_line: int = MAX_LINE
    max_values: int = MAX_VALUES
    max_open: int = MAX_OPEN
    max_flow: int = MAX_FLOW
    max_file: int = MAX_FILE


DEFAULT = Limits()


def values(text: bytes | str, start: int = 0, end: int | None = None) -> int:
    """At least how many JSON values `text[start:end]` makes when parsed (keys aside: a parse
    shares equal keys): each but the first of a list or an object follows a comma, each
    first one a bracket (a comma or bracket inside a string counts too)."""
    stop = len(text) if end is None else end
    if isinstance(text, bytes):
        return sum(text.count(mark, start, stop) for mark in (b",", b"[", b"{")) + 1
    return sum(text.count(mark, start, stop) for mark in (",", "[", "{")) + 1
