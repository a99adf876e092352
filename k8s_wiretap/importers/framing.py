"""How an audit log's values are laid out in its file (its framing), found from the file's
first bytes, never its name; each value given with the line it starts on, read a part at a
time in memory bounded by `importers.limits` (docs/importing.md, "The shapes a log arrives
in"). What the values are (an Event, a CloudWatch export, ...) is `importers.shapes`' part.

The framings (`framed` tells them apart by the first value's first bytes, once a file):

- JSON lines: one JSON value a line (a UTF-8 BOM before the first, CRLF line ends, blank
  lines: all passed over). The API server's own log, a shipper's, an export's.
- JSON lines after a timestamp: each line a time, white space, then the value: a CloudWatch
  Logs export to S3 (`2024-01-01T00:00:00.000Z {...}`,
  https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/S3Export.html), Fluentd's
  out_file (`TIME<TAB>TAG<TAB>{...}`, https://docs.fluentd.org/output/file). A line
  without the prefix is read as it is.
- Fluent Bit out_file lines: `TAG: [TIME, {record}]` a line, Fluent Bit's file output
  (https://docs.fluentbit.io/manual/pipeline/outputs/file): the record read as a line.
- base64 lines: each line the base64 of a gzip (`H4sI...`), as a Kinesis stream or Firehose
  record carries a CloudWatch Logs subscription's payload
  (https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/SubscriptionFilters.html);
  inflated at most `max_line` bytes.
- JSON documents: anything else that starts with `[` or `{`: one JSON array (of any layout:
  gcloud's `--format=json`, `jq -s`, `az ... --output json`), one pretty-printed document,
  or several documents one after another with or without line ends between them (a
  Firehose delivery to S3 concatenates its records so). Each value is read as far as it
  needs and no further (`max_line`); an array's items are given one by one; so are the
  items of the array under one of CONTAINERS in a top-level object (`{"events": [...]}`,
  `{"records": [...]}`, `{"kind": "EventList", "items": [...]}`, ...), each as that object
  with only that item (the members before the array kept with it): an export of a million
  events is read an event at a time. Where the text cannot be read on (no JSON, a value
  longer than `max_line`, a file cut short), a `BadEntry` says why and the file ends there.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import io
import json
import re
import zlib
from collections.abc import Callable, Generator, Iterator
from typing import IO, Any

from k8s_wiretap.importers import limits
from k8s_wiretap.importers.limits import Limits

__all__ = ["BOM", "CHUNK", "CONTAINERS", "HEAD", "BadEntry", "framed", "numbered"]

WS = b" \t\r\n"
_WS_BYTES = frozenset(WS)
TOO_DEEP = "an item of the JSON array is nested too deep to read"
BLANKS = re.compile(rb"[ \t\r\n]*")  # a run of blank lines (and the white space of one)
CHUNK = 1 << 20  # bytes read at a time
HEAD = 1 << 20  # bytes looked at to tell the framing (the stream's buffer: `audit._open`)
BOM = codecs.BOM_UTF8
DECODER = json.JSONDecoder()
# A line's prefix: an RFC 3339 time (CloudWatch's export), or Fluentd's `TIME<TAB>TAG<TAB>`
PREFIX = re.compile(
    rb"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?[ \t]+(?:[^\s{\[]+\t)?"
)
# Fluent Bit's file output, its default `out_file` format: `TAG: [TIME, {record}]`
# (https://docs.fluentbit.io/manual/pipeline/outputs/file)
FLUENT_BIT = re.compile(rb"[^\s\[{:]+: \[-?[0-9][0-9.]*, *")
GZIP_BASE64 = b"H4sI"  # gzip's magic bytes and deflate's method, in base64
# Members of a top-level object whose array is read an item at a time: an EventList's and a
# webhook batch's `items`; CloudWatch's `events` (filter-log-events, get-log-events) and
# `logEvents` (a subscription's payload); Azure's `records`; OTLP's `resourceLogs`; Cloud
# Logging's `entries` (entries.list); CloudWatch Logs Insights' `results`.
CONTAINERS = frozenset(
    ("items", "events", "logEvents", "records", "resourceLogs", "entries", "results")
)


class BadEntry(ValueError):
    """A part of a log that cannot be read; the message says why."""


Numbered = Iterator[tuple[int, "bytes | BadEntry"]]


def numbered(stream: IO[bytes], bounds: Limits = limits.DEFAULT) -> Numbered:
    """The values of a log with their line numbers (`framed`, without its name)."""
    return framed(stream, bounds)[1]


def framed(stream: IO[bytes], bounds: Limits = limits.DEFAULT) -> tuple[str, Numbered]:
    """The framing of the log `stream` holds (its name, said in the import's report) and
    its values, each with the line it starts on (a `BadEntry` for what cannot be read).
    Told once, by the first bytes (`HEAD` of them when `stream` can peek that far)."""
    head = _peek(stream)
    if head.startswith(BOM):
        stream.read(len(BOM))
        head = head[len(BOM) :]
    text = head.lstrip(WS)
    if text.startswith((b"[", b"{")) and _documents_ahead(text):
        what = "a JSON array" if text.startswith(b"[") else "JSON documents"
        return what, _documents(_Window(stream, bounds), bounds)
    what = "JSON lines"
    match = PREFIX.match(text)
    if match and text[match.end() : match.end() + 1] in (b"{", b"["):
        what = "JSON lines after a timestamp"
    elif (match := FLUENT_BIT.match(text)) and text[match.end() : match.end() + 1] == b"{":
        what = "Fluent Bit out_file lines"
    elif text.startswith(GZIP_BASE64):
        what = "base64 gzip lines"
    return what, line_values(what, stream, 1, bounds)


def line_values(what: str, stream: IO[bytes], number: int, bounds: Limits) -> Numbered:
    """The values of the lines from where `stream` stands (its line `number`) in the line
    framing named `what` (as `framed` names it): the import's, and a partition's from
    the middle of a file."""
    lines = _lines(stream, number, bounds)
    if what == "JSON lines after a timestamp":
        return _prefixed(lines)
    if what == "Fluent Bit out_file lines":
        return _bracketed(lines)
    if what == "base64 gzip lines":
        return _inflated(lines, bounds)
    return lines


def _documents_ahead(text: bytes) -> bool:
    """Whether a log starting with `[` or `{` is laid out as documents (pretty-printed, or one
    after another on a line) rather than one value a line: its first line is no whole
    JSON value, or one followed by another. A first line that goes on past what was
    peeked is taken for a line of JSON lines unless a whole value ends inside it with
    another after it."""
    first, newline, _ = text.partition(b"\n")
    line = first.decode("utf-8", "surrogateescape")
    try:
        end = DECODER.raw_decode(line)[1]
    except RecursionError:
        return False  # no document: a line that is skipped as too deep
    except ValueError:
        return bool(newline)  # the value goes on past its first line: pretty-printed
    return bool(line[end:].strip())


def _peek(stream: IO[bytes]) -> bytes:
    peek = getattr(stream, "peek", None)
    return bytes(peek(HEAD)) if peek is not None else b""


def _prefixed(lines: Numbered) -> Numbered:
    """Each line without its timestamp prefix (`PREFIX`), where it has one."""
    match = PREFIX.match
    for number, line in lines:
        if isinstance(line, bytes) and (found := match(line)) is not None:
            line = line[found.end() :]
        yield number, line


def _bracketed(lines: Numbered) -> Numbered:
    """Each line's record, without Fluent Bit's `TAG: [TIME, ` before it and `]` after."""
    match = FLUENT_BIT.match
    for number, line in lines:
        if isinstance(line, bytes) and (found := match(line)) is not None:
            record = line[found.end() :].rstrip(WS)
            line = record[:-1] if record.endswith(b"]") else record
        yield number, line


def _inflated(lines: Numbered, bounds: Limits) -> Numbered:
    """Each line's base64 decoded and inflated (gzip), at most `bounds.max_line` bytes."""
    for number, line in lines:
        if not isinstance(line, bytes):
            yield number, line
            continue
        try:
            data = base64.b64decode(line.strip(), validate=True)
        except (binascii.Error, ValueError):
            yield number, BadEntry("the line is no base64 (the file's first line is)")
            continue
        yield number, inflate(data, bounds.max_line, "the line's gzip")


def inflate(data: bytes, longest: int, what: str) -> bytes | BadEntry:
    """`data` inflated (gzip, zlib or raw deflate by its header), at most `longest` bytes."""
    unzip = zlib.decompressobj(zlib.MAX_WBITS | 32)
    try:
        out = unzip.decompress(data, longest + 1)
    except zlib.error as error:
        return BadEntry(f"{what} cannot be inflated ({error})")
    if len(out) > longest:
        return BadEntry(f"{what} inflates past {longest:,} bytes: not read")
    if not unzip.eof:
        return BadEntry(f"{what} is cut short (its deflate stream does not end)")
    return out


def _lines(
    stream: IO[bytes], number: int, bounds: Limits
) -> Iterator[tuple[int, bytes | BadEntry]]:
    """Each line of `stream` but the blank ones, numbered from `number`; a line longer
    than `bounds.max_line` (the rest of it read past, a chunk at a time, never held), or
    of more JSON values than `bounds.max_values`, is a `BadEntry` with its size, and
    reading goes on at the next."""
    longest = bounds.max_line
    while line := stream.readline(longest + 1):
        if len(line) > longest and not line.endswith(b"\n"):
            size = len(line)
            while (rest := stream.readline(CHUNK)) and not rest.endswith(b"\n"):
                size += len(rest)
            size += len(rest.rstrip(b"\r\n"))
            said = f"the line is {size:,} bytes, longer than {longest:,}: not read"
            yield number, BadEntry(said)
        elif line[0] in _WS_BYTES and not line.strip(WS):  # (a line of JSON is not copied)
            number += _blanks(stream)
        elif len(line) > bounds.max_values and limits.values(line) > bounds.max_values:
            yield number, BadEntry(_too_many("the line", len(line), bounds))
        else:
            yield number, line
        number += 1


def _too_many(what: str, size: int, bounds: Limits) -> str:
    return (
        f"{what} ({size:,} bytes) holds more than {bounds.max_values:,} JSON values (by "
        "its commas and brackets): not read"
    )


def _blanks(stream: IO[bytes]) -> int:
    """Read past the blank lines (and white space) that come next, a buffer at a time, not
    a line at a time; how many line ends were passed."""
    peek = getattr(stream, "peek", None)
    passed = 0
    while peek is not None and (ahead := peek(CHUNK)):
        end = BLANKS.match(ahead).end()  # type: ignore[union-attr]  # `*`: always a match
        if not end:
            break
        passed += ahead.count(b"\n", 0, end)
        stream.read(end)
    return passed


def _documents(window: _Window, bounds: Limits) -> Numbered:
    """The values of JSON documents laid out any way, one after another: an array's items,
    a top-level object's CONTAINERS' items (`_object`), any other value whole."""
    pos = window.skip(0)
    while pos < len(window.text):
        if window.text.startswith("[", pos):
            after = yield from _array(window, pos, bounds, _same)
        elif window.text.startswith("{", pos):
            after = yield from _object(window, pos, bounds)
        else:
            found = _item(window, pos, bounds)
            if isinstance(found, BadEntry):
                yield window.line(window.start), found
                return
            yield window.line(window.start), _bytes(window.text[window.start : found])
            after = found
        if after is None:
            return
        pos = window.skip(after)


def _same(item: str) -> str:
    return item


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


Reading = Generator[tuple[int, "bytes | BadEntry"], None, "int | None"]


def _array(
    window: _Window, pos: int, bounds: Limits, wrap: Callable[[str], str], *, last: int = 0
) -> Reading:
    """The items of the array at `pos` (its `[`), each as `wrap` makes it; where it ends
    (after its `]`), or None when it cannot be read on (said, as a BadEntry)."""
    end_line = last or window.line(pos)  # where an error at the file's end is said
    pos, first = window.skip(pos + 1), True
    while not window.text.startswith("]", pos):
        if not first and not window.text.startswith(",", pos):
            where = window.line(pos) if pos < len(window.text) else end_line
            yield where, BadEntry(f"after an item of the JSON array, {_cut(window.text, pos)}")
            return None
        pos, first = window.skip(pos + (0 if first else 1)), False
        found = _item(window, pos, bounds)
        if isinstance(found, BadEntry):  # at the end of the file: said at its last line
            at = window.start
            yield (window.line(at) if at < len(window.text) else end_line), found
            return None
        pos, end = window.start, found
        yield window.line(pos), _bytes(wrap(window.text[pos:end]))
        end_line = window.line(end)
        pos = window.skip(end)
    return pos + 1


def _object(window: _Window, pos: int, bounds: Limits) -> Reading:
    """The object at `pos` (its `{`): whole, or, when a member of CONTAINERS holds an
    array, that array's items one by one, each as the object with that item alone (and
    the members before it). Its members are held at most `bounds.max_line` characters."""
    number = window.line(pos)
    members: list[str] = []
    held, streamed = 0, False
    pos = window.skip(pos + 1)
    while not window.text.startswith("}", pos):
        if members or streamed:
            if not window.text.startswith(",", pos):
                yield (
                    window.line(pos) if pos < len(window.text) else number,
                    BadEntry(f"after a member of the object, {_cut(window.text, pos, '}')}"),
                )
                return None
            pos = window.skip(pos + 1)
        key_end = _item(window, pos, bounds)
        if isinstance(key_end, BadEntry) or not window.text.startswith('"', window.start):
            yield (
                number,
                key_end
                if isinstance(key_end, BadEntry)
                else BadEntry("an object whose member has no string key; the rest unread"),
            )
            return None
        key_text = window.text[window.start : key_end]
        pos = window.skip(key_end)
        if not window.text.startswith(":", pos):
            yield number, BadEntry(f"after an object's key, {_cut(window.text, pos, ':')}")
            return None
        pos = window.skip(pos + 1)
        if not streamed and window.text.startswith("[", pos) and json.loads(key_text) in CONTAINERS:
            head = "{" + "".join(m + "," for m in members) + key_text + ":["
            given = 0

            def wrap(item: str, head: str = head) -> str:
                nonlocal given
                given += 1
                return head + item + "]}"

            after = yield from _array(window, pos, bounds, wrap, last=number)
            if after is None:
                return None
            if not given:
                yield number, _bytes(head + "]}")
            streamed, pos = True, window.skip(after)
            continue
        value_end = _item(window, pos, bounds)
        if isinstance(value_end, BadEntry):
            yield number, value_end
            return None
        if not streamed:
            member = key_text + ":" + window.text[window.start : value_end]
            held += len(member)
            if held > bounds.max_line:
                yield (
                    number,
                    BadEntry(
                        f"an object longer than {bounds.max_line:,} characters; the rest unread"
                    ),
                )
                return None
            members.append(member)
        pos = window.skip(value_end)
    if not streamed:
        whole = "{" + ",".join(members) + "}"
        if len(whole) > bounds.max_values and limits.values(whole) > bounds.max_values:
            yield number, BadEntry(_too_many("the object", len(whole), bounds))
        else:
            yield number, _bytes(whole)
    return pos + 1


def _item(window: _Window, pos: int, bounds: Limits) -> int | BadEntry:
    """Where the JSON value at `pos` ends (read on as far as it needs, up to
    `bounds.max_line`; its start is `window.start` after), or why it cannot be read. What
    is parsed never makes more than `bounds.max_values` values (`_parsed`)."""
    window.start, longest = pos, bounds.max_line
    while True:
        held = len(window.text) - window.start
        try:
            end = _parsed(window, bounds)
            if end is None:
                return BadEntry(
                    f"an item of the JSON array holds more than {bounds.max_values:,} JSON "
                    "values (by its commas and brackets); the rest unread"
                )
            if end - window.start > longest:
                break
            if end < len(window.text) or window.eof:  # a number may go on past the window
                return end
        except ValueError as error:
            if window.eof:
                return BadEntry(f"an item of the JSON array is not JSON ({error}); the rest unread")
        except RecursionError:
            return BadEntry(f"{TOO_DEEP}; the rest unread")
        if held > longest:
            break
        window.more()
    return BadEntry(
        f"an item of the JSON array is longer than {longest:,} characters; the rest unread"
    )


def _parsed(window: _Window, bounds: Limits) -> int | None:
    """Where the value at `window.start` ends, parsed (ValueError when the text held does
    not end it); None when it holds more than `bounds.max_values` values. Only text of at
    most that many is parsed: the longest such stretch from the start, when the window
    holds more (what follows the item too), and the value must end inside it."""
    text, start, most = window.text, window.start, bounds.max_values
    if len(text) - start <= most or limits.values(text, start) <= most:
        return int(DECODER.raw_decode(text, start)[1])
    low, high = 0, len(text) - start  # values(low) <= most < values(high)
    while high - low > 1:
        middle = (low + high) // 2
        if limits.values(text, start, start + middle) <= most:
            low = middle
        else:
            high = middle
    try:
        end = int(DECODER.raw_decode(text[: start + low], start)[1])
    except ValueError:
        return None
    return end if end < start + low else None  # at the cut, the value may go on


def _cut(text: str, pos: int, close: str = "]") -> str:
    if pos >= len(text):
        what = "array's ]" if close == "]" else f"object's {close}"
        return f"the file ends without the {what} (cut short?)"
    return f"neither , nor {close} but {text[pos]!r}; the rest unread"


class _Window:
    """A stream's text, read as it is asked for: a chunk at a time (more as an item needs:
    twice what is held), what lies before `start` dropped when reading on. Places in
    `text` move back by what is dropped: `skip` and `_item` give them anew."""

    def __init__(self, stream: IO[bytes], bounds: Limits) -> None:
        self.stream, self.text, self.start, self.eof = stream, "", 0, False
        self._longest = bounds.max_line
        self._decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
        self._line, self._counted = 1, 0  # the line number at `_counted`

    def line(self, pos: int) -> int:
        """The line number of `pos` (asked in order, never before `start`)."""
        self._line += self.text.count("\n", self._counted, pos)
        self._counted = pos
        return self._line

    def more(self) -> None:
        """Read on (`eof` at the end), dropping the text before `start` (then 0)."""
        self.line(self.start)
        held = len(self.text) - self.start
        data = b"" if self.eof else self.stream.read(max(CHUNK, min(held, self._longest)))
        self.eof = not data
        self.text = self.text[self.start :] + self._decoder.decode(data, final=self.eof)
        self._counted, self.start = 0, 0

    def skip(self, pos: int) -> int:
        """The place of the first character from `pos` on that is no white space (the
        text's end when none is left); reads on as it needs."""
        while True:
            while pos < len(self.text) and self.text[pos] in " \t\r\n":
                pos += 1
            if pos < len(self.text) or self.eof:
                return pos
            self.start = pos
            self.more()
            pos = 0

    def rest(self, pos: int) -> IO[bytes]:
        """The stream from `pos` of the text on (what is held, then what is unread)."""
        self.line(pos)
        held = self.text[pos:].encode("utf-8", "surrogateescape") + self._decoder.getstate()[0]
        return io.BufferedReader(_Joined(held, self.stream))


class _Joined(io.RawIOBase):
    """`head`, then `stream`: one stream."""

    def __init__(self, head: bytes, stream: IO[bytes]) -> None:
        self._head, self._stream = memoryview(head), stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n], self._head = self._head[:n], self._head[n:]
            return n
        data = self._stream.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)
