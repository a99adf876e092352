"""`k8s-wiretap decode` and `k8s-wiretap explain` as users run them."""

from __future__ import annotations

import base64
import http.client
import json
import struct
from pathlib import Path

from k8s_wiretap.capture.reader import load
from k8s_wiretap.lab.state import LabState
from tests.conftest import Kubectl, cli
from tests.recorded import STORY as COMMITTED


def etcd_value(lab: LabState, key: str) -> bytes:
    """A value straight from the lab's etcd (its v3 JSON gateway): what the API server stored."""
    connection = http.client.HTTPConnection("127.0.0.1", lab.ports["etcd"], timeout=10)
    request = {"key": base64.b64encode(key.encode()).decode()}
    connection.request("POST", "/v3/kv/range", body=json.dumps(request))
    kvs = json.loads(connection.getresponse().read())["kvs"]
    return base64.b64decode(kvs[0]["value"])


def test_decode_an_etcd_value(lab: LabState, kubectl: Kubectl, tmp_path: Path) -> None:
    kubectl("create", "configmap", "in-etcd", "--from-literal=where=etcd")
    value = etcd_value(lab, "/registry/configmaps/default/in-etcd")
    assert value[:4] == b"k8s\x00"  # the API server stores protobuf, in the same envelope
    (tmp_path / "value").write_bytes(value)
    result = cli("decode", str(tmp_path / "value"))
    assert result.returncode == 0, result.stderr
    stored = json.loads(result.stdout)
    assert (stored["kind"], stored["apiVersion"]) == ("ConfigMap", "v1")
    assert stored["metadata"]["name"] == "in-etcd" and stored["data"] == {"where": "etcd"}
    as_yaml = cli("decode", "-o", "yaml", str(tmp_path / "value"))
    assert "kind: ConfigMap" in as_yaml.stdout and "where: etcd" in as_yaml.stdout


def test_decode_a_protobuf_watch_stream_from_standard_input(tmp_path: Path) -> None:
    recording = load(COMMITTED)
    watch = next(
        e
        for e in recording.exchanges
        if e.component == "kubelet"
        and e.info.verb == "watch"
        and e.info.resource == "pods"
        and len(e.watch_events()) >= 3
    )
    stream = b"".join(
        struct.pack(">I", len(e.data.data)) + e.data.data for e in watch.watch_events()
    )
    (tmp_path / "stream").write_bytes(stream)
    content_type = watch.response_header("content-type")
    assert content_type.endswith(";stream=watch")
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "k8s_wiretap", "decode", "--content-type", content_type, "-"],
        input=stream,
        capture_output=True,
        check=False,
    )
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(lines) == len(watch.watch_events())
    # a watch list (the default release): no pod was bound yet, so the initial events are only the
    # bookmark
    assert lines[0]["type"] == "BOOKMARK"
    assert lines[0]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    added = next(line for line in lines if line["type"] == "ADDED")
    assert added["object"]["kind"] == "Pod" and set(added) == {"type", "object"}


def test_decode_garbage_says_why(tmp_path: Path) -> None:
    (tmp_path / "garbage").write_bytes(b"k8s\x00\x0a\xff\xff\xff")
    result = cli("decode", str(tmp_path / "garbage"))
    assert result.returncode == 1
    assert result.stderr.startswith("k8s-wiretap: undecodable: ")
    assert "6b 38 73 00" in result.stderr
    assert cli("decode", str(tmp_path / "missing")).returncode == 2


def test_explain_json_has_a_line_per_exchange_with_decoded_fields() -> None:
    result = cli("explain", str(COMMITTED), "--format", "json")
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(records) == len(load(COMMITTED).exchanges)
    fields = {
        "id",
        "time",
        "component",
        "verb",
        "group",
        "version",
        "resource",
        "subresource",
        "namespace",
        "name",
        "status",
        "request_body",
        "response_body",
    }
    assert all(fields <= set(r) for r in records)
    patch = next(
        r
        for r in records
        if r["component"] == "kubectl"
        and r["verb"] == "patch"
        and r["resource"] == "deployments"
        and r["subresource"] == ""
    )
    assert patch["patch"]["type"] == "strategic"
    assert patch["patch"]["matches_server"] is True
    assert patch["patch"]["body"]["spec"] == {"replicas": 3}
    assert {"path": "/spec/replicas", "op": "replace", "from": 2, "to": 3} in patch["patch"]["diff"]
    watch = next(
        r
        for r in records
        if r["component"] == "kubelet" and r["verb"] == "watch" and r["resource"] == "pods"
    )
    assert watch["events"][0].keys() >= {
        "type",
        "kind",
        "namespace",
        "name",
        "resource_version",
        "time",
    }
    binding = next(r for r in records if r["subresource"] == "binding")
    assert binding["request_body"]["kind"] == "Binding"
    assert binding["request_body"]["target"] == {"kind": "Node", "name": "node-1"}
