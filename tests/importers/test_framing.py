"""How a log's values are laid out, told from its first bytes (`importers.framing`): each
framing gives the values with the line each starts on, an export's container array an
item at a time, and what cannot be read said where it is."""

from __future__ import annotations

import base64
import gzip
import io
import json

import pytest

from k8s_wiretap.importers import framing
from k8s_wiretap.importers.limits import Limits


def read(data: bytes, bounds: Limits | None = None) -> tuple[str, list[tuple[int, object]]]:
    name, values = framing.framed(io.BufferedReader(io.BytesIO(data)), bounds or Limits())
    return name, [(n, v if isinstance(v, bytes) else str(v)) for n, v in values]


def test_json_lines_stay_lines_and_a_bom_and_crlf_are_passed_over() -> None:
    name, got = read(b'\xef\xbb\xbf{"a": 1}\r\n\r\n{"b": 2}\r\n')
    assert name == "JSON lines"
    assert [(n, json.loads(v)) for n, v in got] == [(1, {"a": 1}), (3, {"b": 2})]  # type: ignore[arg-type]


def test_a_pretty_printed_export_gives_its_container_items_one_at_a_time() -> None:
    document = {
        "events": [{"message": "m1", "timestamp": 1}, {"message": "m2", "timestamp": 2}],
        "searchedLogStreams": [],
        "nextToken": "t",
    }
    name, got = read(json.dumps(document, indent=4).encode())
    assert name == "JSON documents"
    values = [json.loads(v) for _, v in got]  # type: ignore[arg-type]
    assert values == [{"events": [item]} for item in document["events"]]
    assert [n for n, _ in got] == [3, 7]  # the line each item starts on


def test_members_before_the_container_go_with_each_item() -> None:
    payload = {"messageType": "DATA_MESSAGE", "logGroup": "g", "logEvents": [{"id": "1"}]}
    _, got = read(json.dumps(payload, indent=1).encode())
    assert [json.loads(v) for _, v in got] == [payload]  # type: ignore[arg-type]


def test_an_empty_container_is_still_a_value() -> None:
    _, got = read(b'{\n "kind": "EventList",\n "items": []\n}\n')
    assert [json.loads(v) for _, v in got] == [{"kind": "EventList", "items": []}]  # type: ignore[arg-type]


def test_documents_one_after_another_without_line_ends() -> None:
    name, got = read(b'{"a": 1}{"b": 2} {"c": [3]}')
    assert name == "JSON documents"
    assert [json.loads(v) for _, v in got] == [{"a": 1}, {"b": 2}, {"c": [3]}]  # type: ignore[arg-type]


def test_an_array_on_one_line_is_a_line_and_one_laid_out_is_read_by_item() -> None:
    assert read(b'[{"a": 1}, {"b": 2}]\n')[0] == "JSON lines"
    name, got = read(b'[\n  {"a": 1},\n  {"b": 2}\n]\n')
    assert name == "a JSON array" and [n for n, _ in got] == [2, 3]


def test_a_container_item_longer_than_max_line_ends_the_file_said() -> None:
    big = json.dumps({"records": [{"x": "y" * 5000}, {"x": 1}]}, indent=1).encode()
    _, got = read(big, Limits(max_line=1000))
    assert got == [
        (3, "an item of the JSON array is longer than 1,000 characters; the rest unread")
    ]


def test_a_document_cut_short_keeps_the_items_before() -> None:
    text = json.dumps({"items": [{"a": 1}, {"b": 2}]}, indent=1)
    _, got = read(text[:-10].encode())
    assert json.loads(got[0][1]) == {"items": [{"a": 1}]}  # type: ignore[arg-type]
    assert isinstance(got[-1][1], str) and "not JSON" in got[-1][1]


@pytest.mark.parametrize(
    ("line", "value"),
    [
        (b'2024-01-01T00:00:00.000Z {"a": 1}\n', {"a": 1}),
        (b'2024-01-01T00:00:00+00:00\tkube.audit\t{"a": 1}\n', {"a": 1}),
    ],
)
def test_a_timestamp_prefix_is_taken_off(line: bytes, value: object) -> None:
    name, got = read(line * 2)
    assert name == "JSON lines after a timestamp"
    assert [json.loads(v) for _, v in got] == [value, value]  # type: ignore[arg-type]


def test_fluent_bits_out_file_lines() -> None:
    name, got = read(b'kube.audit: [1741069338.822000, {"log": "x"}]\n')
    assert name == "Fluent Bit out_file lines"
    assert [json.loads(v) for _, v in got] == [{"log": "x"}]  # type: ignore[arg-type]


def test_base64_gzip_lines_are_inflated_and_a_bad_one_said() -> None:
    good = base64.b64encode(gzip.compress(b'{"messageType": "DATA_MESSAGE"}'))
    name, got = read(good + b"\n" + good[:12] + b"\n" + b"H4sI!!\n")
    assert name == "base64 gzip lines"
    assert got[0] == (1, b'{"messageType": "DATA_MESSAGE"}')
    assert got[1] == (2, "the line's gzip is cut short (its deflate stream does not end)")
    assert got[2] == (3, "the line is no base64 (the file's first line is)")


def test_a_base64_line_is_inflated_no_further_than_max_line() -> None:
    bomb = base64.b64encode(gzip.compress(b"x" * 100_000))  # some 200 bytes a line
    assert read(bomb + b"\n", Limits(max_line=200_000))[1] == [(1, b"x" * 100_000)]
    _, got = read(bomb + b"\n", Limits(max_line=50_000))
    assert got == [(1, "the line's gzip inflates past 50,000 bytes: not read")]
