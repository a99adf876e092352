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
