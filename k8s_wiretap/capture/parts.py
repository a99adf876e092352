"""A recording in parts: one file per proxy worker process while the proxy runs, one file
once it stops.

`proxy --workers N` runs N proxy processes on one listener (`proxy/workers.py`); each
writes a file of its own, so that no two processes write one file. The user names one
path, `--record rec.jsonl`:

- while the proxy runs, `rec.jsonl` is part 0 (the first worker's) and
  `rec.jsonl.part-1` … `rec.jsonl.part-N-1` the others, beside it; a worker that is
  restarted after a crash writes the next free number (`rec.jsonl.part-N`, …), never a
  file another process wrote.
- Every part's header has `recording` (an id shared by all the parts of one recording)
  and `part` (its number); part 0's header also has `workers` (N).
- A part is a complete recording of its own: one client connection stays in one worker,
  so every record of an exchange is in one part, and exchange ids are unique across
  workers (mitmproxy's flow ids are UUIDs).
- When the proxy stops, `join` merges the parts into `rec.jsonl` itself (its header
  without the part fields, then every part's records, each line as it was written, in
  time order) and removes the other parts: the file the user named holds the whole
  recording, for any tool that reads it (grep, jq, a script).

A recording still in parts (the proxy runs, or its supervisor was killed before it
merged them) reads as one all the same: reading `rec.jsonl` finds its parts
(`siblings`: the files `rec.jsonl.part-K` whose header names the same recording and part
K) and merges their records by time (`merge`), the first part's header first. Within one
part the records are in the order they were written, which is time order but for a few
milliseconds between the recorder's bursts; both merges keep each part's own order, so
every exchange reads as it was recorded.
"""

from __future__ import annotations

import contextlib
import heapq
import json
import re
import secrets
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from k8s_wiretap.capture.outputs import whole_file

__all__ = [
    "PART_FIELDS",
    "all_parts",
    "join",
    "merge",
    "new_recording_id",
    "next_part",
    "part_header",
    "part_number",
    "part_path",
    "siblings",
    "single",
]

PART_FIELDS = ("recording", "part", "workers")  # what the header of a part adds
HEADER_LIMIT = 1 << 16  # a header line is small: read no further looking for one
PART_SUFFIX = ".part-"  # rec.jsonl.part-1: part 1 of rec.jsonl
CHUNK = 1 << 20


def new_recording_id() -> str:
    return secrets.token_hex(8)


def part_header(recording: str, part: int, workers: int | None = None) -> dict[str, Any]:
    """The fields a part's header record adds (`format.header_record(**...)`)."""
    fields: dict[str, Any] = {"recording": recording, "part": part}
    if workers is not None:
        fields["workers"] = workers
    return fields


def part_path(path: Path, part: int) -> Path:
    """The file of part `part` of the recording the user named `path`."""
    return path if part == 0 else path.with_name(f"{path.name}{PART_SUFFIX}{part}")


def part_number(path: Path) -> int:
    """The number K of the part file `NAME.part-K`."""
    return int(path.name.rsplit(PART_SUFFIX, 1)[1])


def _numbered(path: Path) -> list[tuple[int, Path]]:
    """The files beside `path` named `path`.part-K (K = 1, 2, …), in the order of K."""
    pattern = re.compile(re.escape(path.name + PART_SUFFIX) + r"([1-9][0-9]*)")
    try:
        found = [(m, p) for p in path.parent.iterdir() if (m := pattern.fullmatch(p.name))]
    except OSError:
        return []
    return sorted((int(m.group(1)), p) for m, p in found)


def next_part(path: Path) -> int:
    """The first part number after every `path`.part-K file there is."""
    numbered = _numbered(path)
    return numbered[-1][0] + 1 if numbered else 1


def _header(path: Path) -> dict[str, Any] | None:
    """The header record on `path`'s first line (None if it has none, or is unreadable)."""
    try:
        with path.open("rb") as handle:
            line = handle.readline(HEADER_LIMIT)
        record = json.loads(line)
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("record") == "header" else None


def siblings(path: Path, header: Mapping[str, Any]) -> list[Path]:
    """The other parts of the recording whose part 0 is `path` (with `header`): none for a
    recording in one file (a merged one too)."""
    recording = header.get("recording")
    if recording is None or header.get("part") != 0:
        return []
    found = []
    for number, candidate in _numbered(path):
        other = _header(candidate)
        if other is not None and (other.get("recording"), other.get("part")) == (
            recording,
            number,
        ):
            found.append(candidate)
    return found


def all_parts(path: Path) -> list[Path]:
    """`path` and, for part 0 of a recording in parts, its other parts."""
    header = _header(path)
    return [path, *(siblings(path, header) if header is not None else [])]


def single(header: Mapping[str, Any]) -> dict[str, Any]:
    """`header` as the header of one merged file (no part fields)."""
    return {key: value for key, value in header.items() if key not in PART_FIELDS}


def _timed(records: Iterable[dict[str, Any]], part: int) -> Iterator[tuple[float, int, Any]]:
    """(time, part, record): a record without a time takes its predecessor's, so that each
    part is one ordered stream for the merge; ties go to the lower part."""
    last = 0.0
    for record in records:
        stamp = record.get("time")
        if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
            last = max(last, float(stamp))
        yield last, part, _Record(record)


class _Record:
    """A record in the merge's heap: never compared (time and part decide)."""

    __slots__ = ("record",)

    def __init__(self, record: dict[str, Any]) -> None:
        self.record = record

    def __lt__(self, other: _Record) -> bool:
        return False


def merge(parts: list[Iterable[dict[str, Any]]]) -> Iterator[dict[str, Any]]:
    """The records of `parts` (each without its header) as one stream, by time."""
    if len(parts) == 1:
        yield from parts[0]
        return
    timed = [_timed(records, number) for number, records in enumerate(parts)]
    for _time, _part, item in heapq.merge(*timed):
        yield item.record


# -- one file once the proxy stops --------------------------------------------------------
def join(path: Path, warnings: list[str]) -> list[Path]:
    """Merge the parts of the recording whose part 0 is `path` into `path` itself, and
    remove them; the parts merged into it (none if `path` is not part 0 of a recording in
    parts: nothing is done).

    The merged file is written beside `path` and takes its place only once complete
    (`outputs.whole_file`): an error, or a signal's exception, leaves every part as it
    was, still read as one by the readers. Its header is part 0's without the part fields
    (`single`); then every record of every part, each line byte for byte as its worker
    wrote it, by time. A line that is not a record (cut short by a worker's death) is left
    out and said in `warnings`. Only files whose header names this recording are merged
    and removed: a file beside it from another run stays."""
    header = _header(path)
    if header is None or header.get("recording") is None or header.get("part") != 0:
        return []
    others = siblings(path, header)
    with whole_file(path, overwrite=True) as out:
        out.write(json.dumps(single(header), separators=(",", ":")).encode() + b"\n")
        numbered = [path, *others]
        timed = [_part_lines(part, number, warnings) for number, part in enumerate(numbered)]
        for _time, _part, _line, data in heapq.merge(*timed):
            out.write(data)
    for other in others:
        with contextlib.suppress(FileNotFoundError):
            other.unlink()
    return others


def _part_lines(
    path: Path, part: int, warnings: list[str]
) -> Iterator[tuple[float, int, int, bytes]]:
    """(time, part, line number, line) for each record of the part file `path` after its
    header, in its own order (a record without a time takes its predecessor's)."""
    last = 0.0
    with path.open("rb", buffering=CHUNK) as handle:
        handle.readline()  # its header: the merged file has one of its own
        for number, line in enumerate(handle, 2):
            if not line.strip():
                continue
            record = _record(line)
            if record is None:
                warnings.append(f"{path}: left out line {number}: not a complete record")
                continue
            stamp = record.get("time")
            if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
                last = max(last, float(stamp))
            yield last, part, number, line if line.endswith(b"\n") else line + b"\n"


def _record(line: bytes) -> dict[str, Any] | None:
    """The record on `line`, or None if it holds none."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        try:
            value = json.loads(line)  # what orjson refuses and Python's json reads
        except ValueError:
            return None
    return value if isinstance(value, dict) and "record" in value else None
