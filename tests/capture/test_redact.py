"""Redaction on real Secrets from the lab, in JSON and protobuf, and on every other carrier."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

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
            key, value = entry[1], entry[2]
            assert isinstance(key, bytes) and isinstance(value, bytes)
            maps[field.number][key] = value
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


APPLIED = json.dumps(json.dumps({"kind": "Secret", "data": {"k": "c2VjcmV0"}})).encode()


@pytest.mark.parametrize(
    "text",
    [
        # each key redaction changes in a Secret, spelt plainly and with escapes
        b'{"kind":"List","items":[{"kind":"Secret","data":{"k":"c2VjcmV0"}}]}',
        b'{"kind":"List","items":[{"kind":"Secret","d\\u0061ta":{"k":"c2VjcmV0"}}]}',
        b'{"kind":"List","items":[{"kind":"Secret","stringData":{"k":"c2VjcmV0"}}]}',
        b'{"kind":"List","items":[{"kind":"Secret","string\\u0044ata":{"k":"c2VjcmV0"}}]}',
        b'{"kind":"List","items":[{"kind":"Secret","data": "c2VjcmV0"}]}',
        b'{"kind":"List","items":[{"kind":"Secret","metadata":{"annotations":{'
        b'"kubectl.kubernetes.io\\/last-applied-configuration":' + APPLIED + b"}}}]}",
        b'{"kind":"List","items":[{"kind":"Secret","metadata":{"annotations":{'
        b'"kubectl.kubernetes.io/last-applied-\\u0063onfiguration":' + APPLIED + b"}}}]}",
    ],
)
def test_a_secret_found_by_kind_is_redacted_however_its_keys_are_spelt(text: bytes) -> None:
    """A body of a resource that is not sensitive is parsed when it names the kind Secret
    and may hold a key redaction changes, escaped or not (`_no_secret_values`)."""
    out, changed = Redactor().body(
        parse_request("POST", "/api/v1/namespaces/x/configmaps"), "application/json", text
    )
    assert changed and b"c2VjcmV0" not in out, out


def test_a_body_naming_the_kind_secret_without_its_values_is_kept_as_it_is() -> None:
    """A discovery document names the kind Secret and holds no Secret's values: its bytes
    are kept as they are (spaces and all), unparsed, and `seen` gets nothing."""
    text = (
        b'{"kind":"APIResourceList","resources":[{"name":"secrets", "kind":"Secret",'
        b'"responseKind":{"group":"","version":"","kind":"Secret"},"verbs":["get"]}]}'
    )
    seen: set[bytes] = set()
    info = parse_request("GET", "/api/v1")
    assert Redactor().body(info, "application/json", text, seen) == (text, False)
    assert not seen


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
    # nothing passes through: a placeholder redacted again is a new value, not itself
    assert one.placeholder(one.placeholder(b"x")) != one.placeholder(b"x")


def test_unparseable_sensitive_bodies_are_replaced_whole() -> None:
    info = parse_request("POST", "/api/v1/namespaces/d/secrets")
    assert Redactor().body(info, "application/json", b'{"data": {"k": "c2Vj') == (UNREADABLE, True)
    assert Redactor().body(info, PROTOBUF, b"k8s\x00\xff\xff") == (UNREADABLE, True)


def test_other_bodies_pass_byte_for_byte() -> None:
    body = b'{"kind":"Pod",  "spec": {"volumes": [{"secret": {"secretName": "x"}}]}}'
    info = parse_request("POST", "/api/v1/namespaces/d/pods")
    assert Redactor().body(info, "application/json", body) == (body, False)


# -- each value is redacted exactly once, whatever it looks like ----------------------------
KEY = b"k" * 32
LOOKALIKE = b"redacted:0123456789abcdef"  # a real value that looks like a placeholder
VALUES = [PASSWORD, LOOKALIKE]


def once(value: bytes) -> bytes:
    """What one redaction of `value` under KEY gives (computed here, not by the Redactor)."""
    return b"redacted:" + hmac.new(KEY, value, hashlib.sha256).hexdigest()[:16].encode()


def b64(value: bytes) -> str:
    return base64.b64encode(value).decode()


def applied_of(value: bytes) -> dict[str, Any]:
    """What `kubectl apply` puts in the last-applied annotation: the file, values included."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s"},
        "data": {"k": b64(value)},
        "stringData": {"s": value.decode()},
    }


def json_secret(value: bytes, *, kind: bool = True) -> dict[str, Any]:
    secret: dict[str, Any] = {
        "metadata": {"name": "s", "annotations": {LAST_APPLIED: json.dumps(applied_of(value))}},
        "data": {"k": b64(value)},
        "stringData": {"s": value.decode()},
    }
    return {"apiVersion": "v1", "kind": "Secret", **secret} if kind else secret


def assert_applied_once(text: str, value: bytes) -> None:
    applied = json.loads(text)
    assert applied["data"] == {"k": b64(once(value))}
    assert applied["stringData"] == {"s": once(value).decode()}


def assert_secret_once(secret: dict[str, Any], value: bytes) -> None:
    assert secret["data"] == {"k": b64(once(value))}
    assert secret["stringData"] == {"s": once(value).decode()}
    assert_applied_once(secret["metadata"]["annotations"][LAST_APPLIED], value)


def redact_json(
    path: str, document: Any, content_type: str = "application/json", method: str = "GET"
) -> Any:
    body = json.dumps(document).encode()
    out, changed = Redactor(KEY).body(parse_request(method, path), content_type, body)
    assert changed
    return json.loads(out)


@pytest.mark.parametrize("value", VALUES, ids=["plain", "placeholder-lookalike"])
def test_json_secrets_are_redacted_exactly_once_wherever_they_are(value: bytes) -> None:
    """A Secret is found by where it is (a secrets request) and by its kind; either way each
    value goes through the HMAC once: a second pass would change the placeholder, and a pass
    that skipped values looking like placeholders would keep them in clear."""
    secrets = "/api/v1/namespaces/default/secrets"
    assert_secret_once(redact_json(f"{secrets}/s", json_secret(value)), value)
    listing = {"kind": "SecretList", "items": [json_secret(value, kind=False), json_secret(value)]}
    for item in redact_json(secrets, listing)["items"]:
        assert_secret_once(item, value)
    table = {"kind": "Table", "rows": [{"cells": ["s"], "object": json_secret(value)}]}
    assert_secret_once(redact_json(secrets, table)["rows"][0]["object"], value)
    anywhere = {"kind": "List", "items": [json_secret(value)]}  # found by kind only
    assert_secret_once(
        redact_json("/api/v1/namespaces/default/configmaps", anywhere)["items"][0], value
    )

    info = parse_request("GET", f"{secrets}?watch=1")
    event = {"type": "ADDED", "object": json_secret(value)}
    out, changed = Redactor(KEY).watch_frame(info, json.dumps(event).encode(), "application/json")
    assert changed
    assert_secret_once(json.loads(out)["object"], value)


@pytest.mark.parametrize("value", VALUES, ids=["plain", "placeholder-lookalike"])
def test_patches_are_redacted_exactly_once(value: bytes) -> None:
    path = "/api/v1/namespaces/default/secrets/s"
    pointer = "/metadata/annotations/" + LAST_APPLIED.replace("/", "~1")
    json_patch = [
        {"op": "replace", "path": "/data/k", "value": b64(value)},
        {"op": "replace", "path": "/stringData/s", "value": value.decode()},
        {"op": "replace", "path": pointer, "value": json.dumps(applied_of(value))},
        {"op": "add", "path": "/data", "value": {"k": b64(value)}},
        {"op": "replace", "path": "", "value": json_secret(value)},  # also found by kind
    ]
    out = redact_json(path, json_patch, "application/json-patch+json", "PATCH")
    assert out[0]["value"] == b64(once(value))
    assert out[1]["value"] == once(value).decode()
    assert_applied_once(out[2]["value"], value)
    assert out[3]["value"] == {"k": b64(once(value))}
    assert_secret_once(out[4]["value"], value)
    merge = json_secret(value, kind=False)
    for content_type in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
        assert_secret_once(redact_json(path, merge, content_type, "PATCH"), value)
    apply = yaml.safe_dump(json_secret(value)).encode()
    out_bytes, changed = Redactor(KEY).body(
        parse_request("PATCH", path), "application/apply-patch+yaml", apply
    )
    assert changed
    assert_secret_once(json.loads(out_bytes), value)


def proto_secret(value: bytes) -> bytes:
    """A core/v1 Secret in its protobuf envelope: data k, stringData s, last-applied."""
    annotation = encode(
        [
            Field(1, BYTES, LAST_APPLIED.encode()),
            Field(2, BYTES, json.dumps(applied_of(value)).encode()),
        ]
    )
    metadata = encode([Field(1, BYTES, b"s"), Field(12, BYTES, annotation)])
    raw = encode(
        [
            Field(1, BYTES, metadata),
            Field(2, BYTES, encode([Field(1, BYTES, b"k"), Field(2, BYTES, value)])),
            Field(4, BYTES, encode([Field(1, BYTES, b"s"), Field(2, BYTES, value)])),
        ]
    )
    type_meta = encode([Field(1, BYTES, b"v1"), Field(2, BYTES, b"Secret")])
    return envelope.MAGIC + encode([Field(1, BYTES, type_meta), Field(2, BYTES, raw)])


def assert_proto_secret_once(body: bytes, value: bytes) -> None:
    assert proto_secret_maps(body) == {2: {b"k": once(value)}, 4: {b"s": once(value)}}
    assert_applied_once(proto_last_applied(body), value)


@pytest.mark.parametrize("value", VALUES, ids=["plain", "placeholder-lookalike"])
def test_protobuf_secrets_and_watch_events_are_redacted_exactly_once(value: bytes) -> None:
    redactor = Redactor(KEY)
    info = parse_request("GET", "/api/v1/namespaces/default/secrets/s")
    out, changed = redactor.body(info, PROTOBUF, proto_secret(value))
    assert changed
    assert_proto_secret_once(out, value)
    frame = encode(
        [
            Field(1, BYTES, b"MODIFIED"),
            Field(2, BYTES, encode([Field(1, BYTES, proto_secret(value))])),
        ]
    )
    watch = parse_request("GET", "/api/v1/secrets?watch=true")
    out, changed = redactor.watch_frame(watch, frame, PROTOBUF + ";stream=watch")
    assert changed
    fields = {f.number: f.value for f in parse(out)}
    inner = parse(fields[2])[0].value  # type: ignore[arg-type]
    assert isinstance(inner, bytes)
    assert_proto_secret_once(inner, value)


def test_credentials_that_look_like_placeholders_are_redacted() -> None:
    redactor = Redactor(KEY)
    headers = redactor.headers(
        [("Authorization", f"Bearer {LOOKALIKE.decode()}"), ("Cookie", LOOKALIKE.decode())]
    )
    assert headers == [
        ("Authorization", f"Bearer {once(LOOKALIKE).decode()}"),
        ("Cookie", once(LOOKALIKE).decode()),
    ]
    request = parse_request("POST", "/api/v1/namespaces/default/serviceaccounts/default/token")
    response = {"kind": "TokenRequest", "status": {"token": LOOKALIKE.decode()}}
    out, changed = redactor.body(request, "application/json", json.dumps(response).encode())
    assert changed and json.loads(out)["status"]["token"] == once(LOOKALIKE).decode()


def test_a_real_secret_whose_values_look_like_placeholders(lab: LabState, kubectl: Kubectl) -> None:
    """The same Secret from the API server, applied by kubectl (so its last-applied annotation
    holds the values too), in JSON and in protobuf: every copy redacted once, all equal."""
    name = "looks-redacted"
    kubectl(
        "apply",
        "-f",
        "-",
        stdin=f"apiVersion: v1\nkind: Secret\nmetadata: {{name: {name}, namespace: default}}\n"
        f"data: {{k: {b64(LOOKALIKE)}}}\nstringData: {{s: '{LOOKALIKE.decode()}'}}\n",
    )
    client = admin_client(Layout(Path(lab.kubeconfig).parent, lab.ports))
    path = f"/api/v1/namespaces/default/secrets/{name}"
    info = parse_request("GET", path)
    redactor = Redactor(KEY)
    as_json, _ = redactor.body(info, "application/json", client.get(path).body)
    as_proto, _ = redactor.body(info, PROTOBUF, client.get(path, accept=PROTOBUF).body)
    secret = json.loads(as_json)
    # the server turned stringData into data: both keys hold the value, redacted once
    assert secret["data"] == {"k": b64(once(LOOKALIKE)), "s": b64(once(LOOKALIKE))}
    assert proto_secret_maps(as_proto)[2] == {b"k": once(LOOKALIKE), b"s": once(LOOKALIKE)}
    applied = secret["metadata"]["annotations"][LAST_APPLIED]
    assert_applied_once(applied, LOOKALIKE)
    assert json.loads(proto_last_applied(as_proto)) == json.loads(applied)
    assert LOOKALIKE not in as_json + as_proto and b64(LOOKALIKE).encode() not in as_json


def test_secret_fields_of_the_wrong_shape_are_redacted_whole() -> None:
    """A client may send anything; the API server would reject these, the recording still
    must not hold them in clear."""
    document = {
        "kind": "Secret",
        "data": "c2VjcmV0",  # not a map
        "stringData": {"k": {"nested": "plain-nested"}, "gone": None},
        "metadata": {"annotations": {LAST_APPLIED: json.dumps(["plain-listed"])}},
    }
    out = redact_json("/api/v1/namespaces/d/secrets", document, method="POST")
    text = json.dumps(out)
    assert "c2VjcmV0" not in text and "plain-nested" not in text and "plain-listed" not in text
    assert out["stringData"]["gone"] is None  # a merge patch deleting a key stays one
