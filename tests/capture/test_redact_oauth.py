"""Redaction of OpenShift's OAuth tokens (kube/sensitive.py OAUTH_TOKENS) on the proxy path:
the Redactor's `body` and `watch_frame`, and the recorder's file (paths too).

The bodies are built from the JSON names and protobuf tags of openshift/api's
oauth/v1/types.go (commit 21fe982a9a631e04f02ba81a52d1a6b1dee543b5): OAuthAccessToken,
OAuthAuthorizeToken, UserOAuthAccessToken and their lists. A name that is the token itself
is the shape of OpenShift before 4.6; a `sha256~` name (a hash of the token) of 4.6 on.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import cbor2
import yaml

from k8s_wiretap.capture.redact import UNREADABLE, Redactor, is_placeholder
from k8s_wiretap.kube.requestinfo import parse_request
from k8s_wiretap.wire import envelope
from k8s_wiretap.wire.cborseq import SELF_DESCRIBED
from k8s_wiretap.wire.protowire import BYTES, Field, encode
from tests.capture.proxied import record_exchange

API = "/apis/oauth.openshift.io/v1"
RAW_NAME = "kS8dPx3v0QmYc4rTnLw9aZbE2fGhJ1uVoXyI7sRtBqM"  # a pre-4.6 name: the token
HASHED = "sha256~Jb0kJXQ1V6yDbZnqkF0tC7e1rVh3sPqL9wXmA2oYtUc"  # a 4.6 name: its hash
REFRESH = "refresh-7Yh2Lp9QwErT5uIo"
AUTHORIZE = "authorize-3Nm8Bv6CxZa1SdFg"
CHALLENGE = "challenge-E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw"
CLIENT_SECRET = "client-secret-Vd5Rk2Wn8Tq4Yp1Zs7"
OLD_CLIENT_SECRET = "client-secret-old-Hx3Jc6Lm9Pb2Gf5"
SECRETS = (RAW_NAME, REFRESH, AUTHORIZE, CHALLENGE, CLIENT_SECRET, OLD_CLIENT_SECRET)
JSON = "application/json"
PROTOBUF = "application/vnd.kubernetes.protobuf"


def access_token(name: str, kind: str = "OAuthAccessToken") -> dict[str, Any]:
    return {
        "kind": kind,
        "apiVersion": "oauth.openshift.io/v1",
        "metadata": {"name": name, "uid": "0b1e2a7c-5d0f-4b7e-9a51-3c2d8e6f0a11"},
        "clientName": "openshift-challenging-client",
        "expiresIn": 86400,
        "scopes": ["user:full"],
        "redirectURI": "https://oauth-openshift.apps.example.com/oauth/token/implicit",
        "userName": "kube:admin",
        "userUID": "3f9c1d2e-8a7b-4c6d-9e0f-1a2b3c4d5e6f",
        "authorizeToken": AUTHORIZE,
        "refreshToken": REFRESH,
        "inactivityTimeoutSeconds": 300,
    }


def authorize_token(name: str) -> dict[str, Any]:
    return {
        "kind": "OAuthAuthorizeToken",
        "apiVersion": "oauth.openshift.io/v1",
        "metadata": {"name": name},
        "clientName": "console",
        "expiresIn": 300,
        "scopes": ["user:full"],
        "redirectURI": "https://console-openshift-console.apps.example.com/auth/callback",
        "state": "c3RhdGU",
        "userName": "developer",
        "userUID": "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9",
        "codeChallenge": CHALLENGE,
        "codeChallengeMethod": "S256",
    }


def assert_no_secret(out: bytes) -> None:
    for value in SECRETS:
        assert value.encode() not in out, value


def redact(method: str, path: str, document: Any, content_type: str = JSON) -> Any:
    out, changed = Redactor().body(
        parse_request(method, path), content_type, json.dumps(document).encode()
    )
    assert changed
    assert_no_secret(out)
    return json.loads(out)


def test_an_access_token_its_fields_and_a_name_that_is_the_token() -> None:
    out = redact("POST", f"{API}/oauthaccesstokens", access_token(RAW_NAME))
    assert is_placeholder(out["metadata"]["name"])
    assert is_placeholder(out["refreshToken"]) and is_placeholder(out["authorizeToken"])
    assert out["userName"] == "kube:admin" and out["scopes"] == ["user:full"]


def test_a_hashed_name_is_kept() -> None:
    out = redact("GET", f"{API}/oauthaccesstokens/{HASHED}", access_token(HASHED))
    assert out["metadata"]["name"] == HASHED
    assert is_placeholder(out["refreshToken"])


def test_user_access_tokens_and_authorize_tokens() -> None:
    user = access_token(RAW_NAME, "UserOAuthAccessToken")
    out = redact("GET", f"{API}/useroauthaccesstokens/{RAW_NAME}", user)
    assert is_placeholder(out["metadata"]["name"]) and is_placeholder(out["refreshToken"])
    out = redact("POST", f"{API}/oauthauthorizetokens", authorize_token(RAW_NAME))
    assert is_placeholder(out["codeChallenge"]) and out["codeChallengeMethod"] == "S256"
    assert is_placeholder(out["metadata"]["name"]) and out["state"] == "c3RhdGU"


def test_a_list_a_table_and_watch_events() -> None:
    listing = {
        "kind": "OAuthAccessTokenList",
        "apiVersion": "oauth.openshift.io/v1",
        "metadata": {"resourceVersion": "81231"},
        "items": [
            {k: v for k, v in access_token(RAW_NAME).items() if k not in ("kind", "apiVersion")},
            {k: v for k, v in access_token(HASHED).items() if k not in ("kind", "apiVersion")},
        ],
    }
    out = redact("GET", f"{API}/oauthaccesstokens", listing)
    assert is_placeholder(out["items"][0]["metadata"]["name"])
    assert out["items"][1]["metadata"]["name"] == HASHED
    table = {  # what `oc get oauthaccesstokens` is answered (meta/v1 Table)
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "columnDefinitions": [
            {"name": "Name", "type": "string", "format": "name"},
            {"name": "User Name", "type": "string", "format": ""},
        ],
        "rows": [
            {"cells": [RAW_NAME, "kube:admin"], "object": access_token(RAW_NAME)},
            {"cells": [HASHED, "developer"]},
        ],
    }
    out = redact("GET", f"{API}/oauthaccesstokens", table)
    assert out["rows"][1]["cells"] == [HASHED, "developer"]
    redactor = Redactor()
    watch = parse_request("GET", f"{API}/oauthaccesstokens?watch=1")
    event = {"type": "ADDED", "object": access_token(RAW_NAME)}
    frame, changed = redactor.watch_frame(watch, json.dumps(event).encode(), JSON)
    assert changed
    assert_no_secret(frame)
    assert json.loads(frame)["object"]["clientName"] == "openshift-challenging-client"


def test_yaml_and_cbor_bodies() -> None:
    redactor = Redactor()
    info = parse_request("POST", f"{API}/oauthauthorizetokens")
    body = yaml.safe_dump(authorize_token(RAW_NAME)).encode()
    out, changed = redactor.body(info, "application/yaml", body)
    assert changed
    assert_no_secret(out)
    body = SELF_DESCRIBED + cbor2.dumps(access_token(RAW_NAME))
    info = parse_request("POST", f"{API}/oauthaccesstokens")
    out, changed = redactor.body(info, "application/cbor", body)
    assert changed
    assert_no_secret(out)
    assert cbor2.loads(out[len(SELF_DESCRIBED) :])["userName"] == "kube:admin"


def test_patches() -> None:
    path = f"{API}/oauthaccesstokens/{HASHED}"
    json_patch = [
        {"op": "replace", "path": "/refreshToken", "value": REFRESH},
        {"op": "replace", "path": "/metadata/name", "value": RAW_NAME},
        {"op": "replace", "path": "/inactivityTimeoutSeconds", "value": 600},
    ]
    out = redact("PATCH", path, json_patch, "application/json-patch+json")
    assert out[2]["value"] == 600
    merge = {"authorizeToken": AUTHORIZE, "inactivityTimeoutSeconds": 600}
    out = redact("PATCH", path, merge, "application/merge-patch+json")
    assert out["inactivityTimeoutSeconds"] == 600


def test_an_oauth_client_its_secrets() -> None:
    client = {
        "kind": "OAuthClient",
        "apiVersion": "oauth.openshift.io/v1",
        "metadata": {"name": "console"},
        "secret": CLIENT_SECRET,
        "additionalSecrets": [OLD_CLIENT_SECRET],
        "redirectURIs": ["https://console-openshift-console.apps.example.com/auth/callback"],
        "grantMethod": "auto",
    }
    out = redact("PUT", f"{API}/oauthclients/console", client)
    assert out["metadata"]["name"] == "console" and out["grantMethod"] == "auto"
    assert is_placeholder(out["secret"]) and is_placeholder(out["additionalSecrets"][0])
    patch = [
        {"op": "add", "path": "/additionalSecrets/-", "value": CLIENT_SECRET},
        {"op": "replace", "path": "/additionalSecrets", "value": [OLD_CLIENT_SECRET]},
    ]
    redact("PATCH", f"{API}/oauthclients/console", patch, "application/json-patch+json")


def proto_access_token(name: str) -> bytes:
    """An OAuthAccessToken in its protobuf envelope, by types.go's protobuf tags."""
    raw = encode(
        [
            Field(1, BYTES, encode([Field(1, BYTES, name.encode())])),  # metadata.name
            Field(2, BYTES, b"openshift-challenging-client"),
            Field(8, BYTES, AUTHORIZE.encode()),
            Field(9, BYTES, REFRESH.encode()),
        ]
    )
    type_meta = encode(
        [Field(1, BYTES, b"oauth.openshift.io/v1"), Field(2, BYTES, b"OAuthAccessToken")]
    )
    return envelope.MAGIC + encode([Field(1, BYTES, type_meta), Field(2, BYTES, raw)])


def test_protobuf_bodies_and_watch_events_are_replaced_whole() -> None:
    redactor = Redactor()
    info = parse_request("GET", f"{API}/oauthaccesstokens/{HASHED}")
    assert redactor.body(info, PROTOBUF, proto_access_token(HASHED)) == (UNREADABLE, True)
    watch = parse_request("GET", f"{API}/oauthaccesstokens?watch=1")
    frame = encode(
        [
            Field(1, BYTES, b"ADDED"),
            Field(2, BYTES, encode([Field(1, BYTES, proto_access_token(RAW_NAME))])),
        ]
    )
    assert redactor.watch_frame(watch, frame, PROTOBUF + ";stream=watch") == (UNREADABLE, True)


def test_a_status_keeps_a_hashed_name_and_masks_a_token_name() -> None:
    for name, kept in ((RAW_NAME, False), (HASHED, True)):
        status = {
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "message": f'oauthaccesstokens.oauth.openshift.io "{name}" not found',
            "reason": "NotFound",
            "details": {"name": name, "group": "oauth.openshift.io", "kind": "oauthaccesstokens"},
            "code": 404,
        }
        info = parse_request("GET", f"{API}/oauthaccesstokens/{name}")
        out, _ = Redactor().body(info, JSON, json.dumps(status).encode())
        assert (name.encode() in out) is kept, out
        assert b"not found" in out


def record(
    path: Path, redactor: Redactor, method: str, target: str, sent: Any, answer: Any, code: int
) -> None:
    """One exchange as the proxy's recorder writes it."""
    headers = [(b"User-Agent", b"oc/4.5.0 (linux/amd64) kubernetes/abcdef0")]
    body = json.dumps(sent).encode() if sent is not None else b""
    if body:
        headers.append((b"Content-Type", JSON.encode()))
    answered = json.dumps(answer).encode()
    record_exchange(path, redactor, (method, target, headers, body), code, JSON, answered)


def test_the_recording_holds_no_token_in_a_path_or_body(tmp_path: Path) -> None:
    refused = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": f'oauthaccesstokens.oauth.openshift.io "{RAW_NAME}" not found',
        "reason": "NotFound",
        "details": {"name": RAW_NAME, "group": "oauth.openshift.io", "kind": "oauthaccesstokens"},
        "code": 404,
    }
    exchanges: tuple[tuple[str, str, Any, Any, int], ...] = (
        ("GET", f"{API}/oauthaccesstokens/{RAW_NAME}", None, refused, 404),
        ("DELETE", f"{API}/oauthaccesstokens/{RAW_NAME}", None, access_token(RAW_NAME), 200),
        ("GET", f"{API}/oauthaccesstokens?fieldSelector=metadata.name%3D{RAW_NAME}", None, {}, 200),
        ("POST", f"{API}/oauthauthorizetokens", authorize_token(RAW_NAME), {}, 201),
        ("GET", f"{API}/oauthaccesstokens/{HASHED}", None, access_token(HASHED), 200),
    )
    paths, redactor = [], Redactor()  # one key: one token, one placeholder
    for n, (method, target, sent, answer, code) in enumerate(exchanges):
        out = tmp_path / f"{n}.jsonl"
        record(out, redactor, method, target, sent, answer, code)
        data = out.read_bytes()
        for value in SECRETS:
            for written in (value, base64.b64encode(value.encode()).decode()):
                assert written.encode() not in data, (target, value)
        request = next(r for r in map(json.loads, data.splitlines()) if r["record"] == "request")
        paths.append(request["path"])
    assert paths[0] == paths[1] != f"{API}/oauthaccesstokens/{RAW_NAME}"  # one placeholder
    assert paths[4] == f"{API}/oauthaccesstokens/{HASHED}"
