"""What is made from the committed recordings (scripts/make_derived.py, `make snapshots`)
is what they make now: recordings/facts.json, and the docs' example outputs. The pictures
are checked in tests/views/test_pictures.py, the TUI's snapshots by their own tests."""

from __future__ import annotations

import json

import pytest

from tests.conftest import load_script
from tests.recorded import RECORDINGS, etcd_count, exchange_count

DERIVED = load_script("make_derived")


def test_the_facts_are_those_of_the_committed_recordings() -> None:
    committed = json.loads((RECORDINGS / "facts.json").read_text())
    assert committed == json.loads(DERIVED.facts_text()), "recordings/facts.json: make snapshots"


def test_the_facts_count_as_the_tests_count() -> None:
    """Two counts, made twice: by the script, and by tests/recorded.py."""
    committed = json.loads((RECORDINGS / "facts.json").read_text())
    assert set(committed) == {p.name for p in RECORDINGS.glob("*.jsonl.gz")}
    for name, facts in committed.items():
        path = RECORDINGS / name
        assert (facts["exchanges"], facts["etcd records"]) == (
            exchange_count(path),
            etcd_count(path),
        )


@pytest.mark.parametrize("name", sorted(DERIVED.DOC_EXAMPLES))
def test_a_doc_quotes_what_the_command_prints(name: str) -> None:
    doc = DERIVED.ROOT / name
    assert doc.read_text() == DERIVED.doc_text(name), f"{name}: make snapshots"
