"""The sink writes an import's records through `capture/records.py`, byte for byte as it
always has: each record's fields in the order the importer gives them."""

from __future__ import annotations

from pathlib import Path

from k8s_wiretap.importers.sink import Sink


def test_the_sink_writes_every_kind_byte_for_byte_as_it_always_has(tmp_path: Path) -> None:
    """The lines below were written by the sink before the kinds were declared."""
    path = tmp_path / "import.jsonl"
    with Sink(path, source="HAR file", max_body=64) as sink:
        sink.request(
            "i1",
            100000.0,
            "GET",
            "/api/v1/pods",
            [("User-Agent", "kubectl")],
            server="https://s",
            http_version="HTTP/1.1",
            listener="imported",
            identity={"credential": "none"},
            client={"address": "1.2.3.4:5"},
            imported_as={"request": "yaml"},
        )
        sink.response("i1", 100000.1, 200, [("Content-Type", "application/json")], reason="OK")
        sink.end("i1", 100000.2, b'{"kind":"PodList"}', audit={"stages": ["ResponseComplete"]})
        sink.request(
            "i2",
            110000.0,
            "GET",
            "/api/v1/pods?watch=1",
            [],
            client={"address": "1.2.3.4"},
            identity={"credential": "audit log", "user": "u"},
            audit={"auditID": "q"},
        )
        sink.response("i2", 110000.1, 200, [("Content-Type", "application/json")])
        sink.event("i2", 110000.2, b'{"type":"ADDED","object":{}}')
        sink.end("i2", 110000.3, events=1, error="x")
        sink.note("a note", id="i2")
    header, *lines, note = path.read_text().splitlines()
    assert header.startswith('{"record":"header","format":"k8s-wiretap-recording","version":1,')
    assert header.endswith(',"redacted":true,"max_body":64,"imported":"HAR file"}')
    assert note.startswith('{"record":"note","time":')
    assert note.endswith(',"level":"warning","message":"a note","id":"i2"}')
    assert lines == [
        '{"record":"request","id":"i1","time":100000.0,"server":"https://s","http_version":'
        '"HTTP/1.1","listener":"imported","identity":{"credential":"none"},"client":'
        '{"address":"1.2.3.4:5"},"imported_as":{"request":"yaml"},"method":"GET","path":'
        '"/api/v1/pods","headers":[["User-Agent","kubectl"]]}',
        '{"record":"response","id":"i1","time":100000.1,"status":200,"reason":"OK","headers":'
        '[["Content-Type","application/json"]]}',
        '{"record":"end","id":"i1","time":100000.2,"audit":{"stages":["ResponseComplete"]},'
        '"body":{"text":"{\\"kind\\":\\"PodList\\"}","size":18}}',
        '{"record":"request","id":"i2","time":110000.0,"client":{"address":"1.2.3.4"},'
        '"identity":{"credential":"audit log","user":"u"},"audit":{"auditID":"q"},"method":'
        '"GET","path":"/api/v1/pods?watch=1","headers":[]}',
        '{"record":"response","id":"i2","time":110000.1,"status":200,"headers":[["Content-Type",'
        '"application/json"]]}',
        '{"record":"event","id":"i2","seq":0,"time":110000.2,"kind":"watch","data":{"text":'
        '"{\\"type\\":\\"ADDED\\",\\"object\\":{}}","size":28}}',
        '{"record":"end","id":"i2","time":110000.3,"events":1,"error":"x"}',
    ]


def _exchange_at_once(sink: Sink, whole: bool, status: int | None, said: dict[str, object]) -> None:
    """A Secret created, its answer a Status quoting the value the request carried: by
    `Sink.whole`, or a record at a time (`begin`, `status_of`, `complete`)."""
    body = b'{"kind":"Secret","metadata":{"name":"s"},"data":{"token":"c2VjcmV0LXZhbHVl"}}'
    answer = b'{"kind":"Secret","metadata":{"name":"s"},"data":{"token":"b3RoZXI="}}'
    path = "/api/v1/namespaces/d/secrets"
    headers = [("User-Agent", "kubectl"), ("Content-Type", "application/json")]
    fields = {"identity": {"credential": "audit log", "user": "u"}}
    if whole:
        audit: dict[str, object] = {"stages": ["ResponseComplete"], "responseStatus": None}
        sink.whole(
            "a1",
            100000.0,
            "POST",
            path,
            headers,
            body,
            dict(fields),
            100000.5,
            status,
            ("application/json", answer),
            audit,
            said,
        )
        return
    state = sink.begin("a1", 100000.0, "POST", path, headers, body, dict(fields))
    masked = sink.status_of(state, state.info, said)
    sink.complete(
        state,
        "a1",
        100000.5,
        status,
        [("Content-Type", "application/json")] if status is not None else [],
        answer,
        {"stages": ["ResponseComplete"], "responseStatus": masked},
    )


def test_an_exchange_written_at_once_is_the_one_written_a_record_at_a_time(
    tmp_path: Path,
) -> None:
    """`Sink.whole` writes what `begin` and `complete` write: the request's body redacted,
    its Status masked of the value that body carried, the answer's body redacted (with no
    response head, as a body of no type); nothing of the secret reaches the file."""
    said = {"kind": "Status", "message": "secret-value is taken", "code": 409}
    for status in (409, None):
        lines = []
        for whole in (False, True):
            path = tmp_path / f"{whole}-{status}.jsonl"
            with Sink(path, source="audit log", key=b"k" * 32) as sink:
                _exchange_at_once(sink, whole, status, dict(said))
            lines.append(path.read_bytes().split(b"\n", 1)[1])  # the header's time aside
        assert lines[0] == lines[1]
        assert b"c2VjcmV0LXZhbHVl" not in lines[1] and b"secret-value" not in lines[1]
        assert b"b3RoZXI=" not in lines[1]
        assert lines[1].count(b"\n") == (3 if status is not None else 2)
