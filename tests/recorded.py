"""The committed recording of the workshop's apply story, as records and as exchanges."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from k8s_wiretap.capture.reader import Recording, load, read_records

STORY = Path(__file__).resolve().parent.parent / "recordings" / "apply-story.jsonl.gz"


@cache
def story_records() -> tuple[dict[str, Any], ...]:
    records, warnings = read_records(STORY)
    assert not warnings
    return tuple(records)


def story() -> Recording:
    return load(STORY)


def records_of(exchange_id: str) -> list[dict[str, Any]]:
    return [r for r in story_records() if r.get("id") == exchange_id]
