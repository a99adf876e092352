"""The tests' readers of the lab's live audit log (tests/importers/test_audit.py
`whole_lines`, `log_lines`, `events`; test_join.py cuts the log with them): the API server
may be writing a line as they read, so they take whole lines only: from the first line that
starts at or after the offset, to the last newline."""

from __future__ import annotations

from pathlib import Path

from tests.importers.test_audit import events, log_lines, whole_lines

FIRST, SECOND, THIRD = b'{"n": 1}\n', b'{"n": 2, "s": "\xc3\xa9"}\n', b'{"n": 3}\n'
BEING_WRITTEN = b'{"n": 4, "s": "\xc3'  # cut inside a line, inside a character


def _log(tmp_path: Path) -> Path:
    log = tmp_path / "audit.log"
    log.write_bytes(FIRST + SECOND + THIRD + BEING_WRITTEN)
    return log


def test_a_line_being_written_is_left_out(tmp_path: Path) -> None:
    log = _log(tmp_path)
    assert events(log) == [{"n": 1}, {"n": 2, "s": "é"}, {"n": 3}]
    assert log_lines(log) == ['{"n": 1}', '{"n": 2, "s": "é"}', '{"n": 3}']
    assert whole_lines(log) == FIRST + SECOND + THIRD


def test_an_offset_inside_a_line_starts_at_the_next(tmp_path: Path) -> None:
    log = _log(tmp_path)
    assert whole_lines(log, len(FIRST)) == SECOND + THIRD  # right after a newline
    assert whole_lines(log, len(FIRST) + 1) == THIRD  # inside the second line
    assert whole_lines(log, len(FIRST) - 1) == SECOND + THIRD  # on the first's newline
    assert whole_lines(log, len(FIRST + SECOND + THIRD) + 2) == b""  # inside the last
