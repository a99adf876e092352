"""`import audit --jobs N` / `--dask ADDRESS`: an audit import split into partitions that
run anywhere, put back together into the recording one job writes, byte for byte
(docs/importing.md, "Many jobs").

The split (`plan`): each plain file whose framing is one of lines (`LINE_FRAMINGS`) is cut
at line ends into ranges of `SIZE` bytes at most, the import's last ones smaller so that
the partitions running at once end about together (`_sizes`); a file of JSON documents
(an array, pretty-printed) is one partition. Standard input and a gzip file are streams
(`Stream`): the command's process reads them (a gzip one inflated), tells the framing from
the head as one job does, and, when it is one of lines, cuts them at line ends into
chunks as they are read (`Stitch._chunks`), by the same sizes: `SIZE` bytes while more
than `LOOKAHEAD` chunks are read ahead, and what is left at the end cut as a file's last
ranges are. A chunk is a partition whose bytes are its own (`Part.chunk`). For a local
pool they are spooled to a file (0600) of the parts folder beside OUT, which the stitch
also reads them again from, removed once the chunk is put in place: a chunk is written
once and read by one worker from the page cache, the command's memory holds only the
chunks being cut, and no pipe between the processes carries it. For Dask, whose workers
may be other machines, the bytes travel with the partition (`Part.data`) and the stitch
keeps them until the chunk is put in place: at most `ahead` chunks running and `ahead`
waiting for the stitch. What of a stream is imported in the command's process, as one
job reads it (`_Rest`): a stream whose framing is no line one (standard input; a gzip
file of JSON documents is one partition, read whole by a worker), one smaller than the
import's least to split (`Stream.whole`), and the rest of a stream from a line longer
than `max_line` on (which one job reads past a chunk at a time, never held). A stream
that cannot be read on (a gzip cut short or corrupt) ends after the last whole line
read before the error, which the last chunk says (`Part.error`) as one job says it.

A partition (`Part`: a path, two byte offsets, the file's framing, the bounds, the time
range and the redaction key; a chunk's bytes) is given to `run`, a module-level
function, in a worker that may be another machine sharing the path; what it returns
(`Result`) is the records of its range as bytes (or a file, on this machine) and what
the stitch needs of its edges, all of a size that follows the range's. `Stitch.run`
keeps the workers busy: a partition is submitted as soon as one ends, whatever the
stitch waits for.

A partition imports its range as a one-job import would from an empty start: a request it
has not seen begun is a new exchange. The stitch (`Stitch`, in the command's process, in
the files' and ranges' order) holds the one import's state (`AuditImport`, the sink
writing OUT) and, for each result, writes its records where nothing before the range
changes them, and repairs what the range could not know:

- an exchange begun before the range (a watch open for minutes, a request in flight at the
  cut) or ended before it (a late event): the range's records of it are dropped and its
  events, read again from the file or the chunk (from the byte where the partition began
  reading their line, `_again_at`), are fed to the one import, which holds the exchange's
  state (its id, stages, what its request's body held);
- the notes' cap (`sink.SKIP_NOTES`): a partition writes all of its notes, the stitch the
  first SKIP_NOTES of the import's; skipped lines are said with their line in the file (a
  partition counts its own, the stitch adds the lines before);
- the exchanges still open at a range's end carry on into the next (`Result.tail`), with
  what the sink keeps of them; the ids given, the requests finished (the remembered sets
  and their Bloom filter, `importers.seen`), the counts and each file's report are added
  in order.

A range whose start the rest of the import would change more deeply (an id another
exchange before it had, a file's shape changing at the cut, more than `--max-open`
exchanges open, skip reasons past the report's bound) is imported again by the stitch, in
its process, from the state before it: slower, never different.
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import functools
import io
import itertools
import os
import signal
import tempfile
import threading
import time
import zlib
from array import array
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, cast

from k8s_wiretap.capture import jsonfast
from k8s_wiretap.capture.outputs import FileOutput
from k8s_wiretap.importers import audit, framing, shapes
from k8s_wiretap.importers.audit import (
    DONE_LIMIT,
    MAX_REASONS,
    OTHER_REASONS,
    STDIN,
    AuditImport,
    Event,
    FileReport,
    _Exchange,
)
from k8s_wiretap.importers.limits import Limits
from k8s_wiretap.importers.sink import SKIP_NOTES, Sink, _Open
from k8s_wiretap.importers.timerange import TimeRange

__all__ = [
    "LINE_FRAMINGS",
    "SIZE",
    "SMALLEST",
    "Part",
    "Result",
    "Stitch",
    "Stream",
    "plan",
    "request_of",
    "run",
    "splittable",
    "streamed",
]

SIZE = 32 * 1024 * 1024  # a range's bytes, at most (its result: about 1.4 times that)
SMALLEST = 16 * 1024 * 1024  # below twice this, an import is one job, in the command's process
TAIL = 8  # the last ranges' bytes: `SIZE` over this, at least (`_sizes`)
LINE_FRAMINGS = (
    "JSON lines",
    "JSON lines after a timestamp",
    "Fluent Bit out_file lines",
    "base64 gzip lines",
)
SEARCH = 1 << 16  # bytes read at a time looking for a line's end
LOOKAHEAD = 2  # a stream's chunks read ahead (its last ones cut by what is left: `_sizes`)
SALTED = "k8s-wiretap: how this process hashes str"  # `Part.salt`
FEW = 16  # values looked for by a search each (`_places`); more, by one pass
# a Result's per-event flags
IGNORED, FINISHED, REQUESTED = 1, 2, 4
NOTE, SKIP = 0, 1  # the kinds of a Result's specials


@dataclass(frozen=True)
class Part:
    """One partition: `path` from byte `start` to `end` (None: the whole file, of any
    framing, gzip too), read in `framing` (a range's: told once from the file's head)."""

    path: Path
    start: int
    end: int | None
    framing: str
    key: bytes  # the redaction key: every partition's placeholders are the import's
    bounds: Limits
    span: TimeRange | None
    max_body: int
    folder: str | None = None  # where its records go as a file (None: in the result)
    cwd: str = ""  # the command's working folder (a worker's may be another)
    # `hash(SALTED)` in the stitch's process: a worker whose own is the same (forked from
    # it) hashes every str as it does, and gives its requests' keys, not the requests
    salt: int | None = None
    # a chunk of a stream (`Stream`): its bytes, `start` to `end` of the stream, carried
    # (`data`) or in a file of this machine (`spool`, a local pool's); whether the line
    # before it is blank; the stream's modification time (`audit._modified`); why the
    # stream could not be read on after it (None: it could)
    data: bytes | None = None
    spool: str | None = None
    blank: bool = False
    modified: str | None = None
    error: str | None = None

    @property
    def source(self) -> Path:
        """Where the bytes are read from: `path`, in the command's working folder (a
        chunk's spool file)."""
        if self.spool is not None:
            return Path(self.spool)
        return self.path if self.path.is_absolute() else Path(self.cwd, self.path)

    @property
    def chunk(self) -> bool:
        """Whether the partition is a chunk of a stream (its bytes its own, not a file's)."""
        return self.data is not None or self.spool is not None

    @property
    def first(self) -> int:
        """The byte of `source` the partition's bytes begin at."""
        return 0 if self.chunk else self.start


@dataclass(frozen=True)
class Stream:
    """A log the command's process reads (standard input, a gzip file): cut at line ends
    into chunks as it is read (`Stitch.parts`), each at most `size` bytes; the last ones
    smaller for `workers` partitions at once (`_sizes`, over what is read ahead); all of
    it in the command's process when it is fewer than `whole` bytes."""

    path: Path
    size: int
    workers: int
    whole: int = 0


@dataclass(frozen=True)
class _Here:
    """A chunk of a stream the command's process imports itself (a stream too small to be
    worth a worker, or the place of an error with no bytes)."""

    part: Part


@dataclass
class _Rest:
    """What of a stream the command's process imports itself, as one job reads it: a
    whole stream whose framing is no line one (`framing` ""), or the rest of one of lines
    from the line too long to hold (`start`: its byte in the stream) on; or, with
    `error`, a stream that could not be read at its head."""

    path: Path
    stream: BinaryIO | None
    framing: str
    start: int
    blank: bool
    modified: str | None
    error: str | None = None


@dataclass
class Result:
    """What a partition gives back: its records (`data`) and, per event it fed, where its
    records end in `data`, its exchange (an index into `ids`), where its value is read
    again (`_Reader.at`: a byte of the range, or an ordinal in a whole file), its item in
    the value, the shape that read it, and flags; the notes and
    skips (`specials`); per exchange it began, its request's key (`Event.key`, in `keys`,
    when the partition's process hashes str as the stitch's does, `Part.salt`: a worker
    forked from it) or else what the key is the hash of (`audit.request`, in `requests`:
    hashed by the stitch, in its process), its auditID and the id it gave; the exchanges
    still open at its end; its counts and its file's report."""

    data: bytes  # its records, or b"" when they are in `file`
    file: str | None
    cuts: array[int]
    owner: array[int]
    at: array[int]
    item: array[int]
    shape: array[int]
    flags: bytes
    specials: list[tuple[int, int, int, Any, Any]]  # (event, offset, kind, a, b)
    keys: array[int]
    requests: list[tuple[str, str, str, str, str, str]]
    audit_ids: list[str]
    ids: list[str]
    tail: list[tuple[int, str, bytes | None, bool, bool, list[str], Any]]
    ignored: int
    requests_written: int
    peak: int
    evicted: int
    report: FileReport
    newlines: int
    end_shape: str | None
    entry: list[str]
    broken: bool
    seconds: float  # the CPU time the partition took (its thread's)


# -- the split --------------------------------------------------------------------------------
def plan(
    paths: Iterable[Path], bounds: Limits, size: int, workers: int = 1, whole: int = 0
) -> list[Part | Stream]:
    """The partitions of the logs at `paths`, in order; each plain file of lines cut at
    line ends into ranges of `size` bytes at most, the last ones of the import smaller
    (`_sizes`) so that `workers` partitions at once end about together; standard input
    and each gzip file a `Stream`, cut as the command's process reads it (all of it in
    that process when fewer than `whole` bytes). The key, span and body bound are filled
    in by `Stitch.parts`."""
    planned: list[Part | Stream] = []
    files: list[tuple[Path, str | None, int]] = []  # framing ("": whole, None: a stream)
    for path in paths:
        if path == STDIN or _gzipped(path):
            files.append((path, None, 0))
            continue
        told = _framing(path, bounds)
        if told not in LINE_FRAMINGS:
            told = ""
        files.append((path, told, path.stat().st_size))
    left = sum(length for _, _, length in files)  # the bytes still to share out
    for path, framed, length in files:
        if framed is None:
            planned.append(Stream(path, size, workers, whole))
            continue
        if not framed:
            planned.append(Part(path, 0, None, "", b"", bounds, None, 0))
        else:
            cuts = _cuts(path, length, _sizes(size, workers, left))
            for start, end in itertools.pairwise(cuts):
                planned.append(Part(path, start, end, framed, b"", bounds, None, 0))
        left -= length
    return planned


def _sizes(size: int, workers: int, left: int) -> Callable[[int], int]:
    """The bytes of the range at a byte of a file with `left` bytes of the import from
    its start: `size`, but at most what is left over twice `workers` (so that the ranges
    shrink as the import nears its end, and the last to end leaves no worker idle for
    long), and at least `size` / TAIL (nor does it leave less than that after it)."""
    least = max(1, size // TAIL)

    def sized(at: int) -> int:
        rest = left - at
        wanted = max(least, min(size, rest // (2 * workers)))
        return rest if rest - wanted < least else wanted

    return sized


def _gzipped(path: Path) -> bool:
    """Whether the file starts with gzip's magic bytes (read as a stream: `Stream`)."""
    with path.open("rb") as raw:
        return raw.read(2) == audit.GZIP_MAGIC


def streamed(paths: Iterable[Path]) -> bool:
    """Whether any of `paths` is read as a stream (standard input, a gzip file)."""
    for path in paths:
        with contextlib.suppress(OSError):
            if path == STDIN or _gzipped(path):
                return True
    return False


def _framing(path: Path, bounds: Limits) -> str:
    """The framing of a plain file."""
    with path.open("rb", buffering=framing.HEAD) as stream:
        return framing.framed(stream, bounds)[0]


def _cuts(path: Path, length: int, sized: Callable[[int], int]) -> list[int]:
    """Where the ranges start (and the last ends): after the first line's end at or past
    each range's bytes (`sized(start)`) from its start."""
    cuts = [0]
    with path.open("rb", buffering=0) as stream:
        while (at := cuts[-1] + max(1, sized(cuts[-1])) - 1) < length:
            stream.seek(at)  # a range ends with the line end at its last byte, or after
            while True:
                chunk = stream.read(SEARCH)
                if not chunk:
                    at = length
                    break
                found = chunk.find(b"\n")
                if found >= 0:
                    at += found + 1
                    break
                at += len(chunk)
            if at >= length:
                break
            cuts.append(at)
    cuts.append(length)
    return cuts


def splittable(paths: Iterable[Path]) -> int:
    """The bytes of the files among `paths` (what a split would share out)."""
    total = 0
    for path in paths:
        if path != STDIN:
            with contextlib.suppress(OSError):
                total += path.stat().st_size
    return total


# -- reading a range --------------------------------------------------------------------------
class _Range(io.RawIOBase):
    """The bytes of a file (a path, or an unbuffered file left open: `owned` False) from
    `start` to `end`, counting the line ends read."""

    def __init__(self, path: Path | BinaryIO, start: int, end: int, *, owned: bool = True) -> None:
        self._file: Any = path.open("rb", buffering=0) if isinstance(path, Path) else path
        self._owned = owned
        self._file.seek(start)
        self._left = end - start
        self._read = 0
        self.newlines = 0

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        """The bytes read from the range (a BufferedReader's `tell` over it: its own
        buffer's bytes not yet given taken off)."""
        return self._read

    def readinto(self, buffer: Any) -> int:
        if self._left <= 0:
            return 0
        view = memoryview(buffer)[: self._left]
        n = self._file.readinto(view) or 0
        self.newlines += view[:n].tobytes().count(b"\n")
        self._left -= n
        self._read += n
        return n

    def close(self) -> None:
        if self._owned:
            self._file.close()
        super().close()


def _raw(part: Part) -> BinaryIO:
    """The partition's bytes unbuffered: its file (or spool file) open, or its chunk's."""
    if part.data is not None:
        return io.BytesIO(part.data)
    return cast(BinaryIO, part.source.open("rb", buffering=0))


class _Joined(io.RawIOBase):
    """`head`, then the stream `rest` (a buffered one) from where it stands."""

    def __init__(self, head: bytes, rest: io.BufferedReader) -> None:
        self._head, self._rest = memoryview(head), rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer)
        if self._head:
            n = min(len(view), len(self._head))
            view[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._rest.read1(len(view))
        view[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._rest.close()
        super().close()


class _Pending:
    """A stream's bytes read and not yet cut, kept as the blocks they were read in (no
    buffer grown and moved: a chunk's blocks are written out as they are)."""

    def __init__(self) -> None:
        self.blocks: deque[bytes] = deque()
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def add(self, block: bytes) -> None:
        if block:
            self.blocks.append(block)
            self.size += len(block)

    def find(self, at: int) -> int:
        """The first line end at or after byte `at`, or -1."""
        base = 0
        for block in self.blocks:
            if at < base + len(block):
                found = block.find(b"\n", max(0, at - base))
                if found >= 0:
                    return base + found
            base += len(block)
        return -1

    def rfind(self, end: int) -> int:
        """The last line end before byte `end`, or -1."""
        base = self.size
        for block in reversed(self.blocks):
            base -= len(block)
            if base < end:
                found = block.rfind(b"\n", 0, end - base)
                if found >= 0:
                    return base + found
        return -1

    def take(self, size: int, *, keep: bool = False) -> list[bytes]:
        """The first `size` bytes, as blocks, taken off (`keep`: the rest dropped, those
        kept)."""
        taken, left = [], size
        while left:
            block = self.blocks[0]
            if len(block) <= left:
                taken.append(self.blocks.popleft())
                left -= len(block)
            else:
                taken.append(block[:left])
                self.blocks[0] = block[left:]
                left = 0
        self.size -= size
        if keep:
            self.blocks, self.size = deque(taken), size
        return taken


def _ends_blank(blocks: list[bytes], first: bool, longest: int) -> bool:
    """Whether the last line of the whole lines `blocks` (`first`: the stream's first
    ones) is blank, as `_after_blank` tells a file's line before a range."""
    if not blocks or not blocks[-1].endswith(b"\n"):
        return False
    if first and len(blocks[0]) < len(framing.BOM):  # a BOM whole in the first block
        blocks = [b"".join(blocks)]
    length, end = 0, len(blocks[-1]) - 1
    for i in range(len(blocks) - 1, -1, -1):
        block = blocks[i]
        found = block.rfind(b"\n", 0, end)
        begin = found + 1
        if not found + 1 and not i and first and block.startswith(framing.BOM):
            begin = min(len(framing.BOM), end)  # not the first line's
        if framing.BLANKS.fullmatch(block, begin, end) is None:
            return False
        length += end - begin
        if length > longest:
            return False
        if found >= 0:
            return True
        end = len(blocks[i - 1]) if i else 0
    return True


def _opened(part: Part) -> tuple[BinaryIO, _Range | None]:
    if part.end is None:
        return audit._open(part.source), None
    raw = _Range(_raw(part), part.first, part.first + part.end - part.start)
    return cast(BinaryIO, io.BufferedReader(raw, framing.HEAD)), raw


def _modified(part: Part) -> str | None:
    """The time of an event that has none: its file's modification time (a chunk's, its
    stream's, told by the command's process)."""
    return part.modified if part.chunk else audit._modified(part.source)


def _values(part: Part, stream: BinaryIO) -> tuple[str, framing.Numbered]:
    """The framing and the values of the partition's bytes: a whole file's told from its
    head, a range's in the file's framing (its lines numbered from 1 in the range)."""
    if part.end is None:
        return framing.framed(stream, part.bounds)
    peek = cast(io.BufferedReader, stream).peek(len(framing.BOM))
    number = 1
    if part.start == 0 and peek.startswith(framing.BOM):
        stream.read(len(framing.BOM))
    elif part.start > 0 and (
        part.blank if part.chunk else _after_blank(part.source, part.start, part.bounds.max_line)
    ):
        # one job reads past the blank lines after a blank line, and the white space
        # before the next line's value (which a framing's prefix must not keep)
        number += framing._blanks(stream)
    return part.framing, framing.line_values(part.framing, stream, number, part.bounds)


def _after_blank(path: Path, start: int, longest: int) -> bool:
    """Whether the line before byte `start` (a line's first) of the file is blank (white
    space, `longest` bytes at most: a longer line is one too long to read)."""
    with path.open("rb", buffering=0) as stream:
        end = start - 1  # the line end before `start`; the line's bytes are read back
        while True:
            at = end - SEARCH if end - SEARCH >= len(framing.BOM) else 0  # a BOM whole
            stream.seek(at)
            chunk = stream.read(end - at)
            if at == 0 and chunk.startswith(framing.BOM):  # not the first line's
                chunk = chunk[len(framing.BOM) :]
            line = chunk.rpartition(b"\n")[2]
            if line.strip(framing.WS):
                return False
            if len(line) < len(chunk) or at == 0:  # the line's start
                return len(line) + start - 1 - end <= longest
            if start - 1 - at > longest:
                return False
            end = at


class _Reader(audit.ValueReader):
    """A partition's values as Events, by the import's own loop (`audit.ValueReader`),
    from the shape `shape` on; skipped parts told to `skip(where, reason)`, each place
    said by `where(number)`. Keeps the shape it ends in, the shapes it told while it had
    none (`entry`), and whether the file could not be read on (`broken`)."""

    def __init__(
        self,
        path: Path,
        report: FileReport,
        span: TimeRange | None,
        shape: shapes.Shape | None,
        where: Callable[[int], str],
        skip: Callable[[str, str], None],
    ) -> None:
        super().__init__(report, span, None, where, skip, shape, self._entered)
        self.path = path
        self.source = path  # where it is read from (`Part.source`), when not `path`
        self.stamped = False  # `modified` given (a chunk's), not the source's
        self.entry: list[str] = []
        self.broken = False
        self.at = -1  # where the value is found again (`placed`)

    def placed(
        self, values: framing.Numbered, tell: Callable[[], int] | None = None
    ) -> Iterator[tuple[int, Event, int]]:
        """(the value's item, the Event, its shape's place in the registry); where its
        value is found again in `self.at`: with `tell` (the range's stream's), the byte of
        the range its reading began at (`_again_at`), else its ordinal in `values`."""
        if not self.stamped:
            self.modified = audit._modified(self.source)
        read_by, place = None, -1
        try:
            for index, event in self.events(self._tracked(values, tell)):
                if self.shape is not read_by:  # told again only when it changes
                    read_by = self.shape
                    place = -1 if read_by is None else _place(read_by)
                yield index, event, place
        except (OSError, EOFError, zlib.error) as error:
            self.broken = True
            self.skip(f"{self.path}", f"the file could not be read on: {error}")

    def _tracked(
        self, values: framing.Numbered, tell: Callable[[], int] | None
    ) -> framing.Numbered:
        """`values`, `self.at` set to where each is found again as it comes."""
        after = itertools.count().__next__ if tell is None else tell
        at = after()
        for value in values:
            self.at, at = at, after()
            yield value

    def _entered(self, line: bytes) -> None:
        """Note the shape a value read without one is told to have: a range read from
        another shape would have read it so only when that is the one told."""
        try:
            found, _ = shapes.detect(shapes.loaded(line, "the line"))
        except (shapes.Unfit, RecursionError, ValueError):
            return
        if found is not None:
            self.entry.append(found.name)


def _place(shape: shapes.Shape) -> int:
    """The shape's place in the registry (by identity: shapes are never equal but to
    themselves)."""
    return next(i for i, known in enumerate(shapes.REGISTRY) if known is shape)


def request_of(event: Event) -> tuple[str, str, str, str, str, str]:
    """What `Event.key` is the hash of (`audit.request`): unlike the hash, the same in
    every process."""
    return audit.request(event.raw, event.audit_id, event.verb, event.uri)


# -- a partition ------------------------------------------------------------------------------
class _Memory(FileOutput):
    """A FileOutput of a partition's records, no header: to its file `fd` (a local pool's,
    written a buffer at a time), or kept in memory (`fd` None: given back)."""

    def __init__(self, fd: int | None) -> None:  # what FileOutput's flush uses, no header
        self.path = Path("-")
        self._fd = -1 if fd is None else fd
        self._pending: list[bytes] = []
        self._pending_size = 0
        self.dumps = jsonfast.exact
        self.lost = 0
        self.size = 0
        self._cut = False
        self.chunks: list[bytes] = []  # what is kept (without a file)

    @property
    def at(self) -> int:
        """The records' bytes so far."""
        return self.size + self._pending_size

    def flush(self, *, all_or_none: bool = False) -> None:
        if self._fd >= 0:
            super().flush()
        elif self._pending:
            self.chunks += self._pending
            self.size += self._pending_size
            self._pending, self._pending_size = [], 0


class _PartSink(Sink):
    """A sink writing a partition's records (`_Memory`) with the import's redaction key."""

    STAGED = False

    def __init__(self, key: bytes, max_body: int, fd: int | None) -> None:
        self._fd = fd
        super().__init__(Path("-"), source="audit log", max_body=max_body, key=key)

    def _opened(self, source: str) -> FileOutput:
        return _Memory(self._fd)

    @property
    def memory(self) -> _Memory:
        return cast(_Memory, self._output)


class _PartImport(AuditImport):
    """An AuditImport that says, per event, what it did (`Result`)."""

    def __init__(self, sink: _PartSink, max_open: int, keyed: bool) -> None:
        super().__init__(sink, max_open=max_open)
        self.memory = sink.memory
        self.keyed = keyed  # the keys given (`Result.keys`), not the requests
        self.keys: array[int] = array("q")
        self.cuts: array[int] = array("q")
        self.owner: array[int] = array("q")
        self.at: array[int] = array("q")
        self.item: array[int] = array("q")
        self.shape: array[int] = array("q")
        self.flags = bytearray()
        self.specials: list[tuple[int, int, int, Any, Any]] = []
        self.requests: list[tuple[str, str, str, str, str, str]] = []
        self.audit_ids: list[str] = []
        self.ids: list[str] = []
        self.index: dict[int, int] = {}
        self.peak = 0
        self._flag = 0

    def fed(self, event: Event, at: int, item: int, shape: int) -> None:
        key, opened, done = event.key, self._open, self._done
        self._flag = 0
        written = self.sink.exchanges
        if key not in opened and key not in done:  # new: open a moment at least, with those
            if len(opened) >= self.peak:  # open already
                self.peak = len(opened) + 1
            self.index[key] = len(self.audit_ids)
            if self.keyed:
                self.keys.append(key)
            else:
                self.requests.append(request_of(event))
            self.audit_ids.append(event.audit_id)
        self.feed(event)
        flag = self._flag
        if self.sink.exchanges != written:
            flag |= REQUESTED
        if not flag & IGNORED and key in done:  # an event ignored is one of an exchange
            flag |= FINISHED  # ended before; any other that ends its exchange finishes it
        memory = self.memory
        self.owner.append(self.index[key])
        self.cuts.append(memory.size + memory._pending_size)
        self.at.append(at)
        self.item.append(item)
        self.shape.append(shape)
        self.flags.append(flag)

    def _fresh(self, event: Event) -> str:
        id = super()._fresh(event)
        self.ids.append(id)
        return id

    def _ignored(self, message: str) -> None:
        self._flag |= IGNORED
        super()._ignored(message)

    def _note(self, message: str, id: str | None = None) -> None:
        """Every note, marked (the stitch writes the import's first SKIP_NOTES)."""
        self._noted += 1
        at = self.memory.at
        self.sink.note(message, id=id)
        length = self.memory.at - at
        self.specials.append((len(self.cuts), at, NOTE, length, None))

    def skipped(self, where: str, reason: str) -> None:
        self.specials.append((len(self.cuts), self.memory.at, SKIP, where, reason))


def _quiet() -> None:
    """A worker leaves SIGINT to the command (a terminal's ^C reaches every process of its
    group): the command stops the import and its pool."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def run(part: Part) -> Result:
    """Import one partition from an empty start (module-level: a pool's worker, or a Dask
    worker on another machine, runs it by name)."""
    _quiet()
    began = time.thread_time()
    fd, file = None, None
    if part.folder is not None:
        fd, file = tempfile.mkstemp(prefix="part-", suffix=".jsonl", dir=part.folder)
    try:
        return _run(part, fd, file, began)
    finally:
        if fd is not None:
            os.close(fd)


def _run(part: Part, fd: int | None, file: str | None, began: float) -> Result:
    sink = _PartSink(part.key, part.max_body, fd)
    importer = _PartImport(sink, part.bounds.max_open, hash(SALTED) == part.salt)
    sink.read_by_jsonfast()
    report = FileReport(part.path)
    prefix = str(part.path)
    reader = _Reader(
        part.path, report, part.span, None, lambda n: f"{prefix}:{n}", importer.skipped
    )
    reader.source = part.source
    reader.modified, reader.stamped = _modified(part), True
    stream, raw = _opened(part)
    with stream:
        report.framing, values = _values(part, stream)
        tell = None if raw is None else stream.tell
        for item, event, shape in reader.placed(values, tell):
            importer.fed(event, reader.at, item, shape)
    _broken(part, reader)
    tail = []
    for key, state in importer._open.items():
        held = state.held
        if isinstance(held, Event):
            held = sink.dumps(held.raw)
        kept = sink._open.get(state.id)
        kept_state = None if kept is None else (kept.info, kept.response_type, kept.seq, kept.seen)
        tail.append(
            (
                importer.index[key],
                state.id,
                held,
                state.requested,
                state.responded,
                state.stages,
                kept_state,
            )
        )
    sink.memory.flush()
    data = b"".join(sink.memory.chunks)
    return Result(
        data=data,
        file=file,
        cuts=importer.cuts,
        owner=importer.owner,
        at=importer.at,
        item=importer.item,
        shape=importer.shape,
        flags=bytes(importer.flags),
        specials=importer.specials,
        keys=importer.keys,
        requests=importer.requests,
        audit_ids=importer.audit_ids,
        ids=importer.ids,
        tail=tail,
        ignored=importer.ignored,
        requests_written=sink.exchanges,
        peak=importer.peak,
        evicted=importer.evicted,
        report=report,
        newlines=raw.newlines if raw is not None else 0,
        end_shape=reader.shape.name if reader.shape is not None else None,
        entry=reader.entry,
        broken=reader.broken,
        seconds=time.thread_time() - began,
    )


def _broken(part: Part, reader: _Reader) -> None:
    """After a chunk its stream could not be read on after: said as one job says it."""
    if part.error is not None and not reader.broken:
        reader.broken = True
        reader.skip(f"{reader.path}", f"the file could not be read on: {part.error}")


_FINISHED, _IGNORED, _REQUESTED = (
    bytes(1 if flag & bit else 0 for flag in range(256)) for bit in (FINISHED, IGNORED, REQUESTED)
)


def _remember(new: list[Any], window: OrderedDict[Any, None], one: Callable[[Any], None]) -> None:
    """`one(item)` for each of `new`, in order (an import's remembering of an id given,
    a request finished): at once while the window stays inside its bound (none is dropped,
    and one already there stays in its place, as `one` leaves it)."""
    if len(window) + len(new) <= DONE_LIMIT:
        window.update(dict.fromkeys(new))
        return
    for item in new:
        one(item)


def _places(items: list[Any] | array[int], found: set[Any]) -> list[int]:
    """The places in `items` of the values in `found`, in order: a few values found by the
    list's own search, many by one pass."""
    if len(found) > FEW:
        return [i for i, item in enumerate(items) if item in found]
    places = []
    for value in found:
        i = -1
        with contextlib.suppress(ValueError):
            while True:
                i = items.index(value, i + 1)
                places.append(i)
    return sorted(places)


# -- the stitch -------------------------------------------------------------------------------
@dataclass
class _File:
    """Where the stitch stands in a file: its report, the lines before the next range,
    the shape it is read in, whether it could not be read on."""

    path: Path
    report: FileReport
    base: int = 0
    shape: shapes.Shape | None = None
    broken: bool = False


@dataclass
class Stitch:
    """The one import the partitions' results are put together into (see the module)."""

    sink: Sink
    bounds: Limits
    span: TimeRange | None
    importer: AuditImport = field(init=False)
    redone: int = 0  # ranges imported again in this process
    repaired: int = 0  # exchanges across a cut, fed again in this process
    seconds: float = 0.0  # the CPU time the partitions took
    _file: _File | None = None

    def __post_init__(self) -> None:
        self.importer = AuditImport(self.sink, max_open=self.bounds.max_open)
        self.sink.read_by_jsonfast()

    def parts(
        self, planned: Iterable[Part | Stream], folder: str | None
    ) -> Generator[Part | _Here | _Rest, None, None]:
        """The plan with the import's redaction key, time range and body bound, the folder
        the partitions write their records to (None: they give them back), and how this
        process hashes str (`Part.salt`); each `Stream` read and cut here as it is asked
        for (`_chunks`): its chunks' bytes spooled to files in `folder` (a local pool's),
        or else carried by the partitions (Dask's workers may be other machines)."""
        for item in planned:
            if isinstance(item, Stream):
                yield from self._chunks(item, folder)
            else:
                yield self._filled(item, folder)

    def _filled(self, part: Part, folder: str | None, **chunk: Any) -> Part:
        return dataclasses.replace(
            part,
            key=self.sink.key,
            span=self.span,
            max_body=self.sink.max_body,
            folder=folder,
            cwd=os.getcwd(),
            salt=hash(SALTED),
            **chunk,
        )

    def _chunks(
        self, item: Stream, folder: str | None
    ) -> Generator[Part | _Here | _Rest, None, None]:
        """A stream's partitions, cut as it is read: chunks of whole lines, the size of a
        file's ranges (`_sizes`, over the bytes read ahead: `LOOKAHEAD` chunks); each
        chunk's bytes in a file of `folder` (0600), or carried (`Part.data`). A stream
        whose framing is no line one is a `_Rest` (standard input: read here) or one
        partition (a gzip file: read by a worker), as one job reads it; so is the rest of
        a stream of lines from a line too long to hold (longer than `max_line`)."""
        path, bounds = item.path, self.bounds
        longest = bounds.max_line
        opened = cast(io.BufferedReader, audit._open(path))
        stream: io.BufferedReader | None = opened  # closed at the end, unless handed on
        try:
            try:
                head = framing._peek(opened)
            except (OSError, EOFError, zlib.error) as failed:
                yield _Rest(path, None, "", 0, False, None, str(failed))
                return
            told = framing.framed(io.BufferedReader(io.BytesIO(head), framing.HEAD), bounds)[0]
            if told not in LINE_FRAMINGS:
                if path == STDIN:
                    yield _Rest(path, cast(BinaryIO, opened), "", 0, False, None)
                    stream = None
                else:
                    yield self._filled(Part(path, 0, None, "", b"", bounds, None, 0), folder)
                return
            modified = audit._modified(path)
            start, blank, pending = 0, False, _Pending()
            ended, broke = False, cast(str | None, None)
            reading = opened

            def read() -> None:  # a buffer's bytes more (`_Inflating`: one job's reads)
                nonlocal ended, broke
                try:
                    data = reading.read1(framing.HEAD)
                except (OSError, EOFError, zlib.error) as failed:
                    broke, ended = str(failed), True
                    pending.take(pending.rfind(len(pending)) + 1, keep=True)  # as readline
                else:
                    pending.add(data)
                    ended = not data

            def chunk(size: int, error: str | None = None, here: bool = False) -> Part:
                nonlocal start, blank
                spooled, data = None, None
                blocks = pending.take(size)
                if folder is not None and not here:
                    fd, spooled = tempfile.mkstemp(prefix="stream-", suffix=".log", dir=folder)
                    with open(fd, "wb") as spool:
                        spool.writelines(blocks)
                else:
                    data = b"".join(blocks)
                ends_blank = _ends_blank(blocks, start == 0, longest)
                part = Part(path, start, start + size, told, b"", bounds, None, 0)
                part = self._filled(
                    part,
                    folder,
                    data=data,
                    spool=spooled,
                    blank=blank,
                    modified=modified,
                    error=error,
                )
                start, blank = start + size, ends_blank
                return part

            scanned, line = 0, 0  # where a line end is looked for next; the last line's start
            while not ended:
                if len(pending) < LOOKAHEAD * item.size:
                    read()
                    continue
                found = pending.find(max(scanned, item.size - 1))
                if found >= 0:
                    scanned = 0
                    yield chunk(found + 1)
                    continue
                if not scanned:  # none at or past the chunk's size: the line there
                    line = pending.rfind(item.size - 1) + 1
                scanned = len(pending)
                if len(pending) - line > longest:  # read past by one job, never held
                    if line:
                        yield chunk(line)
                    held = b"".join(pending.take(len(pending)))
                    joined = io.BufferedReader(_Joined(held, reading), framing.HEAD)
                    yield _Rest(path, cast(BinaryIO, joined), told, start, blank, modified)
                    stream = None
                    return
                read()
            # what is left, all read: cut as a file's last ranges are
            if start == 0 and len(pending) < item.whole:
                yield _Here(chunk(len(pending), broke, here=True))
                return
            if not pending:
                if start == 0 or broke is not None:  # a report, or the error, in its place
                    yield _Here(chunk(0, broke, here=True))
                return
            sized, at = _sizes(item.size, item.workers, len(pending)), 0
            while pending:
                ahead = max(1, sized(at)) - 1
                found = pending.find(ahead) if ahead < len(pending) else -1
                size = len(pending) if found < 0 else found + 1
                at += size
                yield chunk(size, broke if size == len(pending) else None)
        finally:
            if stream is not None:
                stream.close()

    def run(
        self,
        planned: list[Part | Stream],
        executor: Executor,
        ahead: int,
        folder: str | None = None,
    ) -> AuditImport:
        """Run the partitions on `executor` and put them together in order; a stream read
        here as it is asked for (`parts`), what of it is read here (`_Rest`, a chunk too
        small to be worth a worker) imported here in its place. At most `ahead` partitions
        are running or waiting to run, topped up as soon as any ends (a worker never waits
        for the stitch), and at most `ahead` more have ended and wait for the stitch. With
        `folder` (a folder on this machine that the workers write to: a local pool's), each
        partition's records come as a file there, removed once copied, and so do a
        stream's chunks."""
        parts = self.parts(planned, folder)
        # in order: each partition with its future, what is imported here with none
        order: deque[tuple[Part | _Here | _Rest, Future[Result] | None]] = deque()
        try:
            while True:
                busy = [f for _, f in order if f is not None and not f.done()]
                while (
                    len(busy) < ahead
                    and len(order) < 2 * ahead
                    and (item := next(parts, None)) is not None
                ):
                    if isinstance(item, Part):
                        submitted = executor.submit(run, item)
                        order.append((item, submitted))
                        busy.append(submitted)
                    else:
                        order.append((item, None))
                if not order:
                    break
                item, future = order[0]
                if future is not None and not future.done():
                    wait(busy, return_when=FIRST_COMPLETED)
                    continue
                order.popleft()
                if future is None:
                    self.here(cast(_Here | _Rest, item))  # the workers go on meanwhile
                    continue
                part = cast(Part, item)
                try:
                    result = future.result()
                    self.seconds += result.seconds
                    try:
                        self.add(part, result)
                    finally:
                        if result.file is not None:
                            os.unlink(result.file)
                finally:
                    if part.spool is not None:
                        os.unlink(part.spool)
                del future, result
        finally:
            parts.close()
            for left, future in order:
                if future is not None:
                    future.cancel()
                if isinstance(left, _Rest) and left.stream is not None:
                    left.stream.close()
        self.importer.finish()
        return self.importer

    def here(self, item: _Here | _Rest) -> None:
        """What of a stream is imported in this process, in its place: a chunk (as a range
        imported again), or a `_Rest`."""
        if isinstance(item, _Here):
            file = self._start(item.part.path, item.part.start)
            if not file.broken:
                self._again(item.part, file)
            return
        path = item.path
        if not item.framing:  # a whole stream, as one job reads it
            self._file = None
            report = FileReport(path)
            self.importer.files.append(report)
            if item.stream is None:
                reader = audit.ValueReader(report, None, None, str, self.sink.skip)
                reader.skip(f"{path}", f"the file could not be read on: {item.error}")
                return
            with item.stream as stream:
                for event in audit._file_events(
                    path, stream, self.sink, self.bounds, report, self.span
                ):
                    self.importer.feed(event)
            return
        file = self._start(path, item.start)
        assert item.stream is not None
        with item.stream as stream:
            if file.broken:
                return
            prefix, base = str(path), file.base
            reader = _Reader(
                path,
                file.report,
                self.span,
                file.shape,
                lambda n: f"{prefix}:{base + n}",
                self.sink.skip,
            )
            reader.modified, reader.stamped = item.modified, True
            file.report.framing = item.framing
            buffered = cast(io.BufferedReader, stream)
            if item.start == 0 and buffered.peek(len(framing.BOM)).startswith(framing.BOM):
                stream.read(len(framing.BOM))
            number = 1 + (framing._blanks(stream) if item.blank else 0)
            values = framing.line_values(item.framing, stream, number, self.bounds)
            for _, event, _ in reader.placed(values):
                self.importer.feed(event)
            file.broken = True  # the stream's end: nothing of it comes after

    def _start(self, path: Path, start: int) -> _File:
        if start == 0 or self._file is None or self._file.path != path:
            report = FileReport(path)
            self.importer.files.append(report)
            self._file = _File(path, report)
        return self._file

    def add(self, part: Part, result: Result) -> None:
        """Put one partition's result in place (or import its range again)."""
        file = self._start(part.path, part.start)
        if file.broken:
            return
        keys = result.keys.tolist() if result.keys else list(map(hash, result.requests))
        conflicts = self._conflicts(keys)
        if self._redo(file, result, keys, conflicts):
            self.redone += 1
            self._again(part, file)
            return
        self._merge(part, file, result, keys, conflicts)

    def _conflicts(self, keys: list[int]) -> set[int]:
        """The partition's exchanges whose request the import had begun or ended before
        (found by set operations: a few among thousands)."""
        found = (self.importer._open.keys() & keys) | (self.importer._done.keys() & keys)
        return set(_places(keys, found)) if found else set()

    def _redo(self, file: _File, result: Result, keys: list[int], conflicts: set[int]) -> bool:
        """Whether the range must be imported again from the import's state (its start
        changes more than the exchanges across the cut)."""
        importer = self.importer
        if result.evicted or len(importer._open) + result.peak > importer.max_open:
            return True
        if file.shape is not None and any(name != file.shape.name for name in result.entry):
            return True
        local = result.report.skips
        if OTHER_REASONS in local or len(file.report.skips.keys() | local.keys()) > MAX_REASONS:
            return True
        if conflicts:
            if len(keys) >= DONE_LIMIT:
                return True
            late = any(keys[i] in importer._done for i in conflicts)
            finished = result.flags.translate(_FINISHED).count(1) if late else 0
            if late and len(importer._done) + finished >= DONE_LIMIT:
                return True
            many = Counter(result.audit_ids)
            if any(many[result.audit_ids[i]] > 1 for i in conflicts):
                return True
        given, forgotten = importer._ids, importer._forgotten
        shared = given.keys() & result.audit_ids
        if shared and any(i not in conflicts for i in _places(result.audit_ids, shared)):
            return True  # one job gives it another id: `ID~N`, noted
        maybe = [] if result.ids == result.audit_ids else result.ids  # ids given renamed
        if forgotten is not None:  # an id given before the last DONE_LIMIT, or one like it
            maybe = [*result.audit_ids, *maybe]
        for i, id in enumerate(maybe):
            if i % len(result.ids) in conflicts:
                continue
            if id in given or (forgotten is not None and id in forgotten):
                return True
        return False

    def _again(self, part: Part, file: _File) -> None:
        """Import the range again here, from the import's state (exactly one job's)."""
        if part.end is None:
            with audit._open(part.path) as stream:
                for event in audit._file_events(
                    part.path, stream, self.sink, self.bounds, file.report, self.span
                ):
                    self.importer.feed(event)
            return
        prefix, base = str(part.path), file.base
        reader = _Reader(
            part.path,
            file.report,
            self.span,
            file.shape,
            lambda n: f"{prefix}:{base + n}",
            self.sink.skip,
        )
        reader.source = part.source
        reader.modified, reader.stamped = _modified(part), True
        stream, raw = _opened(part)
        with stream:
            file.report.framing, values = _values(part, stream)
            for _, event, _ in reader.placed(values):
                self.importer.feed(event)
        _broken(part, reader)
        assert raw is not None
        file.base += raw.newlines
        file.shape = reader.shape or file.shape
        file.broken = reader.broken

    def _merge(
        self, part: Part, file: _File, result: Result, keys: list[int], conflicts: set[int]
    ) -> None:
        sink, data = self.sink, result.data
        with contextlib.ExitStack() as stack:
            if result.file is None:

                def put(start: int, end: int) -> None:
                    if end > start:
                        sink.lines(data[start:end])

            else:
                fd = os.open(result.file, os.O_RDONLY)
                stack.callback(os.close, fd)

                def put(start: int, end: int) -> None:
                    if end > start:
                        sink.copied(fd, start, end - start)

            self._put(part, file, result, keys, conflicts, put)

    def _put(
        self,
        part: Part,
        file: _File,
        result: Result,
        keys: list[int],
        conflicts: set[int],
        put: Callable[[int, int], None],
    ) -> None:
        importer, sink = self.importer, self.sink
        cuts, flags, owner = result.cuts, result.flags, result.owner
        again = _places(owner, conflicts) if conflicts else []
        self.repaired += len({owner[i] for i in again})
        events = self._reread(part, result, again) if again else iter(())
        where = self._where(part, file)
        specials, s = result.specials, 0
        position, finishing, previous = 0, 0, -1
        finished = list(itertools.compress(range(len(flags)), flags.translate(_FINISHED)))
        for stop in [*again, len(cuts)]:
            start = cuts[stop - 1] if stop else 0
            while s < len(specials) and (
                specials[s][0] < stop or (specials[s][0] == stop and specials[s][2] == SKIP)
            ):
                _, offset, kind, a, b = specials[s]
                s += 1
                put(position, offset)
                position = offset
                if kind == NOTE:
                    importer._noted += 1
                    if importer._noted <= SKIP_NOTES:
                        put(offset, offset + a)
                    position = offset + a
                else:
                    sink.skip(where(a), b)
            put(position, start)
            position = start
            # the events that ended an exchange since the last one fed again (that one not)
            end = bisect.bisect_left(finished, stop, finishing)
            if finishing < end and finished[finishing] == previous:
                finishing += 1
            ended = list(map(keys.__getitem__, map(owner.__getitem__, finished[finishing:end])))
            _remember(ended, importer._done, importer._finished)
            finishing, previous = end, stop
            if stop == len(cuts):
                break
            while s < len(specials) and specials[s][0] == stop and specials[s][2] == NOTE:
                s += 1
            position = cuts[stop]
            importer.feed(next(events))
        importer.events += len(cuts) - len(again)
        importer.ignored += flags.translate(_IGNORED).count(1)
        importer.ignored -= sum(1 for i in again if flags[i] & IGNORED)
        sink.exchanges += flags.translate(_REQUESTED).count(1)
        sink.exchanges -= sum(1 for i in again if flags[i] & REQUESTED)
        ids = result.ids
        if conflicts:  # but those of the exchanges fed again
            bounds = itertools.pairwise([-1, *sorted(conflicts), len(ids)])
            ids = list(itertools.chain.from_iterable(ids[a + 1 : b] for a, b in bounds))
        _remember(ids, importer._ids, importer._given)
        for i, id, held, requested_, responded, stages, kept in result.tail:
            if i in conflicts:
                continue
            importer._open[keys[i]] = _Exchange(id, held, requested_, responded, stages)
            if kept is not None:
                info, response_type, seq, seen = kept
                sink._open[id] = _Open(info, response_type, seq, seen)
        self._report(file, result.report, where)
        file.base += result.newlines
        if result.end_shape is not None:
            file.shape = next(s for s in shapes.REGISTRY if s.name == result.end_shape)
        file.broken = result.broken

    def _where(self, part: Part, file: _File) -> Callable[[str], str]:
        """A partition's place (`PATH:N`, `PATH:N item K`) as the file's."""
        prefix, base = f"{part.path}:", file.base

        def where(local: str) -> str:
            if not local.startswith(prefix):
                return local
            number, gap, rest = local[len(prefix) :].partition(" ")
            return f"{prefix}{int(number) + base}{gap}{rest}"

        return where

    def _report(self, file: _File, local: FileReport, where: Callable[[str], str]) -> None:
        report = file.report
        report.framing = local.framing
        for name, n in local.shapes.items():
            report.shapes[name] += n
        report.events += local.events
        report.values += local.values
        report.outside += local.outside
        report.unparsed += local.unparsed
        for key, (n, first, said) in local.skips.items():
            if key in report.skips:
                before = report.skips[key]
                report.skips[key] = (before[0] + n, before[1], before[2])
            else:
                report.skips[key] = (n, where(first), said)
        if local.closest[0] > report.closest[0]:
            report.closest = local.closest

    def _reread(self, part: Part, result: Result, again: list[int]) -> Iterator[Event]:
        """The events `again` of the partition, read again from its file: a range's each
        from the byte its value's reading began at, a whole file's by its ordinal."""
        modified = _modified(part)
        with contextlib.ExitStack() as stack:
            if part.end is None:
                value = _by_ordinal(part, stack)
            else:
                raw = stack.enter_context(_raw(part))
                value = functools.partial(_again_at, part, raw)
            at, raws = -1, list[Any]()
            for i in again:
                if result.at[i] != at:
                    at = result.at[i]
                    shape = shapes.REGISTRY[result.shape[i]]
                    raws = shape.events(shapes.loaded(value(at), "the line"))
                yield Event.of(raws[result.item[i]], modified)


def _by_ordinal(part: Part, stack: contextlib.ExitStack) -> Callable[[int], bytes]:
    """The values of a whole file by their ordinals, asked in order (its stream closed
    with `stack`)."""
    stream, _ = _opened(part)
    stack.enter_context(stream)
    _, values = _values(part, stream)
    read, line = -1, cast(bytes | framing.BadEntry, b"")

    def value(wanted: int) -> bytes:
        nonlocal read, line
        while read < wanted:
            _, line = next(values)
            read += 1
        assert isinstance(line, bytes)
        return line

    return value


def _again_at(part: Part, raw: BinaryIO, at: int) -> bytes:
    """The value of the range `part` (its bytes unbuffered in `raw`, `_raw`) whose reading
    began at its byte `at`: read again from there as the partition read it (blank lines
    passed, the framing's prefix taken off), from SEARCH bytes read at once when it ends
    within them."""
    start, end = part.first + at, part.first + cast(int, part.end) - part.start
    raw.seek(start)
    chunk = raw.read(min(SEARCH, end - start))
    with io.BufferedReader(io.BytesIO(chunk)) as stream:  # `peek`, as the partition's
        _, line = next(framing.line_values(part.framing, stream, 1, part.bounds))
        whole = stream.tell() < len(chunk) or start + len(chunk) == end
    if not whole:  # a line longer than the chunk
        ranged = _Range(raw, start, end, owned=False)
        with io.BufferedReader(ranged, SEARCH) as stream:
            _, line = next(framing.line_values(part.framing, stream, 1, part.bounds))
    assert isinstance(line, bytes)
    return line
