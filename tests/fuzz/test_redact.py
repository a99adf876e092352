"""Fuzzing the redactor (capture/redact.py), which sees every body before it is recorded:
real bodies of the lab's recording turned into Secrets (kind and data), as JSON, CBOR and
protobuf, mutated, and arbitrary bytes, on the paths of Secrets, token requests, token
reviews and ConfigMaps. It never raises (the proxy must not lose the exchange), and a
Secret value it could read never reaches the recording.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import cbor2
from hypothesis import given
from hypothesis import strategies as st

from k8s_wiretap.capture.redact import Redactor
from k8s_wiretap.kube.requestinfo import parse_request
from tests.fuzz.seeds import FUZZ, fuzzed, mutated, seeds

PATHS = st.sampled_from(
    (
        "/api/v1/namespaces/default/secrets/s",
        "/api/v1/namespaces/default/secrets",
        "/api/v1/secrets?watch=1",
        "/api/v1/namespaces/default/serviceaccounts/default/token",
        "/apis/authentication.k8s.io/v1/tokenreviews",
        "/api/v1/namespaces/default/configmaps/c",
    )
)
CONTENT_TYPES = st.sampled_from(
    (
        "application/json",
        "application/vnd.kubernetes.protobuf",
        "application/cbor",
        "application/json-patch+json",
        "application/apply-patch+yaml",
        "",
    )
)
SECRET_VALUE = st.binary(min_size=12, max_size=24).map(lambda b: b"s3cr3t-" + b)


def as_secret(document: Any, value: bytes) -> Any:
    """A real object made a Secret holding `value` (base64 in `data`, as JSON carries it)."""
    if not isinstance(document, dict):
        return document
    return {**document, "kind": "Secret", "data": {"k": base64.b64encode(value).decode()}}


def test_cbor_with_bytes_after_the_item() -> None:
    """Found by the fuzzing below: a CBOR Secret body whose first data item is a string
    (two bytes inserted into its self-described tag) and whose map follows as extraneous
    bytes passed unredacted. The API server refuses extraneous data; the redactor reads the
    body as unreadable and, on a secrets path, replaces it whole."""
    value = base64.b64encode(b"s3cr3t-value")
    secret = {"kind": "Secret", "data": {"k": value.decode()}}
    body = b"\xd9\x00\x00\xd9\xf7\xaf\x65major" + cbor2.dumps(secret)
    info = parse_request("GET", "/api/v1/namespaces/default/secrets/s")
    redacted, changed = Redactor(b"k" * 32).body(info, "application/cbor", body)
    assert changed and value not in redacted


@FUZZ
@given(
    st.one_of(
        fuzzed(lambda: seeds().json_bodies),
        fuzzed(lambda: seeds().proto_bodies),
        fuzzed(lambda: seeds().cbor_bodies),
        fuzzed(lambda: seeds().proto_frames),
    ),
    PATHS,
    CONTENT_TYPES,
    st.sampled_from(("GET", "PUT", "PATCH", "POST")),
)
def test_any_body_any_path(body: bytes, path: str, content_type: str, method: str) -> None:
    info = parse_request(method, path)
    redacted, changed = Redactor(b"k" * 32).body(info, content_type, body)
    assert isinstance(redacted, bytes) and (changed or redacted == body)
    frame, _ = Redactor(b"k" * 32).watch_frame(info, body, content_type)
    assert isinstance(frame, bytes)


@FUZZ
@given(st.sampled_from(range(24)), SECRET_VALUE, st.booleans(), PATHS, st.data())
def test_secret_values_never_pass(
    index: int, value: bytes, cbor: bool, path: str, data: st.DataObject
) -> None:
    """A real object made a Secret, its bytes perhaps mutated: the value is never in the
    output as it was — on a secrets path whatever the body (unreadable: replaced whole),
    elsewhere when the body reads (a Secret is found by its kind only in a body that parses:
    an unreadable body off the secrets paths is recorded as it came)."""
    bodies = seeds().json_bodies
    document = json.loads(bodies[index % len(bodies)])
    secret = as_secret(document, value)
    if cbor:
        body = cbor2.dumps(cbor2.CBORTag(55799, secret))
        content_type = "application/cbor"
    else:
        body = json.dumps(secret).encode()
        content_type = "application/json"
    intact = body
    body = data.draw(st.one_of(st.just(body), mutated(body)))
    info = parse_request("GET", path)
    redacted, _ = Redactor(b"k" * 32).body(info, content_type, body)
    encoded = base64.b64encode(value)
    if body == intact or ("secrets" in path and holds_value(body, cbor, encoded.decode())):
        assert encoded not in redacted, (path, body[:200])


def holds_value(body: bytes, cbor: bool, encoded: str) -> bool:
    """Whether a mutated body is still a Secret with the value in its `data`, or unreadable
    (which a secrets path must replace whole); not when a mutation renamed `data`, say."""
    try:
        document = cbor2.loads(body) if cbor else json.loads(body)
    except Exception:
        return True
    if isinstance(document, cbor2.CBORTag):
        document = document.value
    data = document.get("data") if isinstance(document, dict) else None
    return isinstance(data, dict) and encoded in data.values()
