"""One explained exchange as a JSON line: orjson's (bodies serialized once), and json's for
what orjson refuses."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import orjson

from k8s_wiretap.capture.reader import iter_records, load
from k8s_wiretap.decode.body import Decoded
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.explainer import Explainer
from k8s_wiretap.views.json import _audit_json, audit_record, dumps, exchange_record, write_json
from tests.recorded import story_records


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


def test_a_body_is_serialized_once_and_as_it_would_be_inline() -> None:
    body = Decoded("json", {"kind": "Lease", "spec": {"holderIdentity": "node-1"}})
    assert body.json_bytes == dumps(body.value).rstrip(b"\n")
    assert body.json_bytes is body.json_bytes  # made once, for every line that prints it
    assert Decoded("json", {"spec": {"replicas": 2**70}}).json_bytes is None


def test_a_recording_whose_body_orjson_refuses_is_written_whole_by_json(tmp_path: Path) -> None:
    """A server may answer a number past 64 bits (a custom resource's): that line is json's,
    and every line is what the plain record says, bodies serialized ahead or not."""
    records = [dict(r) for r in story_records()]
    lease = next(r for r in records if r["record"] == "request" and "/leases/node-1" in r["path"])
    end = next(r for r in records if r["record"] == "end" and r["id"] == lease["id"])
    huge = {"kind": "Lease", "apiVersion": "coordination.k8s.io/v1", "spec": {"n": 2**70}}
    end["body"] = {"text": json.dumps(huge), "size": len(json.dumps(huge))}
    path = tmp_path / "huge.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = io.BytesIO()
    write_json(iter_records(path, []), out)
    lines = out.getvalue().splitlines(keepends=True)
    analysis = Analysis.of(load(path))
    explainer = Explainer(analysis)
    assert lines == [dumps(exchange_record(analysis, e, explainer)) for e in analysis.exchanges]
    written = next(json.loads(line) for line in lines if json.loads(line)["id"] == lease["id"])
    assert written["response_body"] == huge


def test_an_audit_record_said_once_is_what_it_says_of_every_event_alike() -> None:
    """The JSON writer keeps what it said of a user and decision, by the values the log
    gave: an event with other values (an empty group, a number for a bool, no list) is
    never said as one kept."""
    user = {"username": "alice", "groups": ["dev", "system:authenticated"]}
    events: list[dict[str, Any]] = [
        {"user": user, "decision": "allow", "reason": ""},
        {"user": user, "decision": "allow", "reason": "", "joined": True},
        {"user": {"username": "alice", "groups": []}, "decision": "allow"},
        {"user": {"username": "alice", "groups": [""]}, "decision": "allow"},
        {"user": {"username": "alice", "groups": "dev"}, "decision": "allow"},
        {"user": {"username": "alice", "groups": ["dev", 7]}, "decision": "allow"},
        {"user": {"username": True}, "decision": True},
        {"user": {"username": 1}, "decision": 1},
        {"user": {"username": "1"}, "decision": "1"},
        {"user": "alice", "decision": "forbid", "impersonatedUser": {"username": "bob"}},
        {"user": user, "impersonatedUser": {"username": "bob", "groups": ["ops"]}},
    ]
    for _ in range(2):  # the second time round, from what was kept
        for event in events:
            said = orjson.dumps(_audit_json(event))
            assert said == orjson.dumps(audit_record(event)), event
