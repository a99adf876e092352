"""The Kubernetes contentview, through mitmproxy's own contentview machinery.

Each test builds a real mitmproxy HTTP flow from bodies recorded on the lab
(recordings/apply-story.jsonl.gz: protobuf Pods, protobuf and JSON watch streams, Secrets),
loads `addons/contentview.py` as mitmproxy loads a script, and asks mitmproxy what it shows
(`contentviews.prettify_message`, what mitmproxy, mitmweb and mitmdump call): which view it
picked and the text. The last test runs mitmdump itself over a flow file.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cbor2
import pytest
from mitmproxy import contentviews, http, io, tcp, websocket
from mitmproxy.test import taddons, tflow

from k8s_wiretap.capture.exchange import Exchange
from tests.recorded import story

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "addons" / "contentview.py"
CBOR_STREAM = ROOT / "tests" / "wire" / "fixtures" / "leases-watch-list.cbor-seq"
PROTOBUF = "application/vnd.kubernetes.protobuf"
PLACEHOLDER = re.compile(rb"redacted:[0-9a-f]{16}")
POD = re.compile(r"^/api/v1/namespaces/[^/]+/pods/[^/?]+$")


@pytest.fixture(scope="module", autouse=True)
def loaded() -> Iterator[None]:
    """The script loaded as `mitmproxy -s addons/contentview.py` loads it (the view joins
    mitmproxy's registry, where it stays: the registry is global)."""
    with taddons.context() as context:
        context.script(str(SCRIPT))
        yield


def flow_of(exchange: Exchange, body: bytes, request_body: bytes = b"") -> http.HTTPFlow:
    """An HTTP flow as mitmproxy would have it: the exchange's request and response
    headers, and `body` as the response's content."""
    flow = tflow.tflow(resp=True)
    flow.request = http.Request.make(
        exchange.method,
        f"https://127.0.0.1:6443{exchange.path}",
        request_body,
        _fields(exchange.request.headers),
    )
    assert exchange.response is not None and exchange.status is not None
    flow.response = http.Response.make(exchange.status, body, _fields(exchange.response.headers))
    return flow


def api_flow(
    method: str, path: str, body: bytes = b"", content_type: str = "application/json"
) -> http.HTTPFlow:
    """A flow whose response (200) carries `body`."""
    flow = tflow.tflow(resp=True)
    flow.request = http.Request.make(method, f"https://127.0.0.1:6443{path}")
    flow.response = http.Response.make(200, body, {"Content-Type": content_type})
    return flow


def _fields(headers: Any) -> list[tuple[bytes, bytes]]:
    return [(name.encode(), value.encode()) for name, value in headers]


def shown(flow: http.HTTPFlow, message: Any = None) -> contentviews.ContentviewResult:
    shown_message = message or flow.response
    assert shown_message is not None
    return contentviews.prettify_message(shown_message, flow)


def stream(exchange: Exchange) -> bytes:
    """A protobuf watch's body as it crossed the wire: each event behind its 4-byte length."""
    frames = [event.data.data for event in exchange.watch_events()]
    return b"".join(struct.pack(">I", len(frame)) + frame for frame in frames)


def exchange(predicate: Any) -> Exchange:
    return next(e for e in story().exchanges if predicate(e))


def protobuf_pod() -> Exchange:
    return exchange(
        lambda e: (
            e.method == "GET"
            and e.status == 200
            and POD.match(e.path)
            and e.response_header("content-type") == PROTOBUF
        )
    )


def watch_of(resource: str, content_type: str) -> Exchange:
    return exchange(
        lambda e: (
            e.info.verb == "watch"
            and e.info.resource == resource
            and e.response_header("content-type").startswith(content_type)
            and len(e.watch_events()) > 2
        )
    )


def events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


# -- what it shows ----------------------------------------------------------------------------
def test_a_protobuf_pod_shows_as_the_json_the_server_would_send() -> None:
    pod = protobuf_pod()
    assert pod.response_body is not None and pod.response_body.data[:4] == b"k8s\x00"
    result = shown(flow_of(pod, pod.response_body.data))
    assert result.view_name == "Kubernetes"
    obj = json.loads(result.text)
    assert (obj["kind"], obj["apiVersion"]) == ("Pod", "v1")
    assert obj["metadata"]["name"] == pod.path.rsplit("/", 1)[1]
    assert list(obj)[:4] == ["kind", "apiVersion", "metadata", "spec"]  # the server's order


def test_a_protobuf_watch_shows_one_json_line_per_event() -> None:
    watch = watch_of("pods", PROTOBUF)
    result = shown(flow_of(watch, stream(watch)))
    assert result.view_name == "Kubernetes"
    lines = events(result.text)
    assert len(lines) == len(watch.watch_events())
    assert {"ADDED", "MODIFIED"} <= {line["type"] for line in lines}
    assert all(set(line) == {"type", "object"} for line in lines)
    pods = [line["object"] for line in lines if line["type"] != "BOOKMARK"]
    assert {(o["kind"], o["apiVersion"]) for o in pods} == {("Pod", "v1")}


def test_a_compressed_watch_is_read_after_mitmproxy_inflates_it() -> None:
    watch = watch_of("pods", PROTOBUF)
    flow = flow_of(watch, b"")
    assert flow.response is not None
    flow.response.headers["content-encoding"] = "gzip"
    flow.response.raw_content = gzip.compress(stream(watch))
    result = shown(flow)
    assert result.view_name == "Kubernetes" and result.description == "[decoded gzip]"
    assert len(events(result.text)) == len(watch.watch_events())


def test_a_json_watch_shows_one_line_per_event() -> None:
    watch = watch_of("pods", "application/json")
    body = b"".join(event.data.data + b"\n" for event in watch.watch_events())
    result = shown(flow_of(watch, body))
    assert result.view_name == "Kubernetes"
    assert len(events(result.text)) == len(watch.watch_events())


def test_a_cbor_watch_and_a_cbor_object_show_as_json() -> None:
    """The lab's leases as a CBOR watch list (tests/wire/fixtures), and one object as
    apimachinery writes it: self-described, strings as byte strings."""
    path = "/apis/coordination.k8s.io/v1/leases?watch=1&sendInitialEvents=true"
    flow = api_flow("GET", path, CBOR_STREAM.read_bytes(), "application/cbor-seq")
    lines = events(shown(flow).text)
    assert lines[0]["type"] == "ADDED" and lines[0]["object"]["kind"] == "Lease"
    assert lines[-1]["type"] == "BOOKMARK"

    config_map = {b"kind": b"ConfigMap", b"apiVersion": b"v1", b"metadata": {b"name": b"c"}}
    body = cbor2.dumps(cbor2.CBORTag(55799, config_map))
    flow = api_flow("GET", "/api/v1/namespaces/default/configmaps/c", body, "application/cbor")
    result = shown(flow)
    assert result.view_name == "Kubernetes"
    assert json.loads(result.text) == {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"name": "c"},
    }


def test_a_websocket_watch_message_is_one_event() -> None:
    flow = tflow.twebsocketflow()
    flow.request.path = "/api/v1/namespaces/default/configmaps?watch=true"
    assert flow.websocket is not None
    event = b'{"type":"DELETED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{}}}'
    message = websocket.WebSocketMessage(1, False, event)  # a text message from the server
    flow.websocket.messages.append(message)
    result = shown(flow, message)
    assert result.view_name == "Kubernetes"
    assert json.loads(result.text)["type"] == "DELETED"


# -- redaction ----------------------------------------------------------------------------------
def test_secrets_in_a_protobuf_watch_are_redacted_again() -> None:
    """The recording holds Secrets already redacted: the view's own placeholders replace
    the recorded ones, so none of those may show."""
    watch = watch_of("secrets", PROTOBUF)
    recorded = {p.decode() for e in watch.watch_events() for p in PLACEHOLDER.findall(e.data.data)}
    assert recorded
    text = shown(flow_of(watch, stream(watch))).text
    secrets = [line["object"] for line in events(text) if line["type"] != "BOOKMARK"]
    assert secrets and all(s["kind"] == "Secret" for s in secrets)
    assert not [p for p in recorded if p in text]
    for secret in secrets:
        for value in secret["data"].values():
            assert PLACEHOLDER.fullmatch(base64.b64decode(value))


def test_secret_values_and_tokens_never_show() -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "db", "namespace": "default"},
        "data": {"password": "aHVudGVyMg=="},
        "stringData": {"token": "hunter3"},
    }
    flow = api_flow("POST", "/api/v1/namespaces/default/secrets", json.dumps(secret).encode())
    flow.request.headers["content-type"] = "application/json"
    flow.request.content = json.dumps(secret).encode()
    for message in (flow.request, flow.response):
        text = shown(flow, message).text
        assert "aHVudGVyMg==" not in text and "hunter3" not in text
        assert json.loads(text)["stringData"]["token"].startswith("redacted:")

    review = {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "status": {"token": "eyJhbGciOi.secret.jwt", "expirationTimestamp": "x"},
    }
    path = "/api/v1/namespaces/default/serviceaccounts/default/token"
    text = shown(api_flow("POST", path, json.dumps(review).encode())).text
    assert "eyJhbGciOi" not in text and "redacted:" in text


# -- choosing itself, and bodies it cannot read ---------------------------------------------------
def test_it_picks_kubernetes_bodies_and_leaves_others_to_mitmproxys_views() -> None:
    body = b'{"kind":"Deployment","apiVersion":"apps/v1"}'
    deployment = "/apis/apps/v1/namespaces/default/deployments/web"
    assert shown(api_flow("GET", deployment, body)).view_name == "Kubernetes"
    assert shown(api_flow("GET", "/shop/cart", body)).view_name == "JSON"
    envelope = protobuf_pod().response_body.data  # type: ignore[union-attr]
    assert shown(api_flow("GET", "/elsewhere", envelope, "")).view_name == "Kubernetes"


def test_a_malformed_body_says_undecodable_and_why() -> None:
    path = "/api/v1/namespaces/default/pods/web"
    result = shown(api_flow("GET", path, b"k8s\x00\x0a\xff\xff", PROTOBUF))
    assert result.view_name == "Kubernetes"  # not mitmproxy's fallback to raw after a raise
    assert result.text.startswith("undecodable: ")

    cut = struct.pack(">I", 1000) + b"\x0a\x05ADDED"  # a watch cut off inside its only event
    result = shown(
        api_flow("GET", f"{path.rsplit('/', 1)[0]}?watch=true", cut, f"{PROTOBUF};stream=watch")
    )
    assert result.view_name == "Kubernetes" and result.text.startswith("undecodable: ")

    chosen = contentviews.prettify_message(
        tcp.TCPMessage(False, b"\xff\x00"), tflow.ttcpflow(), "kubernetes"
    )
    assert chosen.view_name == "Kubernetes" and chosen.text.startswith("undecodable: ")


# -- mitmdump -----------------------------------------------------------------------------------
def test_mitmdump_shows_a_flow_file_decoded(tmp_path: Path) -> None:
    """`mitmdump -n -r FLOWS -s addons/contentview.py --flow-detail 3`, as a user runs it,
    over flows mitmproxy wrote (built from the recording's bodies)."""
    pod, watch = protobuf_pod(), watch_of("pods", PROTOBUF)
    flows = tmp_path / "flows.mitm"
    with flows.open("wb") as file:
        writer = io.FlowWriter(file)
        writer.add(flow_of(pod, pod.response_body.data))  # type: ignore[union-attr]
        writer.add(flow_of(watch, stream(watch)))
    out = mitmdump(flows, "-s", str(SCRIPT))
    assert '"kind": "Pod"' in out and '"apiVersion": "v1"' in out
    assert f'"name": "{pod.path.rsplit("/", 1)[1]}"' in out
    assert '{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1"' in out
    assert '"type":"ADDED"' not in mitmdump(flows)  # mitmproxy alone cannot read them


def mitmdump(flows: Path, *args: str) -> str:
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "mitmdump"),
            "-n",
            "-r",
            str(flows),
            "--flow-detail",
            "4",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout
