"""Saving the recording, or some of its exchanges, as a recording of their own."""

from __future__ import annotations

import gzip
import stat
from pathlib import Path

import pytest

from k8s_wiretap.capture.reader import load
from k8s_wiretap.views.tui.save import SaveError, save
from tests.views.tui.recorded import indexed


def test_the_whole_recording_reads_back_the_same(tmp_path: Path) -> None:
    index = indexed()
    path = tmp_path / "again.jsonl"
    saved = save(index, None, path)
    assert (saved.exchanges, saved.etcd) == (882, 274)
    again = load(path)
    assert again.header == index.header
    assert [e.id for e in again.exchanges] == [r.id for r in index.rows]
    assert [e.status for e in again.exchanges] == [r.status for r in index.rows]
    assert len(again.etcd) == 274
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
