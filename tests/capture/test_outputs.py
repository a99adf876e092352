"""A recording written over an existing file (`--overwrite`) is a new file of its own,
0600, whatever the old one's mode was; a symlink at the output is removed, never followed
into the file it points to. A line a full disk cut is never glued to the next."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from k8s_wiretap.capture.outputs import FileOutput
from k8s_wiretap.capture.reader import load
from tests.capture.test_recorder_failures import free_space, small_filesystem


def test_an_overwritten_recording_is_0600(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("old\n")
    path.chmod(0o644)
    FileOutput(path, redacted=True, max_body=100, overwrite=True).close()
    assert path.stat().st_mode & 0o777 == 0o600
    assert load(path).header["redacted"] is True


def test_a_symlink_output_is_replaced_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "target.txt"
    target.write_text("not yours\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    FileOutput(link, redacted=True, max_body=100, overwrite=True).close()
    assert target.read_text() == "not yours\n"
    assert not link.is_symlink() and link.stat().st_mode & 0o777 == 0o600
    assert load(link).header["redacted"] is True


def test_a_line_a_full_disk_cut_is_never_glued_to_the_next(tmp_path: Path) -> None:
    """A real 1 MiB filesystem: a flush cut by the full disk leaves a line cut short and
    counts what it lost; once there is room, the next flush starts a line of its own, so
    every later record reads. `rewind` takes the file back to a `position`."""
    with small_filesystem(tmp_path / "disk") as full:
        filler, path = tmp_path / "disk" / "filler", tmp_path / "disk" / "recording.jsonl"
        filler.write_bytes(os.urandom(300 * 1024))
        output = FileOutput(path, redacted=False, max_body=1024)
        record = {"record": "note", "time": 1e9, "level": "info", "message": "x" * 50_000}
        with pytest.raises(OSError, match=full):
            for _ in range(40):
                output.write(record)
                output.flush()
        assert output.lost == 1 and not path.read_bytes().endswith(b"\n")
        filler.unlink()
        free_space(full)
        position = output.position
        output.write({**record, "message": "gone"})
        output.flush()
        output.rewind(position)
        output.write({**record, "message": "after"})
        output.close()
        *whole, cut, after, end = path.read_bytes().split(b"\n")
        assert [json.loads(line)["message"] for line in (*whole[1:], after)] == [
            *["x" * 50_000] * (len(whole) - 1),
            "after",
        ]
        assert cut and end == b""
        with pytest.raises(ValueError):
            json.loads(cut)  # a line by itself, cut short
