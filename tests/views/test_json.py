"""One explained exchange as a JSON line: orjson's, and json's for what orjson refuses."""

from __future__ import annotations

import json

from k8s_wiretap.views.json import dumps


def test_a_line_is_compact_json_with_its_keys_in_order_and_unicode_as_is() -> None:
    record = {"b": 1, "a": [1.5, None, True], "name": "café", "time": 1796170900.3102949}
    line = dumps(record)
    expected = '{"b":1,"a":[1.5,null,true],"name":"café","time":1796170900.3102949}\n'
    assert line == expected.encode()
    assert json.loads(line) == record


def test_what_orjson_refuses_is_written_by_json() -> None:
    huge = {"replicas": 2**70, "nested": {"n": -(2**64)}}  # a custom resource may say this
    assert json.loads(dumps(huge)) == huge
    assert dumps({1: "x"}) == b'{"1": "x"}\n'  # type: ignore[dict-item]  # a non-string key
