"""A whole file written at once (`whole_file`, `publish`): made under a temporary name
beside its target, 0600, and renamed to it only once complete; an error in between leaves
the target as it was and no temporary; without `overwrite` nothing at the target (a file
or a symlink that appeared meanwhile) is ever replaced; `append_record` ends a cut line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from k8s_wiretap.capture.outputs import append_record, publish, temporary_beside, whole_file


def test_the_target_appears_only_once_whole_and_0600(tmp_path: Path) -> None:
    path = tmp_path / "out.har"
    with whole_file(path, overwrite=False) as out:
        out.write(b"half")
        assert not path.exists()
        [temporary] = tmp_path.iterdir()
        assert temporary.name.startswith(".out.har.") and temporary.stat().st_mode & 0o777 == 0o600
        out.write(b" and whole")
    assert path.read_bytes() == b"half and whole"
    assert path.stat().st_mode & 0o777 == 0o600
    assert list(tmp_path.iterdir()) == [path]


def test_an_error_leaves_the_target_as_it_was_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "out.har"
    path.write_bytes(b"mine")
    with pytest.raises(OSError, match="No space"), whole_file(path, overwrite=True) as out:
        out.write(b"new")
        raise OSError(28, "No space left on device")
    assert path.read_bytes() == b"mine"
    assert list(tmp_path.iterdir()) == [path]


def test_without_overwrite_what_appeared_meanwhile_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "out.har"
    with pytest.raises(FileExistsError), whole_file(path, overwrite=False) as out:
        out.write(b"new")
        path.symlink_to(tmp_path / "elsewhere")  # someone else's, made while writing
    assert path.is_symlink() and not (tmp_path / "elsewhere").exists()
    assert list(tmp_path.iterdir()) == [path]


def test_overwrite_replaces_a_symlink_never_what_it_points_to(tmp_path: Path) -> None:
    target, path = tmp_path / "target", tmp_path / "out.har"
    target.write_bytes(b"not yours")
    path.symlink_to(target)
    temporary = temporary_beside(path)
    temporary.write_bytes(b"new")
    publish(temporary, path, overwrite=True)
    assert not path.is_symlink() and path.read_bytes() == b"new"
    assert target.read_bytes() == b"not yours"


def test_append_record_ends_a_line_cut_part_way(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    path.write_bytes(b'{"record":"header"}\n{"record":"req')
    append_record(path, {"record": "note", "message": "cut"})
    lines = path.read_bytes().split(b"\n")
    assert lines[1] == b'{"record":"req' and json.loads(lines[2])["message"] == "cut"
    append_record(path, {"record": "note", "message": "again"})  # a whole last line: kept
    assert len(path.read_bytes().split(b"\n")) == 5
