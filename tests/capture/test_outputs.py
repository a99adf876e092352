"""A recording written over an existing file (`--overwrite`) is a new file of its own,
0600, whatever the old one's mode was; a symlink at the output is removed, never followed
into the file it points to."""

from __future__ import annotations

from pathlib import Path

from k8s_wiretap.capture.outputs import FileOutput
from k8s_wiretap.capture.reader import load


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
