"""Read a recording back into exchanges (assembled by `assemble.Assembler`).

A recording being written (or cut short by a crash) may end in a partial line: it is
skipped with a warning, as is any other line that is not a record; the rest still loads.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from k8s_wiretap.capture.assemble import Assembler
from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.format import FORMAT, VERSION
from k8s_wiretap.errors import WiretapError

__all__ = ["Recording", "RecordingError", "load", "read_records"]

GZIP_MAGIC = b"\x1f\x8b"


class RecordingError(WiretapError):
    """Not a recording this version can read."""


@dataclass
class Recording:
    header: dict[str, Any]
    exchanges: list[Exchange] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def by_id(self) -> dict[str, Exchange]:
        return {e.id: e for e in self.exchanges}


def _records(path: Path, warnings: list[str]) -> list[dict[str, Any]]:
    records = []
    with path.open("rb") as handle:
        data = handle.read()
    if data[:2] == GZIP_MAGIC:  # recordings kept compressed, e.g. recordings/*.jsonl.gz
        data = _gunzip(data, path, warnings)
    lines = data.split(b"\n")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            last = number == len(lines) or (number == len(lines) - 1 and not lines[-1])
            where = "last line (cut short)" if last else f"line {number}"
            warnings.append(f"{path}: skipped {where}: not a complete record")
            continue
        if isinstance(record, dict) and "record" in record:
            records.append(record)
        else:
            warnings.append(f"{path}: skipped line {number}: not a record")
    return records


def _gunzip(data: bytes, path: Path, warnings: list[str]) -> bytes:
    """Decompress what is there; a file cut short still yields the lines before the cut."""
    decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = decompressor.decompress(data)
    except zlib.error as error:
        raise RecordingError(f"{path}: corrupt gzip data ({error})") from error
    if not decompressor.eof:
        warnings.append(f"{path}: gzip stream cut short")
    return out


def read_records(path: Path | str) -> tuple[list[dict[str, Any]], list[str]]:
    """Every record of a recording file, header first, and warnings about skipped lines."""
    path = Path(path)
    try:
        warnings: list[str] = []
        records = _records(path, warnings)
    except OSError as error:
        raise RecordingError(f"cannot read {path}: {error.strerror}") from error
    if not records or records[0].get("record") != "header":
        raise RecordingError(f"{path}: not a k8s-wiretap recording (no header line)")
    header = records[0]
    if header.get("format") != FORMAT or header.get("version") != VERSION:
        raise RecordingError(
            f"{path}: {header.get('format')} version {header.get('version')} is not "
            f"{FORMAT} version {VERSION}"
        )
    return records, warnings


def load(path: Path | str) -> Recording:
    """A whole recording, assembled into exchanges."""
    records, warnings = read_records(path)
    header = records[0]
    assembler = Assembler()
    assembler.feed_all(records[1:])
    return Recording(header, assembler.exchanges, assembler.notes, warnings + assembler.warnings)
