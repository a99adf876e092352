"""The explain-coverage benchmark counts right (bench/explain_coverage.py), on the committed
wide session (recordings/wide-session.jsonl.gz): its figures agree with what `k8s-wiretap
explain --format json` prints for every exchange, and exchanges checked by hand are counted
where they belong. The goal the benchmark measures is not asserted here (it is a
benchmark's figure)."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from typing import Any

import pytest

from bench.explain_coverage import RECORDING, Said, coverage, explain
from tests.conftest import cli

# Checked by hand in the recording (explain --format json), found by what they are:
SET_IMAGE = "set image"  # kubectl set image: PATCH deployments/web
NEW_REPLICASET = "new replicaset"  # the deployment controller's answer, just after it
EVICTION_REFUSED = "eviction refused"  # kubectl drain: a 429 eviction
WRITES = ("create", "update", "patch", "delete", "deletecollection")


@pytest.fixture(scope="module")
def said() -> list[Said]:
    return explain(RECORDING)


@pytest.fixture(scope="module")
def by_id(said: list[Said]) -> dict[str, Said]:
    """The exchanges checked by hand, by what they are (their ids change when the session
    is recorded again)."""
    at = next(
        n
        for n, s in enumerate(said)
        if (s.component, s.verb, s.resource) == ("kubectl", "patch", "deployments")
        and s.summary.startswith("kubectl set image")
    )
    answer = next(
        s
        for s in said[at:]
        if (s.component, s.verb, s.resource)
        == ("controller-manager/deployment-controller", "create", "replicasets")
    )
    refused = next(
        s
        for s in said
        if (s.component, s.verb, s.resource, s.status)
        == ("kubectl", "create", "pods/eviction", 429)
    )
    return {SET_IMAGE: said[at], NEW_REPLICASET: answer, EVICTION_REFUSED: refused}


def test_the_recording_is_the_wide_session(said: list[Said]) -> None:
    """What the issue's session holds is in it: each kind, and the failures."""
    seen = {(s.component.split("/")[0], s.verb, s.resource, s.status) for s in said}
    for wanted in [
        ("kubectl", "create", "pods/eviction", 429),
        ("kubectl", "update", "configmaps", 409),
        ("kubectl", "get", "configmaps", 404),
        ("kubectl", "create", "serviceaccounts/token", 201),
        ("kubectl", "create", "selfsubjectaccessreviews", 201),
        ("kubectl", "delete", "namespaces", 200),
        ("kubectl", "patch", "nodes", 200),
        ("controller-manager", "deletecollection", "pods", 200),
        ("kubectl", "create", "deployments", 422),
        ("kubectl", "list", "secrets", 403),
        ("kubectl", "watch", "deployments", 200),  # kubectl wait, kubectl delete
        ("kubectl", "delete", "deployments", 200),  # --cascade=foreground
        ("kubectl", "patch", "pods/ephemeralcontainers", 200),
        ("kubectl", "get", "pods/log", 500),
        ("greeter-operator", "create", "configmaps", 201),
        ("greeter-operator", "patch", "configmaps", 200),
    ]:
        assert wanted in seen, wanted
    created = {s.resource for s in said if s.component == "kubectl" and s.verb == "create"}
    kinds = {"deployments", "services", "poddisruptionbudgets", "horizontalpodautoscalers"}
    kinds |= {"statefulsets", "daemonsets", "jobs", "persistentvolumeclaims", "greetings"}
    assert kinds <= created


def test_the_figures_are_those_of_explain_json(said: list[Said]) -> None:
    """Counted again from the real command's JSON lines: who, rule, caused_by."""
    result = cli("explain", str(RECORDING), "--format", "json")
    assert result.returncode == 0, result.stderr
    lines: list[dict[str, Any]] = [json.loads(line) for line in result.stdout.splitlines()]
    generic = [r for r in lines if r["rule"] in ("write", "read", "other")]
    controller_writes = [
        r
        for r in lines
        if r["verb"] in WRITES
        and r["who"]["component"].split("/")[0] in ("controller-manager", "scheduler")
    ]
    c = coverage(said)
    assert c.exchanges == len(lines) > 1000
    assert c.unattributed == sum(r["who"]["component"] in ("", "unknown") for r in lines)
    assert c.generic == len(generic)
    assert c.generic_writes == sum(r["verb"] in WRITES for r in generic)
    assert c.controller_writes == len(controller_writes) > 0
    assert c.controller_caused == sum(
        r["caused_by"] is not None or r["reason"] is not None for r in controller_writes
    )
    assert c.controller_by_event == sum(r["caused_by"] is not None for r in controller_writes)
    assert sum(c.kinds.values()) == c.generic
    kinds = Counter(
        (
            r["who"]["component"],
            r["verb"],
            r["resource"] + bool(r["subresource"]) * f"/{r['subresource']}",
        )
        for r in generic
        if not r["non_resource"]
    )
    assert kinds <= c.kinds


def test_a_controller_write_with_its_cause_is_counted_as_caused(by_id: dict[str, Said]) -> None:
    replicaset = by_id[NEW_REPLICASET]
    assert (replicaset.component, replicaset.verb) == (
        "controller-manager/deployment-controller",
        "create",
    )
    assert replicaset.cause  # the set image PATCH's watch event (SET_IMAGE)
    c = coverage([replicaset, by_id[SET_IMAGE]])
    assert (c.writes, c.controller_writes, c.controller_caused) == (2, 1, 1)


def test_kubectl_writes_are_not_controller_writes(by_id: dict[str, Said]) -> None:
    c = coverage([by_id[SET_IMAGE], by_id[EVICTION_REFUSED]])
    assert (c.writes, c.controller_writes, c.unattributed) == (2, 0, 0)


def test_a_generic_exchange_is_listed_by_who_verb_and_resource(by_id: dict[str, Said]) -> None:
    """The rules change as the issue goes on: the same real exchange, as if on `write`,
    and a read on `read`."""
    write = dataclasses.replace(by_id[EVICTION_REFUSED], rule="write")
    read = dataclasses.replace(by_id[NEW_REPLICASET], verb="get", rule="read")
    c = coverage([write, write, read, by_id[SET_IMAGE]])
    assert (c.exchanges, c.generic, c.generic_writes) == (4, 3, 2)
    assert c.kinds == {
        ("kubectl", "create", "pods/eviction"): 2,
        ("controller-manager/deployment-controller", "get", "replicasets"): 1,
    }
