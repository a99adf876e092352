"""Audit logs read in bounded memory: a line longer than 64 MiB (`gke.MAX_LINE`) is skipped
with its line number, never held, and the next line is read (plain and gzipped); gcloud's
JSON array is read an item at a time (its first item comes before the file ends), each item
exactly as the whole array would give it (chunk boundaries inside numbers and multi-byte
characters, lines after the `]`), and an item longer than the limit ends the array, said."""

from __future__ import annotations

import gzip
import io
import json
import random
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.importers import gke
from tests.conftest import cli
from tests.importers.test_audit_input import EVENT

TOO_LONG = gke.MAX_LINE + 10


def _line(audit_id: str) -> bytes:
    return json.dumps({**EVENT, "auditID": audit_id}).encode() + b"\n"


def _imported(log: Path, tmp_path: Path) -> tuple[list[str], list[str]]:
    """`import audit LOG`: what it said, and the ids of the requests it wrote."""
    out = tmp_path / "rec.jsonl"
    result = cli("import", "audit", str(log), "-o", str(out))
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in out.read_bytes().splitlines()]
    return result.stderr.strip().splitlines(), [
        r["id"] for r in records if r["record"] == "request"
    ]


@pytest.mark.parametrize("zipped", [False, True], ids=["plain", "gzip"])
def test_a_line_longer_than_the_limit_is_skipped_and_the_next_read(
    zipped: bool, tmp_path: Path
) -> None:
    data = _line("a") + b'{"pad": "' + b"x" * TOO_LONG + b'"}\n' + _line("c")
    log = tmp_path / "audit.log"
    log.write_bytes(gzip.compress(data, compresslevel=1) if zipped else data)
    said, ids = _imported(log, tmp_path)
    assert said == [
        f"{log}: audit.k8s.io Events (JSON lines), 2 events",
        f"  1 skipped, first at line 2: the line is {TOO_LONG + 11:,} bytes, longer than "
        f"{gke.MAX_LINE:,}: not read",
        f"{tmp_path / 'rec.jsonl'}: 2 exchanges from 2 audit events; 1 unreadable line skipped",
    ]
    assert ids == ["a", "c"]


def test_an_array_item_longer_than_the_limit_ends_the_array_said(tmp_path: Path) -> None:
    data = b"[\n" + _line("a") + b',\n{"pad": "' + b"x" * TOO_LONG + b'"},\n' + _line("c") + b"]\n"
    log = tmp_path / "gke.json"
    log.write_bytes(data)
    said, ids = _imported(log, tmp_path)
    assert said[1] == (
        f"  1 skipped, first at line 4: an item of the JSON array is longer than "
        f"{gke.MAX_LINE:,} characters; the rest unread"
    )
    assert ids == ["a"]


def test_an_arrays_first_item_comes_before_the_file_is_read(tmp_path: Path) -> None:
    """Of a 16 MiB array, the first item is given with a chunk or two read, not the file."""
    log = tmp_path / "gke.json"
    item = json.dumps({"pad": "x" * 1000})
    log.write_text("[\n" + ",\n".join([item] * (16 * 1024)) + "\n]\n")
    with log.open("rb") as stream:
        first = next(gke.numbered(stream))
        assert first == (2, item.encode())
        assert stream.tell() <= 2 * gke.CHUNK < log.stat().st_size


def _items(rng: random.Random, size: int) -> list[Any]:
    """Items as gcloud's could be and beyond: objects, long strings of multi-byte
    characters, numbers (a chunk may end inside any of them)."""
    items: list[Any] = []
    total = 0
    while total < size:
        kind = rng.randrange(3)
        if kind == 0:
            item: Any = {"n": len(items), "s": "é😀x" * rng.randrange(1, 2000)}
        elif kind == 1:
            item = "ü" * rng.randrange(1, 70_000)
        else:
            item = rng.randrange(10**30)
        items.append(item)
        total += len(json.dumps(item, ensure_ascii=False).encode())
    return items


@pytest.mark.parametrize("seed", range(4))
def test_an_array_read_in_chunks_gives_what_the_whole_array_does(seed: int) -> None:
    rng = random.Random(seed)
    items = _items(rng, 3 * gke.CHUNK)
    text = "[\n" + ",\n".join(json.dumps(item, ensure_ascii=False) for item in items) + "\n]\n"
    text += '{"after": 1}\n\n{"after": 2}'
    read = gke.numbered(io.BufferedReader(io.BytesIO(text.encode())))
    got = [(n, value) for n, value in read if not isinstance(value, bytes) or value.strip()]
    assert all(isinstance(value, bytes) for _, value in got)
    values = [json.loads(value) for _, value in got]  # type: ignore[arg-type]
    assert values == [*items, {"after": 1}, {"after": 2}]
    count = len(items)
    assert [n for n, _ in got] == [*range(2, count + 2), count + 3, count + 5]
