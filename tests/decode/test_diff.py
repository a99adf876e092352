"""Differences as JSON pointers."""

from __future__ import annotations

from k8s_wiretap.decode.diff import diff


def test_diff() -> None:
    before = {"spec": {"replicas": 2, "template": {"a/b": 1}}, "list": [1, 2], "gone": True}
    after = {"spec": {"replicas": 3, "template": {"a/b": 1}}, "list": [1, 2, 3], "new": "x"}
    assert diff(before, after) == [
        {"path": "/spec/replicas", "op": "replace", "from": 2, "to": 3},
        {"path": "/list", "op": "replace", "from": [1, 2], "to": [1, 2, 3]},
        {"path": "/gone", "op": "remove", "from": True},
        {"path": "/new", "op": "add", "to": "x"},
    ]
    assert diff({"a": [{"b": 1}]}, {"a": [{"b": 2}]}) == [
        {"path": "/a/0/b", "op": "replace", "from": 1, "to": 2}
    ]
    assert diff({"m": {"x/y~z": 1}}, {"m": {}}) == [
        {"path": "/m/x~1y~0z", "op": "remove", "from": 1}
    ]
    assert diff(before, before) == []
