"""`run`'s summary lists what the command sent: the proxy's own `GET /version` (its question
at start, which release the recording is of) is said as the wiretap's, not listed first
as if the command had sent it."""

from __future__ import annotations

from pathlib import Path

import pytest

from k8s_wiretap.commands.proxy import _summary
from k8s_wiretap.proxy.server import VERSION_AGENT
from k8s_wiretap.views.lines import exchange_line
from tests.recorded import STORY, story


def test_the_wiretaps_own_version_question_is_not_the_commands(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    exchanges = story().exchanges
    own = [e for e in exchanges if e.user_agent == VERSION_AGENT]
    assert own == [exchanges[0]]  # what the proxy asks first, once
    _summary(STORY, tmp_path / "kept.jsonl")
    said = capsys.readouterr().err.splitlines()
    theirs = len(exchanges) - len(own)
    assert said[1] == (
        f"k8s-wiretap: {theirs:,} exchanges of the command captured (and the wiretap's own "
        f"GET /version); recording: {tmp_path / 'kept.jsonl'}"
    )
    listed = said[2:]
    assert len(listed) == theirs
    assert not any(exchange_line(e) in listed for e in own)
    assert listed[0] == exchange_line(exchanges[1])  # the first the command sent
