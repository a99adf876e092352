"""Label selectors: which objects a Service, a PodDisruptionBudget or a workload selects.

Two forms exist: a Service's `spec.selector` is a plain map (every label equal), the others'
a LabelSelector (`matchLabels` and `matchExpressions` with In, NotIn, Exists,
DoesNotExist), as staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go
(LabelSelectorAsSelector) reads it. A LabelSelector with neither selects everything; a
Service with no selector selects nothing (its endpoints are managed by hand); an empty
LabelSelector of a PodDisruptionBudget (policy/v1) selects every pod of its namespace.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["selector_of", "selects"]


def selector_of(obj: Any) -> dict[str, Any] | None:
    """The selector of an object's spec, as a LabelSelector (a Service's map made one),
    or None when it selects nothing."""
    spec = obj.get("spec") if isinstance(obj, dict) else None
    found = spec.get("selector") if isinstance(spec, dict) else None
    if not isinstance(found, dict):
        return None
    if obj.get("kind") == "Service":
        return {"matchLabels": found} if found else None
    if found and not {"matchLabels", "matchExpressions"} & found.keys():
        return {"matchLabels": found}  # a map where a LabelSelector was meant: read as one
    return found  # {}: every object (policy/v1's empty PodDisruptionBudget selector)


def selects(selector: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    """Whether a LabelSelector selects an object with `labels`."""
    wanted = selector.get("matchLabels") or {}
    if not isinstance(wanted, dict):
        return False
    for k, v in wanted.items():  # loops: asked of every pod a Service selects, each write
        if labels.get(k) != v:
            return False
    expressions = selector.get("matchExpressions") or []
    if not isinstance(expressions, list):
        return False
    for e in expressions:  # noqa: SIM110
        if isinstance(e, dict) and not _holds(e, labels):
            return False
    return True


def _holds(expression: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    key, operator = str(expression.get("key", "")), expression.get("operator")
    values = expression.get("values")
    values = values if isinstance(values, list) else []
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    return False  # an operator the API server would have refused
