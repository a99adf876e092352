"""The explain-coverage benchmark's contradiction check (bench/explain_coverage.py), on real
exchanges of the committed wide session: the summaries the rules give pass it, and the ones
the issue found contradicting their requests — as they read before the rules said them
right — are caught."""

from __future__ import annotations

import dataclasses

import pytest

from bench.explain_coverage import RECORDING, Said, contradiction, coverage, explain


@pytest.fixture(scope="module")
def said() -> list[Said]:
    return explain(RECORDING)


def _one(said: list[Said], component: str, verb: str, resource: str, status: int) -> Said:
    found = [
        s
        for s in said
        if (s.component.split("/")[0], s.verb, s.resource, s.status)
        == (component, verb, resource, status)
    ]
    assert found, (component, verb, resource, status)
    return found[0]


def test_no_summary_of_the_wide_session_contradicts_its_request(said: list[Said]) -> None:
    assert [(s.summary, why) for s, why in coverage(said).contradictions] == []


@pytest.mark.parametrize(
    ("what", "wrong", "why"),
    [
        (
            ("kubectl", "create", "pods/eviction", 429),
            "kubectl drain: create Pod shop/web",
            "a 429 said as a success",
        ),
        (
            ("kubectl", "create", "serviceaccounts/token", 201),
            "kubectl: create ServiceAccount shop/robot",
            "the token subresource is not named",
        ),
        (
            ("kubelet", "create", "serviceaccounts/token", 201),
            "kubelet creates ServiceAccount shop/default",
            "the token subresource is not named",
        ),
        (
            ("kubectl", "delete", "namespaces", 200),
            "kubectl delete: Namespace shop/shop is deleted",
            "a Namespace named as if it were in itself",
        ),
        (
            ("kubectl", "get", "configmaps", 404),
            "kubectl get: get ConfigMap shop/missing",
            "a 404 said as a success",
        ),
        (
            ("kubectl", "update", "configmaps", 409),
            "kubectl replace updates ConfigMap shop/menu",
            "a 409 said as a success",
        ),
        (
            ("kubectl", "get", "configmaps", 404),
            "kubectl get: get ConfigMap shop/gone: conflict",
            "a 404 said as a success",
        ),
        (
            ("kubectl", "create", "serviceaccounts/token", 201),
            "kubectl create token: TokenRequest for shop/robot: refused (429)",
            "a 201 said as a failure",
        ),
        (
            ("kubectl", "patch", "nodes", 200),
            "kubectl cordon deletes Node node-1",
            "a patch said as 'deletes'",
        ),
    ],
)
def test_the_contradictions_found_before_are_caught(
    said: list[Said], what: tuple[str, str, str, int], wrong: str, why: str
) -> None:
    real = _one(said, *what)
    assert contradiction(real) is None, real.summary
    assert contradiction(dataclasses.replace(real, summary=wrong)) == why


def test_a_read_said_as_a_write_is_caught_but_not_what_follows_it(said: list[Said]) -> None:
    lease = _one(said, "kubelet", "get", "leases", 404)
    assert contradiction(lease) is None, lease.summary  # "…: not found (404), so it creates it"
    said_as = "kubelet: Lease kube-node-lease/node-1 not found (404); the kubelet creates it"
    wrong = dataclasses.replace(lease, summary=said_as)
    assert contradiction(wrong) == "a get said as 'creates'"
