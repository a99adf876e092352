"""The committed recordings of the workshop's apply story, as records and as exchanges.

STORY was recorded on the lab's default release (`story_release()` reads which from its
`/version` answer); STORY_1_20, on 1.20, is kept as a regression input
(`scripts/record_fixtures.py --kube-version 1.20`)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from k8s_wiretap.capture.reader import Recording, iter_records, load
from k8s_wiretap.explain.analysis import recorded_release
from k8s_wiretap.kube.release import Release

RECORDINGS = Path(__file__).resolve().parent.parent / "recordings"
STORY = RECORDINGS / "apply-story.jsonl.gz"
STORY_1_20 = RECORDINGS / "apply-story-1.20.jsonl.gz"


@cache
def story_records() -> tuple[dict[str, Any], ...]:
    warnings: list[str] = []
    records = list(iter_records(STORY, warnings))
    assert not warnings
    return tuple(records)


def story() -> Recording:
    return load(STORY)


@cache
def release_of(path: Path) -> Release:
    """The release of the API server a recording was made on (its `/version` answer)."""
    found = recorded_release(list(load(path).exchanges))
    assert found is not None, f"{path.name} holds no /version answer"
    return found


def story_release() -> Release:
    """The release STORY was recorded on."""
    return release_of(STORY)


def records_of(exchange_id: str) -> list[dict[str, Any]]:
    return [r for r in story_records() if r.get("id") == exchange_id]
