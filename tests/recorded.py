"""The committed recordings of the workshop's apply story, as records and as exchanges.

STORY was recorded on the lab's default release (`story_release()` reads which from its
`/version` answer); STORY_1_20, on 1.20, is kept as a regression input
(`scripts/record_fixtures.py --kube-version 1.20`)."""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from k8s_wiretap.capture.reader import Recording, iter_records, load
from k8s_wiretap.explain.analysis import recorded_release
from k8s_wiretap.kube.release import Release
from k8s_wiretap.paths import RECORDINGS as BUNDLED

# In the package (the checkout's recordings/ links there), where the tool finds them.
RECORDINGS = BUNDLED
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


# -- counts -----------------------------------------------------------------------------------
# What a test counts in a recording, counted here from its lines with the standard library
# alone (gzip, json), never by the reader under test: a recording made again (`make
# recordings`) has other counts, and the tests read them from it rather than typing them in.
EXCHANGE_RECORDS = frozenset({"request", "response", "event", "end"})


@cache
def lines_of(path: Path) -> tuple[dict[str, Any], ...]:
    """Every record of a recording (`.jsonl` or `.jsonl.gz`), in file order."""
    data = path.read_bytes()
    text = gzip.decompress(data) if path.suffix == ".gz" else data
    return tuple(json.loads(line) for line in text.splitlines() if line.strip())


def exchange_ids(path: Path = STORY) -> list[str]:
    """The exchanges' ids in the order each first appears (a response, event or end whose
    request was not recorded is an exchange too)."""
    ids = (r["id"] for r in lines_of(path) if r.get("record") in EXCHANGE_RECORDS)
    return list(dict.fromkeys(ids))


def exchange_count(path: Path = STORY) -> int:
    return len(exchange_ids(path))


def etcd_count(path: Path = STORY) -> int:
    return sum(1 for r in lines_of(path) if r.get("record") == "etcd")


def requests(path: Path = STORY) -> list[dict[str, Any]]:
    return [r for r in lines_of(path) if r.get("record") == "request"]


def user_agent(request: dict[str, Any]) -> str:
    return next((v for k, v in request.get("headers", ()) if k.lower() == "user-agent"), "")


def sent_by(agent: str, path: Path = STORY) -> list[dict[str, Any]]:
    """The requests whose User-Agent begins with `agent` ("kube-scheduler/")."""
    return [r for r in requests(path) if user_agent(r).startswith(agent)]


def bare_path(request: dict[str, Any]) -> str:
    return str(request.get("path", "")).split("?")[0]


def etcd_revisions(key: str, path: Path) -> list[int]:
    """The revisions at which etcd stored `key` (each a version of its object), in order."""
    found = (r for r in lines_of(path) if r.get("record") == "etcd" and r.get("key") == key)
    return sorted({int(r["revision"]) for r in found if not r.get("deleted")})


def positions(path: Path, wanted: Callable[[dict[str, Any]], bool]) -> list[int]:
    """The rows (exchanges in file order) whose request is `wanted`."""
    row = {id_: n for n, id_ in enumerate(exchange_ids(path))}
    return [row[r["id"]] for r in requests(path) if wanted(r)]


def is_binding(request: dict[str, Any]) -> bool:
    """The scheduler binding a Pod to a node (POST pods/NAME/binding)."""
    return request.get("method") == "POST" and bare_path(request).endswith("/binding")


def is_kubectl_apply(request: dict[str, Any]) -> bool:
    """kubectl patching a Deployment itself (no subresource): the story's applies."""
    parts = bare_path(request).split("/")
    return (
        user_agent(request).startswith("kubectl/")
        and request.get("method") == "PATCH"
        and parts[-2:-1] == ["deployments"]
    )


def fact(path: Path, name: str) -> Any:
    """A fact of a recording that only the explanation knows (the deepest chain, the
    components), from recordings/facts.json, which `make snapshots` writes from the
    recordings (scripts/make_derived.py): never one made from another copy of the file."""
    facts = json.loads((RECORDINGS / "facts.json").read_text())[path.name]
    made_from = hashlib.sha256(path.read_bytes()).hexdigest()
    assert facts["sha256"] == made_from, f"recordings/facts.json is not of {path}: make snapshots"
    return facts[name]
