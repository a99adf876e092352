"""Read a recording back into exchanges.

A recording being written (or cut short by a crash) may end in a partial line: it is
skipped with a warning, as is any other line that is not a record; the rest still loads.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from k8s_wiretap.capture.exchange import Body, Exchange, StreamEvent
from k8s_wiretap.capture.format import FORMAT, VERSION
from k8s_wiretap.errors import WiretapError

__all__ = ["Recording", "RecordingError", "load"]

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


def load(path: Path | str) -> Recording:
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
    recording = Recording(header, warnings=warnings)
    open_exchanges: dict[str, Exchange] = {}
    for record in records[1:]:
        _apply(recording, open_exchanges, record)
    return recording


def _apply(recording: Recording, exchanges: dict[str, Exchange], record: dict[str, Any]) -> None:
    kind = record["record"]
    if kind == "note":
        recording.notes.append(record)
        return
    if kind == "request":
        exchange = Exchange(record["id"], record)
        exchanges[record["id"]] = exchange
        recording.exchanges.append(exchange)
        return
    exchange_or_none = exchanges.get(record.get("id", ""))
    if exchange_or_none is None:
        recording.warnings.append(f"{kind} record for unknown exchange {record.get('id')}")
        return
    if kind == "response":
        exchange_or_none.response = record
    elif kind == "event":
        exchange_or_none.events.append(_event(record))
    elif kind == "end":
        exchange_or_none.end = record


def _event(record: dict[str, Any]) -> StreamEvent:
    body = Body.from_record(record["data"]) or Body(b"", 0)
    return StreamEvent(
        int(record["seq"]),
        float(record["time"]),
        str(record["kind"]),
        body,
        bool(record.get("from_client")),
        bool(record.get("incomplete")),
    )
