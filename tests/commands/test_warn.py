"""The one way a command warns: one line on stderr, its control characters escaped."""

from __future__ import annotations

from pathlib import Path

import pytest

import k8s_wiretap
from k8s_wiretap.commands.warn import warn, warn_all


def test_a_warning_is_one_line_with_nothing_a_terminal_obeys(
    capsys: pytest.CaptureFixture[str],
) -> None:
    warn("line 3 of r.jsonl: not JSON\n\x1b]0;PWNED\x07\u202e")
    said = capsys.readouterr()
    assert said.out == ""
    assert said.err == (
        "k8s-wiretap: warning: line 3 of r.jsonl: not JSON\\n\\x1b]0;PWNED\\x07\\u202e\n"
    )


def test_each_warning_is_said_once_in_order(capsys: pytest.CaptureFixture[str]) -> None:
    warn_all(["b", "a", "b", "c"])
    assert capsys.readouterr().err.splitlines() == [
        "k8s-wiretap: warning: b",
        "k8s-wiretap: warning: a",
        "k8s-wiretap: warning: c",
    ]


def test_no_module_prints_a_warning_by_hand() -> None:
    package = Path(k8s_wiretap.__file__).parent
    by_hand = [
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if "k8s-wiretap: warning" in path.read_text() and path.name != "warn.py"
    ]
    assert by_hand == []
