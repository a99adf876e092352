"""The Explain tab says its facts in words: a LIST's etcd prefix is "a read of the keys under
this prefix", never Python's `read: True`."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from k8s_wiretap.views.tui import ReplayApp
from tests.recorded import story
from tests.views.test_counts import recording_of
from tests.views.tui.pilot import drive, tab_text


def test_a_list_says_it_reads_the_keys_under_its_prefix(tmp_path: Path) -> None:
    listed = next(e for e in story().exchanges if e.info.verb == "list")

    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        said = tab_text(app, "explain")
        assert f"/registry/{listed.info.resource}" in said, said
        assert "a read of the keys under this prefix" in said
        assert "True" not in said and "False" not in said

    drive(script, recording_of(listed, tmp_path / "list.jsonl"))
