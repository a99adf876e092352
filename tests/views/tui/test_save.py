"""Saving the recording, or some of its exchanges, as a recording of their own."""

from __future__ import annotations

import gzip
import json
import os
import stat
from pathlib import Path

import pytest

from k8s_wiretap.capture.reader import load
from k8s_wiretap.views.tui import save as save_module
from k8s_wiretap.views.tui.listing.index import RecordingIndex
from k8s_wiretap.views.tui.save import SaveError, save
from tests.recorded import etcd_count, exchange_count
from tests.views.tui.recorded import STORY, indexed


def unwritable(tmp_path: Path) -> Path:
    """A folder this process cannot create a file in: a read-only one, or (root writes
    anywhere) sysfs's /sys/fs, where not even root can."""
    if os.geteuid() == 0:
        return Path("/sys/fs")
    folder = tmp_path / "read-only"
    folder.mkdir(mode=0o500)
    return folder


def test_the_whole_recording_reads_back_the_same(tmp_path: Path) -> None:
    index = indexed()
    path = tmp_path / "again.jsonl"
    saved = save(index, None, path)
    assert (saved.exchanges, saved.etcd) == (exchange_count(STORY), etcd_count(STORY))
    again = load(path)
    assert again.header == index.header
    assert [e.id for e in again.exchanges] == [r.id for r in index.rows]
    assert [e.status for e in again.exchanges] == [r.status for r in index.rows]
    assert len(again.etcd) == etcd_count(STORY)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_subset_keeps_its_etcd_records_and_the_version_exchange(tmp_path: Path) -> None:
    index = indexed()
    chosen = [n for n, r in enumerate(index.rows) if r.resource == "pods/status"]
    path = tmp_path / "statuses.jsonl.gz"
    saved = save(index, chosen, path)
    with gzip.open(path, "rt") as text:
        assert '"record":"header"' in text.readline()
    again = load(path)
    ids = {index.rows[n].id for n in chosen} | {index.rows[index.release or 0].id}
    assert {e.id for e in again.exchanges} == ids and saved.exchanges == len(ids)
    # the kubelet's status writes: etcd's record of each pod at the write's revision
    assert len(again.etcd) == len(chosen) == saved.etcd > 0
    assert all(change.key.startswith("/registry/pods/") for change in again.etcd)


def test_an_existing_file_is_kept_unless_asked(tmp_path: Path) -> None:
    index = indexed()
    path = tmp_path / "kept.jsonl"
    path.write_text("mine\n")
    with pytest.raises(SaveError, match=r"kept.jsonl exists \(:save! .* replaces it\)"):
        save(index, [0], path)
    assert path.read_text() == "mine\n"
    save(index, [0], path, force=True)
    assert [e.id for e in load(path).exchanges] == [index.rows[0].id]
    assert [p.name for p in tmp_path.iterdir()] == ["kept.jsonl"]  # no temporary left


def test_no_folder_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(SaveError, match=r"^cannot save: folder .* does not exist$"):
        save(indexed(), None, tmp_path / "no" / "file.jsonl")


def test_the_records_are_copied_as_the_original_has_them(tmp_path: Path) -> None:
    index = indexed()
    path = tmp_path / "copy.jsonl"
    save(index, None, path)
    with gzip.open(STORY, "rb") as original:
        lines = original.read().splitlines(keepends=True)
    again = path.read_bytes().splitlines(keepends=True)
    assert sorted(again[1:]) == sorted(lines[1:])  # every record, byte for byte


def test_a_save_says_how_far_it_has_got(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(save_module, "BATCH", 100)
    index = indexed()
    said: list[tuple[str, float]] = []
    path = tmp_path / "all.jsonl"
    save(index, None, path, progress=lambda *what: said.append(what))
    records = len(path.read_bytes().splitlines()) - 1  # 3,884, and the header
    assert {stage for stage, _ in said} == {"writing"}
    fractions = [done for _, done in said]
    assert fractions == sorted(fractions) and fractions[0] == 0 and fractions[-1] == 1.0
    assert len(said) == -(-records // 100) + 1  # 100 at a time, and done
    said.clear()
    save(index, [0, 1, 2], tmp_path / "some.jsonl", progress=lambda *what: said.append(what))
    assert said[0] == ("finding their etcd records", 0.0) and said[-1] == ("writing", 1.0)


@pytest.mark.parametrize("force", [False, True])
def test_a_save_stopped_leaves_no_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, force: bool
) -> None:
    monkeypatch.setattr(save_module, "BATCH", 100)
    asked: list[int] = []

    def stopped() -> bool:
        asked.append(1)
        return len(asked) > 3

    path = tmp_path / "stopped.jsonl.gz"
    with pytest.raises(SaveError, match=r"^save to .*stopped.jsonl.gz stopped$"):
        save(indexed(), None, path, force=force, stopped=stopped)
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_folder_is_one_line(tmp_path: Path) -> None:
    folder = unwritable(tmp_path)
    for force in (False, True):
        with pytest.raises(SaveError) as raised:
            save(indexed(), None, folder / "out.jsonl", force=force)
        assert str(raised.value) == f"cannot save to {folder / 'out.jsonl'}: Permission denied"


def test_the_notes_are_copied_too(tmp_path: Path) -> None:
    """A recording a signal stopped ends with a note saying so (capture/outputs.py): a save,
    of all of it or of some rows, keeps it."""
    with gzip.open(STORY, "rb") as original:
        lines = original.read().splitlines(keepends=True)
    note = {"record": "note", "time": 1e10, "level": "info", "stopped": "SIGTERM"}
    stopped = json.dumps(note | {"message": "recording stopped by SIGTERM"}).encode() + b"\n"
    noted = tmp_path / "noted.jsonl"
    noted.write_bytes(b"".join([*lines, stopped]))
    index = RecordingIndex(noted)
    index.scan()
    for positions, name in ((None, "all.jsonl"), ([0], "one.jsonl")):
        save(index, positions, tmp_path / name)
        assert (tmp_path / name).read_bytes().endswith(stopped)
    index.close()
