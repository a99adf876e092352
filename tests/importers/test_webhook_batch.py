"""An audit webhook POST's body read item by item: what the whole-document reading took and
refused is taken and refused the same, one item at a time."""

from __future__ import annotations

import json
from typing import Any

import pytest

from k8s_wiretap.importers.audit import BadEvent
from k8s_wiretap.importers.webhook_batch import ItemError, items


def read(body: bytes | bytearray) -> list[Any]:
    return [str(i) if isinstance(i, ItemError) else i for i in items(body)]


@pytest.mark.parametrize(
    "document",
    [
        {"kind": "EventList", "apiVersion": "audit.k8s.io/v1", "metadata": {}, "items": []},
        {"items": [{"auditID": "a"}, {"auditID": "b", "x": [1, {"y": None}]}, 3, "s"]},
        {"metadata": {"resourceVersion": "1"}, "items": [{"a": "é\u2028😀"}], "kind": "EventList"},
    ],
)
def test_an_event_lists_items_are_read_as_json_reads_them(document: dict[str, Any]) -> None:
    for body in (json.dumps(document), json.dumps(document, indent=2, ensure_ascii=False)):
        assert read(body.encode()) == document["items"]
    assert read(bytearray(json.dumps(document).encode())) == document["items"]


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b'{"kind": "EventList", "items": [', "the body is not JSON"),
        (b'{"kind": "EventList", "items": [{}] ', "the body is not JSON"),
        (b'{"kind": "EventList", "items": []} []', "more after its object"),
        (b"[]", "a JSON list, not an object"),
        (b'"x"', "a JSON str, not an object"),
        (b"", "the body is not JSON"),
        (b'{"kind": "Event", "items": []}', "not an audit EventList (kind 'Event')"),
        (b'{"kind": "EventList"}', "an EventList without a list of items"),
        (b'{"items": {}}', "an EventList without a list of items"),
        (b'{"items": [], "items": []}', "two lists of items"),
        (b'{"items": []}\xff', "the body is not UTF-8"),
    ],
)
def test_a_body_that_is_no_event_list_is_refused_whole(body: bytes, why: str) -> None:
    with pytest.raises(BadEvent, match=why.replace("(", r"\(").replace(")", r"\)")):
        read(body)


def test_an_item_that_cannot_be_read_is_refused_in_its_place() -> None:
    deep = "[" * 5000 + "]" * 5000
    body = f'{{"items": [{{"a": 1}}, {deep}, {{"b": "\\ud800"}}, {{"c": 2}}]}}'.encode()
    assert read(body) == [
        {"a": 1},
        "the line is nested too deep to read",
        "a lone surrogate in a string (no Unicode text)",
        {"c": 2},
    ]
