"""Read a recording back into exchanges (assembled by `assemble.Assembler`).

A recording being written (or cut short by a crash) may end in a partial line: it is
skipped with a warning, as is any other line that is not a record; the rest still loads.
A cut recording is said in a warning ("PATH: a cut recording: ..."): one that ends with a
note that a signal cut it (`format.cut_note`), or whose last line is cut short (not a
record, or with no end of line).
A recording in parts (`proxy --workers N` while it runs, or left by a supervisor killed
before it merged them: one file per worker) reads as one from the name of part 0, the
file the user named: its parts are found and merged by time (`parts.py`).
"""

from __future__ import annotations

import itertools
import json
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from k8s_wiretap.capture import parts
from k8s_wiretap.capture.assemble import Assembler
from k8s_wiretap.capture.exchange import EtcdChange, Exchange
from k8s_wiretap.capture.records import FORMAT, VERSION, cut_of
from k8s_wiretap.errors import WiretapError

__all__ = ["Recording", "RecordingError", "file_records", "iter_records", "load", "loads"]

GZIP_MAGIC = b"\x1f\x8b"


class RecordingError(WiretapError):
    """Not a recording this version can read."""


@dataclass
class Recording:
    header: dict[str, Any]
    exchanges: list[Exchange] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    etcd: list[EtcdChange] = field(default_factory=list)

    def by_id(self) -> dict[str, Exchange]:
        return {e.id: e for e in self.exchanges}


CHUNK = 1 << 20


def _lines(path: Path, warnings: list[str]) -> Iterator[bytes]:
    """The file's lines, read as a stream (gzip too): a recording may be larger than memory."""
    with path.open("rb", buffering=CHUNK) as handle:
        if handle.read(2) != GZIP_MAGIC:
            handle.seek(0)
            yield from handle
            return
        handle.seek(0)
        yield from _gunzipped_lines(handle, path, warnings)


def _gunzipped_lines(handle: BinaryIO, path: Path, warnings: list[str]) -> Iterator[bytes]:
    """Decompress what is there; a file cut short still yields the lines before the cut."""
    decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
    rest = b""
    while chunk := handle.read(CHUNK):
        try:
            data = rest + decompressor.decompress(chunk)
        except zlib.error as error:
            raise RecordingError(f"{path}: corrupt gzip data ({error})") from error
        *complete, rest = data.split(b"\n")
        yield from complete
    if rest:
        yield rest
    if not decompressor.eof:
        warnings.append(f"{path}: gzip stream cut short")


INT64 = float(1 << 63)  # orjson reads a larger integer as a float; Python's json does not


def loads(line: bytes) -> Any:
    """A line's JSON value, exactly as `json.loads` reads it, mostly at orjson's speed:
    what orjson refuses (lone surrogates, NaN, a byte-order mark...) or rounds (an integer
    beyond 64 bits) is read again by `json`. ValueError if it is not JSON."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)
    if _LONG_RUN not in line.translate(_DIGITS_AS_ZERO):
        return value  # no integer of 19 digits or more: none orjson could have rounded
    rounded = _rounded(value.values() if type(value) is dict else (value,))
    return json.loads(line) if rounded else value


# A run of 19 digits may be an integer past 64 bits: found as a run of "0"s once every digit
# is one (a copy at C speed, a fifth of a walk over the record's values), as
# `decode.proto_scalars.no_long_digit_run` finds it in a body.
_DIGITS_AS_ZERO = bytes.maketrans(b"0123456789", b"0" * 10)
_LONG_RUN = b"0" * 19


def _rounded(items: Iterable[Any]) -> bool:
    """Whether `items` (a JSON value's values) hold a float as large as an integer orjson
    would not keep exact. A loop, not recursion per item: it runs for every record."""
    for item in items:
        kind = type(item)
        if kind is str or kind is int:
            continue
        if kind is float:
            if not -INT64 < item < INT64:
                return True
        elif kind is dict:
            if _rounded(item.values()):
                return True
        elif kind is list:
            if len(item) == 2 and type(item[0]) is str and type(item[1]) is str:
                continue  # a header: a record holds a dozen, and a call each was 1%
            if _rounded(item):
                return True
    return False


def _parse(path: Path, number: int, line: bytes, last: bool, warnings: list[str]) -> Any:
    try:
        record = loads(line)
    except ValueError:
        if last:
            warnings.append(f"{path}: a cut recording: its last line is cut short (skipped)")
        else:
            warnings.append(f"{path}: skipped line {number}: not a complete record")
        return None
    if isinstance(record, dict) and "record" in record:
        return record
    warnings.append(f"{path}: skipped line {number}: not a record")
    return None


def iter_records(path: Path | str, warnings: list[str]) -> Iterator[dict[str, Any]]:
    """The records of a recording as they are read, header first; lines that are not
    records are skipped and said in `warnings`. RecordingError if it is not a recording.
    A recording in parts yields its parts' records merged by time, under part 0's header."""
    path = Path(path)
    records = file_records(path, warnings)
    header = next(records)
    yield header
    others = parts.siblings(path, header)
    if not others:
        yield from records
        return
    rest = [itertools.islice(file_records(other, warnings), 1, None) for other in others]
    yield from parts.merge([records, *rest])


def file_records(path: Path | str, warnings: list[str]) -> Iterator[dict[str, Any]]:
    """The records of one recording file (one part of a recording in parts), header first;
    lines that are not records are skipped and said in `warnings`. RecordingError if it is
    not a recording."""
    path = Path(path)
    pending: tuple[int, bytes] | None = None
    checked = False
    try:
        for number, line in enumerate(_lines(path, warnings), 1):
            if not line or line.isspace():
                continue
            if pending is None and not checked and not _looks_like_header(line):
                # a file of another kind, even one that quotes a header further down
                raise RecordingError(f"{path}: not a k8s-wiretap recording (no header line)")
            if pending is not None:
                record = _parse(path, *pending, False, warnings)
                if record is not None:
                    checked = checked or check_header(path, record)
                    yield record
            pending = (number, line)
    except OSError as error:
        raise RecordingError(f"cannot read {path}: {error.strerror}") from error
    if pending is not None:
        record = _parse(path, *pending, True, warnings)
        if record is not None:
            checked = checked or check_header(path, record)
            cut = cut_of(record)  # the last record: a cut's note is always last
            if cut is None and not pending[1].endswith(b"\n") and not _gzipped(path):
                cut = "its last line has no end (it was being written)"
            if cut is not None:
                warnings.append(f"{path}: a cut recording: {cut}")
            yield record
    if not checked:
        raise RecordingError(f"{path}: not a k8s-wiretap recording (no header line)")


def _gzipped(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(2) == GZIP_MAGIC
    except OSError:
        return False


def _looks_like_header(line: bytes) -> bool:
    """The first line of a recording is its header record (a cut-off one still starts so)."""
    return line.lstrip().startswith(b"{") and b'"header"' in line


def check_header(path: Path, record: dict[str, Any]) -> bool:
    """True if `record` is a header of this format and version; RecordingError if not."""
    if record.get("record") != "header":
        raise RecordingError(f"{path}: not a k8s-wiretap recording (no header line)")
    if record.get("format") != FORMAT or record.get("version") != VERSION:
        raise RecordingError(
            f"{path}: {record.get('format')} version {record.get('version')} is not "
            f"{FORMAT} version {VERSION}"
        )
    return True


def load(path: Path | str) -> Recording:
    """A whole recording, assembled into exchanges as it is read."""
    warnings: list[str] = []
    records = iter_records(path, warnings)
    header = next(records)
    assembler = Assembler()
    assembler.feed_all(records)
    return Recording(
        header, assembler.exchanges, assembler.notes, warnings + assembler.warnings, assembler.etcd
    )
