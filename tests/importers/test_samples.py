"""Every committed audit-log sample (tests/importers/data/README.md: public samples of each
shape a log is kept in, and where none is public, a sample built from the vendor's
documented schema) imports as a user runs it: exit 0, one exchange for each request the
sample holds, and each fact read from the sample by hand (`samples.json`: its verb,
resource, name, user, status, user agent...) true of one of those exchanges; and each
exchange explained (`bench/explain_coverage.py`, as `explain` explains it) with an actor
(never `unknown`), on a rule of its own rather than a catch-all, and a summary that does
not contradict its request."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bench.explain_coverage import coverage, explain
from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.reader import load
from k8s_wiretap.importers.audit import METHODS
from k8s_wiretap.kube.requestinfo import parse_request
from tests.conftest import cli

DATA = Path(__file__).parent / "data"
SAMPLES: list[dict[str, Any]] = json.loads((DATA / "samples.json").read_text())
# facts about the wrapper a sample came in (its table, category, the shipper's level
# field), not about the request: the wrapper's own tests hold them
WRAPPER_FACTS = {"category", "table", "k8s_audit_level", "openshift_audit_level", "stage"}
# a gRPC code of a GKE entry, as the HTTP status the import gives it (importers/gke.py)
GRPC_STATUS = {0: 200, 7: 403}


@dataclass(frozen=True)
class Imported:
    recording: Path
    exchanges: list[Exchange]
    stderr: str


def imported(sample: dict[str, Any], tmp_path: Path) -> Imported:
    out = tmp_path / "sample.jsonl"
    result = cli("import", "audit", str(DATA / sample["file"]), "-o", str(out))
    assert result.returncode == 0, result.stderr
    return Imported(out, load(out).exchanges, result.stderr)


def _user(exchange: Exchange) -> str:
    audit = exchange.request.audit or {}
    return str((audit.get("user") or {}).get("username", ""))


def _impersonated(exchange: Exchange) -> str:
    audit = exchange.request.audit or {}
    return str((audit.get("impersonatedUser") or {}).get("username", ""))


def _holds(exchange: Exchange, key: str, value: Any) -> bool:
    info = parse_request(exchange.method or "GET", exchange.path)
    match key:
        case "verb":
            return exchange.method == METHODS.get(value, "")
        case "resource" | "namespace" | "name" | "subresource":  # a create's name: objectRef
            reference = (exchange.request.audit or {}).get("objectRef") or {}
            return value in (getattr(info, key), reference.get(key))
        case "path":
            return bool(info.path == value)
        case "method":  # GKE's methodName: its last word is the verb
            return exchange.method == METHODS.get(str(value).rsplit(".", 1)[-1], "")
        case "user":
            return bool(_user(exchange) == value)
        case "impersonated_user":
            return bool(_impersonated(exchange) == value)
        case "code":
            return bool(exchange.status == value)
        case "grpc_code":
            return exchange.status == GRPC_STATUS[value]
        case "user_agent":
            return bool(exchange.user_agent == (value or ""))
        case "source_ip":
            audit = exchange.request.audit or {}
            return value in (audit.get("sourceIPs") or [])
        case "truncated" | "request_object":  # the body is absent, said in `absent`
            audit = exchange.request.audit or {}
            return exchange.request_body is None and bool(audit.get("absent"))
    raise AssertionError(f"a fact this test does not know: {key}")


def matches(exchange: Exchange, fact: dict[str, Any]) -> bool:
    return all(_holds(exchange, k, v) for k, v in fact.items() if k not in WRAPPER_FACTS)


@pytest.mark.parametrize("sample", SAMPLES, ids=[s["file"] for s in SAMPLES])
def test_each_sample_imports_every_request_and_explains_each(
    sample: dict[str, Any], tmp_path: Path
) -> None:
    result = imported(sample, tmp_path)
    assert len(result.exchanges) == sample["events"], result.stderr
    for fact in sample["facts"]:
        found = [e for e in result.exchanges if matches(e, fact)]
        assert found, f"no exchange of {sample['file']} has {fact}: {result.stderr}"
    said = explain(result.recording)
    counted = coverage(said)
    assert counted.unattributed == 0, [s.summary for s in said]
    assert counted.unknown_actors == 0, [s.summary for s in said]
    assert counted.generic <= counted.exchanges // 50, counted.kinds  # at most 2%
    assert counted.contradictions == []
    for s in said:
        assert "unknown" not in s.summary.split(":", 1)[0], s.summary
        assert "nothing said" not in s.summary, s.summary


def test_every_sample_has_its_source_in_the_readme() -> None:
    readme = (DATA / "README.md").read_text()
    for sample in SAMPLES:
        assert f"`{Path(sample['file']).name}`" in readme, sample["file"]
