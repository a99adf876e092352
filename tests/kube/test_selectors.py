"""Label selectors as the API server reads them (apimachinery's LabelSelectorAsSelector): a
Service's plain map, a LabelSelector's matchLabels and each matchExpressions operator."""

from __future__ import annotations

import pytest

from k8s_wiretap.kube.selectors import selector_of, selects

WEB = {"app": "web", "tier": "front"}


def test_a_services_map_selects_by_every_label() -> None:
    service = {"kind": "Service", "spec": {"selector": {"app": "web"}}}
    selector = selector_of(service)
    assert selector == {"matchLabels": {"app": "web"}}
    assert selects(selector, WEB)
    assert not selects(selector, {"app": "db"})


def test_a_service_with_no_selector_selects_nothing() -> None:
    assert selector_of({"kind": "Service", "spec": {}}) is None
    assert selector_of({"kind": "Service", "spec": {"selector": {}}}) is None


@pytest.mark.parametrize(
    ("expression", "chosen"),
    [
        ({"key": "tier", "operator": "In", "values": ["front", "back"]}, True),
        ({"key": "tier", "operator": "In", "values": ["back"]}, False),
        ({"key": "tier", "operator": "NotIn", "values": ["back"]}, True),
        ({"key": "zone", "operator": "NotIn", "values": ["a"]}, True),
        ({"key": "tier", "operator": "Exists"}, True),
        ({"key": "zone", "operator": "Exists"}, False),
        ({"key": "zone", "operator": "DoesNotExist"}, True),
        ({"key": "tier", "operator": "Gt", "values": ["1"]}, False),
    ],
)
def test_match_expressions(expression: dict[str, object], chosen: bool) -> None:
    budget = {
        "kind": "PodDisruptionBudget",
        "spec": {"selector": {"matchExpressions": [expression]}},
    }
    selector = selector_of(budget)
    assert selector is not None
    assert selects(selector, WEB) is chosen


def test_match_labels_and_expressions_must_all_hold() -> None:
    selector = {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["back"]}],
    }
    assert not selects(selector, WEB)
    assert selects({"matchLabels": {"app": "web"}}, WEB)
    assert selects({}, WEB)  # an empty LabelSelector selects everything


def test_a_budgets_empty_selector_selects_every_pod() -> None:
    budget = {"kind": "PodDisruptionBudget", "spec": {"selector": {}}}
    selector = selector_of(budget)
    assert selector == {}
    assert selects(selector, WEB) and selects(selector, {})


def test_values_that_are_not_a_list_select_nothing() -> None:
    expression = {"key": "app", "operator": "In", "values": "webapp"}  # not ["web"]
    assert not selects({"matchExpressions": [expression]}, WEB)
