"""Redaction on real Secrets from the lab, in JSON and protobuf, and on every other carrier."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from k8s_wiretap.capture.redact import UNREADABLE, Redactor
from k8s_wiretap.kube.requestinfo import parse_request
from k8s_wiretap.kube.sensitive import LAST_APPLIED
from k8s_wiretap.lab.layout import Layout
from k8s_wiretap.lab.readiness import admin_client
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.wire import envelope
from k8s_wiretap.wire.protowire import BYTES, Field, encode, parse
from tests.conftest import Kubectl

PASSWORD = b"hunter2-redact-me"
SECRET = f"""
apiVersion: v1
kind: Secret
metadata: {{name: redact-me, namespace: default}}
data: {{password: {base64.b64encode(PASSWORD).decode()}}}
stringData: {{note: plain-text-secret}}
"""
PROTOBUF = "application/vnd.kubernetes.protobuf"
SECRET_PATH = "/api/v1/namespaces/default/secrets/redact-me"


@pytest.fixture(scope="module")
def secret_bodies(lab: LabState, kubectl: Kubectl) -> tuple[bytes, bytes]:
    """The same real Secret as the API server sends it in JSON and in protobuf."""
    kubectl("apply", "-f", "-", stdin=SECRET)
    client = admin_client(Layout(Path(lab.kubeconfig).parent, lab.ports))
    as_json = client.get(SECRET_PATH).body
    as_proto = client.get(SECRET_PATH, accept=PROTOBUF).body
    assert envelope.is_protobuf(as_proto)
    return as_json, as_proto


def proto_secret_maps(body: bytes) -> dict[int, dict[bytes, bytes]]:
    maps: dict[int, dict[bytes, bytes]] = {2: {}, 4: {}}
    for field in parse(envelope.unwrap(body).raw):
        if field.number in maps and isinstance(field.value, bytes):
            entry = {f.number: f.value for f in parse(field.value)}
            maps[field.number][entry[1]] = entry[2]  # type: ignore[index]
    return maps


def proto_last_applied(body: bytes) -> str:
    metadata = next(f.value for f in parse(envelope.unwrap(body).raw) if f.number == 1)
    for field in parse(metadata):  # type: ignore[arg-type]
        if field.number == 12:
            entry = {f.number: f.value for f in parse(field.value)}  # type: ignore[arg-type]
            if entry[1] == LAST_APPLIED.encode():
                return entry[2].decode()  # type: ignore[union-attr]
    raise AssertionError("no last-applied annotation")


def test_json_and_protobuf_secrets_redact_to_the_same_placeholders(
    secret_bodies: tuple[bytes, bytes],
) -> None:
    as_json, as_proto = secret_bodies
    info = parse_request("GET", SECRET_PATH)
    redactor = Redactor()
    json_out, json_changed = redactor.body(info, "application/json", as_json)
    proto_out, proto_changed = redactor.body(info, PROTOBUF, as_proto)
    assert json_changed and proto_changed
    for out in (json_out, proto_out):
        assert PASSWORD not in out and base64.b64encode(PASSWORD) not in out
        assert b"plain-text-secret" not in out
    secret = json.loads(json_out)
    maps = proto_secret_maps(proto_out)
    assert base64.b64decode(secret["data"]["password"]) == maps[2][b"password"]
    assert maps[2][b"password"].startswith(b"redacted:")
    # kubectl apply put the whole file, values included, in the annotation: redacted too
    assert json.loads(secret["metadata"]["annotations"][LAST_APPLIED]) == json.loads(
        proto_last_applied(proto_out)
    )
    assert "hunter2" not in proto_last_applied(proto_out)
    # everything else is untouched
    assert secret["metadata"]["name"] == "redact-me"
    assert envelope.unwrap(proto_out).kind == "Secret"


def test_protobuf_watch_event_of_a_secret(secret_bodies: tuple[bytes, bytes]) -> None:
    _, as_proto = secret_bodies
    raw_extension = encode([Field(1, BYTES, as_proto)])
    frame = encode([Field(1, BYTES, b"ADDED"), Field(2, BYTES, raw_extension)])
    info = parse_request("GET", "/api/v1/secrets?watch=true")
    out, changed = Redactor().watch_frame(info, frame, PROTOBUF + ";stream=watch")
    assert changed and PASSWORD not in out
    inner = {f.number: f.value for f in parse(out)}
    assert inner[1] == b"ADDED"
    assert envelope.unwrap(parse(inner[2])[0].value).kind == "Secret"  # type: ignore[arg-type]


def test_json_watch_event_list_and_table() -> None:
    redactor = Redactor()
    info = parse_request("GET", "/api/v1/namespaces/default/secrets?watch=1")
    event = {"type": "MODIFIED", "object": {"kind": "Secret", "data": {"k": "c2VjcmV0"}}}
    out, _ = redactor.watch_frame(info, json.dumps(event).encode(), "application/json")
    assert b"c2VjcmV0" not in out
    listing = {"kind": "SecretList", "items": [{"data": {"k": "c2VjcmV0"}}]}
    out, _ = redactor.body(
        parse_request("GET", "/api/v1/secrets"), "application/json", json.dumps(listing).encode()
    )
    assert b"c2VjcmV0" not in out
    annotation = json.dumps({"kind": "Secret", "data": {"k": "c2VjcmV0"}})
    table = {
        "kind": "Table",
        "rows": [{"object": {"metadata": {"annotations": {LAST_APPLIED: annotation}}}}],
    }
    out, _ = redactor.body(
        parse_request("GET", "/api/v1/secrets"), "application/json", json.dumps(table).encode()
    )
    assert b"c2VjcmV0" not in out


def test_secrets_inside_anything_are_found_by_kind() -> None:
    document = {
        "kind": "List",
        "items": [
            {"kind": "ConfigMap", "data": {"a": "visible"}},
            {"kind": "Secret", "data": {"k": "c2VjcmV0"}},
        ],
    }
    out, changed = Redactor().body(
        parse_request("POST", "/api/v1/namespaces/x/configmaps"),
        "application/json",
        json.dumps(document).encode(),
    )
    assert changed and b"c2VjcmV0" not in out and b"visible" in out


def test_patches_of_every_kind() -> None:
    redactor = Redactor()
    info = parse_request("PATCH", SECRET_PATH)
    json_patch = [
        {"op": "replace", "path": "/data/password", "value": "c2VjcmV0"},
        {"op": "add", "path": "/stringData", "value": {"x": "plain"}},
        {
            "op": "add",
            "path": "/metadata/annotations/" + LAST_APPLIED.replace("/", "~1"),
            "value": json.dumps({"data": {"k": "c2VjcmV0"}}),
        },
        {"op": "replace", "path": "/metadata/labels/app", "value": "visible"},
    ]
    out, _ = redactor.body(info, "application/json-patch+json", json.dumps(json_patch).encode())
    assert b"c2VjcmV0" not in out and b"plain" not in out and b"visible" in out
    merge = {
        "data": {"password": "c2VjcmV0"},
        "metadata": {"annotations": {LAST_APPLIED: json.dumps({"stringData": {"k": "plain"}})}},
    }
    out, _ = redactor.body(
        info, "application/strategic-merge-patch+json", json.dumps(merge).encode()
    )
    assert b"c2VjcmV0" not in out and b"plain" not in out
    apply = b"apiVersion: v1\nkind: Secret\nstringData:\n  k: plain-yaml\n"
    out, changed = redactor.body(info, "application/apply-patch+yaml", apply)
    assert changed and b"plain-yaml" not in out


def test_tokens_of_token_requests_and_reviews() -> None:
    redactor = Redactor()
    request = parse_request("POST", "/api/v1/namespaces/default/serviceaccounts/default/token")
    response = {"kind": "TokenRequest", "status": {"token": "eyJ.secret.token"}}
    out, _ = redactor.body(request, "application/json", json.dumps(response).encode())
    assert b"eyJ.secret.token" not in out
    review = parse_request("POST", "/apis/authentication.k8s.io/v1/tokenreviews")
    body = {"kind": "TokenReview", "spec": {"token": "eyJ.review.token"}}
    out, _ = redactor.body(review, "application/json", json.dumps(body).encode())
    assert b"eyJ.review.token" not in out


def test_headers() -> None:
    redactor = Redactor()
    headers = redactor.headers(
        [
            ("Authorization", "Bearer abc.def.ghi"),
            (
                "Sec-WebSocket-Protocol",
                "base64url.bearer.authorization.k8s.io.c2VjcmV0, v4.channel",
            ),
            ("User-Agent", "kubectl/v1.32.4"),
        ]
    )
    assert headers[0][1].startswith("Bearer redacted:") and "abc" not in headers[0][1]
    assert "c2VjcmV0" not in headers[1][1] and headers[1][1].endswith(", v4.channel")
    assert headers[2] == ("User-Agent", "kubectl/v1.32.4")


def test_placeholders_are_keyed_and_stable() -> None:
    one, two = Redactor(b"k" * 32), Redactor(b"j" * 32)
    assert one.text("value") == one.text("value") != one.text("other")
    assert one.text("value") != two.text("value")
    assert one.placeholder(one.placeholder(b"x")) == one.placeholder(b"x")


def test_unparseable_sensitive_bodies_are_replaced_whole() -> None:
    info = parse_request("POST", "/api/v1/namespaces/d/secrets")
    assert Redactor().body(info, "application/json", b'{"data": {"k": "c2Vj') == (UNREADABLE, True)
    assert Redactor().body(info, PROTOBUF, b"k8s\x00\xff\xff") == (UNREADABLE, True)


def test_other_bodies_pass_byte_for_byte() -> None:
    body = b'{"kind":"Pod",  "spec": {"volumes": [{"secret": {"secretName": "x"}}]}}'
    info = parse_request("POST", "/api/v1/namespaces/d/pods")
    assert Redactor().body(info, "application/json", body) == (body, False)
