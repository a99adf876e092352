"""explain/changes.py on a JSON patch that inserts into a list: the item named is the one
inserted, not the one it pushes along. The exchange is a real `kubectl patch --type json`
of the wide session; the objects before and after are its Deployment with a sidecar put
first, as such a patch leaves it."""

from __future__ import annotations

import copy
from typing import Any

from bench.explain_coverage import RECORDING
from k8s_wiretap.capture.reader import load
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.changes import change

SIDECAR = {"name": "sidecar", "image": "busybox:1.36"}


def _json_patch_of_a_deployment() -> tuple[Any, dict[str, Any]]:
    analysis = Analysis.of(load(RECORDING))
    for exchange in analysis.exchanges:
        info = exchange.info
        if (
            exchange.request_header("kubectl-command") == "kubectl patch"
            and info.resource == "deployments"
            and exchange.status == 200
        ):
            return exchange, analysis.response_body(exchange).value
    raise AssertionError("no JSON patch of a Deployment in the wide session")


def test_an_add_at_an_index_names_the_item_it_inserts() -> None:
    exchange, deployment = _json_patch_of_a_deployment()
    before = copy.deepcopy(deployment)
    after = copy.deepcopy(deployment)
    after["spec"]["template"]["spec"]["containers"].insert(0, SIDECAR)
    ops = [{"op": "add", "path": "/spec/template/spec/containers/0", "value": SIDECAR}]
    said = change(exchange, ops, "json", before, after)
    assert said.startswith("adds container sidecar"), said
    assert "web" not in said


def test_a_remove_at_an_index_names_the_item_it_removes() -> None:
    exchange, deployment = _json_patch_of_a_deployment()
    before = copy.deepcopy(deployment)
    before["spec"]["template"]["spec"]["containers"].insert(0, SIDECAR)
    after = copy.deepcopy(deployment)
    ops = [{"op": "remove", "path": "/spec/template/spec/containers/0"}]
    said = change(exchange, ops, "json", before, after)
    assert said.startswith("removes container sidecar"), said
