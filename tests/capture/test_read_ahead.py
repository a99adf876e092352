"""Records read by a second process are the records `iter_records` reads, warnings and
errors included, in order; a consumer that stops early leaves no reader behind."""

from __future__ import annotations

import gzip
import multiprocessing
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.capture import read_ahead as module
from k8s_wiretap.capture.read_ahead import read_ahead
from k8s_wiretap.capture.reader import RecordingError, iter_records
from tests.recorded import STORY, STORY_1_20


def both(path: Path) -> tuple[tuple[list[Any], list[str]], tuple[list[Any], list[str]]]:
    here: list[str] = []
    there: list[str] = []
    return (list(iter_records(path, here)), here), (list(read_ahead(path, there)), there)


@pytest.mark.parametrize("path", [STORY, STORY_1_20], ids=["1.37", "1.20"])
def test_the_committed_recordings_read_alike(path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(module, "BATCH", 100)  # many batches, the last one short
    (records, warnings), (ahead, ahead_warnings) = both(path)
    assert ahead == records and ahead_warnings == warnings
    assert len(ahead) > 1000


def test_a_cut_short_gzip_recording_reads_alike(tmp_path: Path) -> None:
    data = STORY.read_bytes()
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(data[: len(data) // 2])
    (records, warnings), (ahead, ahead_warnings) = both(cut)
    assert ahead == records and ahead_warnings == warnings
    assert any("gzip stream cut short" in w for w in warnings)


def test_corrupt_gzip_data_gives_the_records_before_and_the_same_error(tmp_path: Path) -> None:
    plain = gzip.decompress(STORY.read_bytes())
    packed = bytearray(gzip.compress(plain))
    middle = len(packed) // 2
    packed[middle : middle + 64] = bytes(b ^ 0xFF for b in packed[middle : middle + 64])
    path = tmp_path / "corrupt.jsonl.gz"
    path.write_bytes(bytes(packed))
    results = []
    for reader in (iter_records, read_ahead):
        got: list[Any] = []
        with pytest.raises(RecordingError) as raised:
            got.extend(reader(path, []))
        results.append((len(got), str(raised.value)))
    assert results[0] == results[1]
    assert "corrupt gzip data" in results[0][1]


def test_not_a_recording_is_the_same_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("these are my notes\n")
    with pytest.raises(RecordingError, match="not a k8s-wiretap recording"):
        list(read_ahead(path, []))


def test_stopping_early_ends_the_reader() -> None:
    records = read_ahead(STORY, [])
    assert next(records)["record"] == "header"
    records.close()  # the consumer has what it wanted
    assert multiprocessing.active_children() == []
