"""Bodies that are JSON but not the objects they claim to be (metadata a string, a list)
are explained, never a crash: a real exchange of the wide session — kubectl's, the root CA
publisher's and the greeter operator's create of a ConfigMap — with its bodies replaced so,
alone with the session's /version answer in a recording, through `explain`."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from bench.explain_coverage import RECORDING
from tests.conftest import cli

ODD = [{"kind": "ServiceAccount", "apiVersion": "v1", "metadata": "oops"}, {"metadata": []}]


def _records() -> list[dict[str, Any]]:
    with gzip.open(RECORDING, "rt") as lines:
        return [json.loads(line) for line in lines]


def _odd_recording(
    folder: Path, user_agent: str, resource: str, sent: Any, answer: Any
) -> tuple[Path, str]:
    """The header, the first /version exchange, and the first POST of `resource` by
    `user_agent` with its bodies replaced by `sent` and `answer`."""
    records = _records()
    header = records[0]
    version = next(r["id"] for r in records if r.get("path") == "/version")

    def posted(r: dict[str, Any]) -> bool:
        agent = dict(r.get("headers") or []).get("User-Agent") or dict(r.get("headers") or []).get(
            "user-agent", ""
        )
        return (
            r.get("record") == "request"
            and r.get("method") == "POST"
            and r["path"].split("?")[0].endswith(f"/{resource}")
            and agent.startswith(user_agent)
        )

    chosen = next(r["id"] for r in records if posted(r))
    kept = [header]
    for r in records[1:]:
        if r.get("id") == version:
            kept.append(r)
        elif r.get("id") == chosen:
            if r["record"] == "request":
                r = {**r, "body": {"text": json.dumps(sent)}}
            if r["record"] == "end":
                r = {**r, "body": {"text": json.dumps(answer)}}
            if r["record"] == "response":  # refused: the body sent is what it was about
                r = {**r, "status": 422, "headers": [["Content-Type", "application/json"]]}
            kept.append(r)
    path = folder / "odd.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in kept))
    return path, chosen


@pytest.mark.parametrize(
    ("agent", "resource"),
    [
        ("kubectl", "configmaps"),
        ("kube-controller-manager", "configmaps"),  # the root CA publisher's: its cause sought
        ("greeter-operator", "configmaps"),  # a third party's: its cause sought on its watches
    ],
)
@pytest.mark.parametrize(("sent", "answer"), [(ODD[0], ODD[1]), (ODD[1], ODD[0]), ("x", [1])])
def test_an_object_that_is_not_one_is_explained(
    tmp_path: Path, agent: str, resource: str, sent: Any, answer: Any
) -> None:
    path, chosen = _odd_recording(tmp_path, agent, resource, sent, answer)
    result = cli("explain", str(path), "--format", "json")
    assert result.returncode == 0, result.stderr
    (line,) = [json.loads(t) for t in result.stdout.splitlines() if chosen in t[:100]]
    assert line["verb"] == "create" and line["summary"]
    story = cli("explain", str(path))
    assert story.returncode == 0, story.stderr
