"""The record kinds, declared once (`capture/records.py`): docs/proxy.md's tables are made
from them, every field a committed recording holds is one of them, and the recorder writes
each kind byte for byte as it always has."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path
from typing import Any, Required, get_args

import pytest

from k8s_wiretap.capture import records
from k8s_wiretap.capture.events import (
    Chunk,
    End,
    Message,
    Note,
    ProxyEvent,
    RequestBody,
    RequestSeen,
    ResponseSeen,
    Stored,
)
from k8s_wiretap.capture.reader import iter_records
from k8s_wiretap.capture.recorder import Recorder
from tests.conftest import load_script

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "proxy.md"
RECORDINGS = [
    *sorted(ROOT.glob("recordings/*.jsonl.gz")),
    ROOT / "tests" / "explain" / "fixtures" / "node-taint-race.jsonl.gz",
]
PARTS = {records.Body: "BODY", records.Client: "`client`", records.Identity: "`identity`"}
HOLDS = {  # the fields that hold a part
    ("request", "body"): records.Body,
    ("request", "client"): records.Client,
    ("request", "identity"): records.Identity,
    ("end", "body"): records.Body,
    ("event", "data"): records.Body,
    ("etcd", "value"): records.Body,
}


def _kind(declaration: type) -> str:
    (name,) = get_args(typing.get_type_hints(declaration)["record"])
    return str(name)


def _fields(declaration: type) -> set[str]:
    return set(typing.get_type_hints(declaration)) - {"record"}


KINDS = {_kind(declaration): declaration for declaration in records.KINDS}


def test_the_docs_tables_are_made_from_the_declarations() -> None:
    generate = load_script("generate_record_docs")
    text = DOC.read_text()
    assert generate.rewritten(text) == text, "run scripts/generate_record_docs.py"


def test_the_docs_say_every_kind_and_field_and_no_other() -> None:
    text = DOC.read_text()
    begin, end = text.index("<!-- the record tables:"), text.index("<!-- end of the record")
    said: set[tuple[str, str]] = set()
    heading = ""
    for line in text[begin:end].splitlines():
        if line.startswith("#### "):
            heading = line.removeprefix("#### ")
        elif found := re.match(r"\| `(\w+)` \|", line):
            said.add((heading, found.group(1)))
    declared = {(f"`{kind}`", field) for kind, d in KINDS.items() for field in _fields(d)}
    declared |= {(name, field) for part, name in PARTS.items() for field in _fields(part)}
    assert said == declared
    assert {kind for kind, _ in said} >= {"`request`", "`end`", "`etcd`", "`note`", "BODY"}


SAMPLES: dict[object, object] = {
    str: "s",
    float: 1.5,
    int: 7,
    bool: False,
    str | None: "s",
    records.Body: {"text": "", "size": 0},
    records.Client: {"address": "a:1"},
    records.Identity: {"credential": "none"},
    dict[str, Any]: {"a": 1},
    dict[str, str]: {"request": "yaml"},
    list[list[str]]: [["a", "b"]],
}


@pytest.mark.parametrize("kind", KINDS)
def test_each_constructor_writes_every_field_of_its_kind_its_record_first(kind: str) -> None:
    declared = typing.get_type_hints(KINDS[kind])
    every = {name: SAMPLES[hint] for name, hint in declared.items() if name != "record"}
    made = getattr(records, kind)(**every)
    assert list(made.items()) == [("record", kind), *every.items()]
    required = typing.get_type_hints(KINDS[kind], include_extras=True)
    always = {name for name, hint in required.items() if typing.get_origin(hint) is Required}
    least = getattr(records, kind)(**{name: every[name] for name in always - {"record"}})
    assert set(least) == always
    assert set(get_args(records.Kind)) == set(KINDS)


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.name)
def test_every_field_a_committed_recording_holds_is_declared(path: Path) -> None:
    warnings: list[str] = []
    undeclared: set[str] = set()
    seen: set[str] = set()
    for record in iter_records(path, warnings):
        kind = record["record"]
        seen.add(kind)
        undeclared |= {f"{kind}.{field}" for field in set(record) - _fields(KINDS[kind])}
        undeclared.discard(f"{kind}.record")
        for (holder, field), part in HOLDS.items():
            if holder == kind and isinstance(record.get(field), dict):
                extra = set(record[field]) - _fields(part)
                undeclared |= {f"{kind}.{field}.{name}" for name in extra}
    assert not warnings and not undeclared
    assert {"header", "request", "response", "end"} <= seen


class Lines:
    """An output that keeps each record as the recording file writes it."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, record: dict[str, Any]) -> None:
        self.lines.append(json.dumps(record, separators=(",", ":"), ensure_ascii=False))

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_the_recorder_writes_every_kind_byte_for_byte_as_it_always_has() -> None:
    """The lines below were written by the recorder before the kinds were declared."""
    out = Lines()
    recorder = Recorder([out], max_body=64)
    client: records.Client = {"address": "127.0.0.1:1", "tls": True, "alpn": "h2"}
    agent, token = (b"User-Agent", b"kubectl/v1.32.4"), (b"Authorization", b"Bearer abc")
    json_type = (b"Content-Type", b"application/json")
    server, configmaps = "https://s:6443", "/api/v1/namespaces/default/configmaps"
    events: list[ProxyEvent] = [
        RequestSeen(
            "a",
            1.5,
            "default",
            client,
            server,
            "POST",
            configmaps,
            "HTTP/2.0",
            [agent, token, json_type],
            b'{"a":1}',
            None,
        ),
        ResponseSeen("a", 1.6, 201, "Created", "HTTP/2.0", [json_type]),
        Chunk("a", 1.61, b'{"kind":"ConfigMap"}'),
        End("a", 1.7),
        RequestSeen(
            "b",
            2.0,
            "admin",
            client,
            server,
            "PUT",
            f"{configmaps}/x",
            "HTTP/1.1",
            [agent],
            None,
            "admin",
            body_follows=True,
        ),
        RequestBody("b", 2.01, b'{"b":2}', 7, end=True),
        End("b", 2.1, error="client went away"),
        RequestSeen(
            "w",
            3.0,
            "default",
            client,
            server,
            "GET",
            "/api/v1/pods?watch=true",
            "HTTP/1.1",
            [agent],
            None,
            None,
        ),
        ResponseSeen("w", 3.1, 200, "OK", "HTTP/1.1", [json_type]),
        Chunk("w", 3.2, b'{"type":"ADDED","object":{}}\n{"type":"MOD'),
        End("w", 3.3, error="peer closed connection"),
        Message("w", 3.4, "websocket", True, b"\x00ls", False),
        Stored(5.0, "/registry/configmaps/default/x", 12, False, b'{"data":{}}'),
        Stored(5.1, "/registry/configmaps/default/x", 13, True, b""),
        Note(6.0, "warning", "refused 127.0.0.1:2 with 400", id="a"),
        Note(6.1, "info", "hello"),
    ]
    for event in events:
        recorder.handle(event)
    client_json = '"client":{"address":"127.0.0.1:1","tls":true,"alpn":"h2"}'
    assert out.lines == [
        '{"record":"request","id":"a","time":1.5,"listener":"default",' + client_json + ","
        '"server":"https://s:6443","identity":{"credential":"bearer token"},"method":"POST",'
        '"path":"/api/v1/namespaces/default/configmaps","http_version":"HTTP/2.0","headers":'
        '[["User-Agent","kubectl/v1.32.4"],["Authorization","Bearer abc"],["Content-Type",'
        '"application/json"]],"body":{"text":"{\\"a\\":1}","size":7}}',
        '{"record":"response","id":"a","time":1.6,"status":201,"reason":"Created",'
        '"http_version":"HTTP/2.0","headers":[["Content-Type","application/json"]]}',
        '{"record":"end","id":"a","time":1.7,"body":{"text":"{\\"kind\\":\\"ConfigMap\\"}",'
        '"size":20}}',
        '{"record":"request","id":"b","time":2.0,"listener":"admin",' + client_json + ","
        '"server":"https://s:6443","identity":{"credential":"added by proxy","user":"admin"},'
        '"method":"PUT","path":"/api/v1/namespaces/default/configmaps/x","http_version":'
        '"HTTP/1.1","headers":[["User-Agent","kubectl/v1.32.4"]],"body":{"text":'
        '"{\\"b\\":2}","size":7}}',
        '{"record":"end","id":"b","time":2.1,"error":"client went away"}',
        '{"record":"request","id":"w","time":3.0,"listener":"default",' + client_json + ","
        '"server":"https://s:6443","identity":{"credential":"none"},"method":"GET","path":'
        '"/api/v1/pods?watch=true","http_version":"HTTP/1.1","headers":[["User-Agent",'
        '"kubectl/v1.32.4"]]}',
        '{"record":"response","id":"w","time":3.1,"status":200,"reason":"OK","http_version":'
        '"HTTP/1.1","headers":[["Content-Type","application/json"]]}',
        '{"record":"event","id":"w","seq":0,"time":3.2,"kind":"watch","data":{"text":'
        '"{\\"type\\":\\"ADDED\\",\\"object\\":{}}","size":28}}',
        '{"record":"event","id":"w","seq":1,"time":3.3,"kind":"watch","incomplete":true,'
        '"data":{"text":"{\\"type\\":\\"MOD","size":12}}',
        '{"record":"end","id":"w","time":3.3,"events":2,"error":"peer closed connection"}',
        '{"record":"event","id":"w","seq":0,"time":3.4,"kind":"websocket","transport":'
        '"websocket","from_client":true,"data":{"text":"\\u0000ls","size":3}}',
        '{"record":"etcd","time":5.0,"key":"/registry/configmaps/default/x","revision":12,'
        '"deleted":false,"value":{"text":"{\\"data\\":{}}","size":11}}',
        '{"record":"etcd","time":5.1,"key":"/registry/configmaps/default/x","revision":13,'
        '"deleted":true}',
        '{"record":"note","time":6.0,"level":"warning","message":"refused 127.0.0.1:2 with '
        '400","id":"a"}',
        '{"record":"note","time":6.1,"level":"info","message":"hello"}',
    ]
