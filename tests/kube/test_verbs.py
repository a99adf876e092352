"""The one table of verbs against the verbs the API server's request resolution gives."""

from __future__ import annotations

import pytest

from k8s_wiretap.kube.requestinfo import parse_request
from k8s_wiretap.kube.verbs import DELETES, READS, STORES, WATCH, WRITES


@pytest.mark.parametrize(
    ("method", "path", "verb", "kind"),
    [
        ("GET", "/api/v1/namespaces/default/pods/web", "get", READS),
        ("GET", "/api/v1/namespaces/default/pods", "list", READS),
        ("GET", "/api/v1/namespaces/default/pods?watch=1", WATCH, READS),
        ("GET", "/api/v1/watch/namespaces/default/pods", WATCH, READS),
        ("POST", "/api/v1/namespaces/default/pods", "create", STORES),
        ("PUT", "/apis/apps/v1/namespaces/default/deployments/web/status", "update", STORES),
        ("PATCH", "/apis/apps/v1/namespaces/default/deployments/web", "patch", STORES),
        ("DELETE", "/api/v1/namespaces/default/pods/web", "delete", DELETES),
        ("DELETE", "/api/v1/namespaces/default/pods", "deletecollection", DELETES),
    ],
)
def test_each_resolved_verb_has_its_place(
    method: str, path: str, verb: str, kind: frozenset[str]
) -> None:
    info = parse_request(method, path)
    assert info.verb == verb
    assert verb in kind


def test_reads_writes_stores_and_deletes() -> None:
    assert not READS & WRITES
    assert STORES | DELETES == WRITES and not STORES & DELETES
    proxy = parse_request("GET", "/api/v1/proxy/namespaces/default/pods/web")
    assert proxy.verb == "proxy" and proxy.verb not in READS | WRITES
    exec_ = parse_request("POST", "/api/v1/namespaces/default/pods/web/exec?command=ls")
    assert exec_.verb in WRITES and exec_.streaming  # a connect: a create by its verb
