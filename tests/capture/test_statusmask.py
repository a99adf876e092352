"""The masking of a Status's texts on a sensitive resource (capture/statusmask.py), on the
messages the API server writes (their source is named in kube/statustext.py)."""

from __future__ import annotations

import base64
import json

from k8s_wiretap.capture.redact import Redactor
from k8s_wiretap.capture.statusmask import mask
from k8s_wiretap.kube.requestinfo import parse_request
from k8s_wiretap.wire.cborseq import SELF_DESCRIBED
from tests.fuzz.secret_traffic import PROTOBUF, encoded, status

VALUE = "Zq8LEAKREAL28pw"
SECRET = "/api/v1/namespaces/leak/secrets/sdata"
# The lab's answer to the issue's `kubectl -n leak patch secret sdata -p ...` (the default release;
# the empty kind and name are the API server's: patch.go's NewInvalid(schema.GroupKind{}, "")).
INVALID = (
    ' "" is invalid: patch: Invalid value: "map[data:map[password:Zq8LEAKREAL28pw]]": '
    "error decoding from json: illegal base64 data at input byte 12"
)


def _placeholder(text: str) -> str:
    return f"P<{len(text)}>"


def test_the_quoted_value_is_masked_and_the_message_keeps_its_shape() -> None:
    masked = mask(INVALID, _placeholder, keep=("sdata", "leak"))
    assert VALUE not in masked
    assert masked == (
        ' "" is invalid: patch: Invalid value: "P<39>": '
        "error decoding from json: illegal base64 data at input byte 12"
    )


def test_a_body_preview_is_masked_to_the_end_whatever_it_holds() -> None:
    preview = '{"data":{"password":"Zq8L) (x ...'
    message = (
        "the object provided is unrecognized (must be of type Secret): couldn't get "
        f"version/kind; json parse error: invalid character 'Z' looking for value ({preview})"
    )
    masked = mask(message, _placeholder)
    assert "Zq8L" not in masked and "couldn't get version/kind" in masked
    assert masked.endswith(f"(P<{len(preview)}>)")
    hex_preview = b"\x00\x01" + VALUE.encode()
    masked = mask(f"... (must be of type Secret): bad ({hex_preview.hex()})", _placeholder)
    assert hex_preview.hex() not in masked


def test_a_body_without_a_kind_is_masked_whole() -> None:
    body = '{"stringData":{"k":"it\'s Zq8secret"}}'
    masked = mask(f"Object 'Kind' is missing in '{body}'", _placeholder)
    assert masked == f"Object 'Kind' is missing in 'P<{len(body)}>'"


def test_maps_structs_backquotes_hex_and_base64_are_masked_unquoted() -> None:
    for message in (
        "expected a map, got map[password:Zq8 ] x]",
        "expected map, got &value.valueUnstructured{Value:Zq8 {a}}",
        "cannot unmarshal !!str `Zq8 ` x` into map[string]interface {}",
        f"bytes {VALUE.encode().hex()} are bad",
        f"bytes {base64.b64encode(VALUE.encode() * 2).decode()} are bad",
    ):
        assert "Zq8" not in mask(message, _placeholder), message
        assert "5a7138" not in mask(message, _placeholder), message


def test_a_json_iterator_excerpt_is_masked_with_a_part_of_a_value() -> None:
    """1.20's decoder, seen on the lab: an excerpt cut inside the value, then the context."""
    message = (
        "illegal base64 data at input byte 12, error found in #10 byte of "
        '...|KREAL28pw"},"kind":"|..., bigger context ...|"password":"Zq8LEAKREAL28pw"},"kind|...'
    )
    masked = mask(message, _placeholder)
    assert "KREAL28pw" not in masked and masked.endswith("error found in #10 byte of P<88>")


def test_the_request_values_are_masked_in_every_form() -> None:
    raw = b"hunter2-pass"
    for form in (raw.decode(), base64.b64encode(raw).decode(), raw.hex()):
        masked = mask(f"webhook says {form} is weak", _placeholder, known=[raw])
        assert masked == "webhook says P<12> is weak"
    assert mask("a short one: abc", _placeholder, known=[b"abc"]) == "a short one: abc"
    assert mask('"" is invalid', _placeholder) == '"" is invalid'  # an empty name


def test_names_versions_and_words_are_kept() -> None:
    for message in (
        'secrets is forbidden: User "system:serviceaccount:shop:robot" cannot list resource '
        '"secrets" in API group "" in the namespace "shop"',
        'secrets "sdata" not found',
        'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 4',
        "couldn't get version/kind; json parse error: unexpected end of JSON input",
    ):
        assert mask(message, _placeholder, keep=("sdata", "shop", "secrets")) == message


def test_status_bodies_are_masked_in_json_cbor_and_protobuf() -> None:
    redactor = Redactor()
    info = parse_request("PATCH", SECRET)
    cause = INVALID.split("patch: ", 1)[1]
    answer = status(INVALID, [cause])
    outs = []
    for content_type in ("application/json", "application/cbor", PROTOBUF):
        body = encoded(answer, content_type)
        out, changed = redactor.body(info, content_type, body)
        assert changed and VALUE.encode() not in out, content_type
        outs.append(out)
    text = json.loads(outs[0])
    assert text["message"].startswith(' "" is invalid: patch: Invalid value: "redacted:')
    assert text["details"]["causes"][0]["message"] in text["message"]  # equal stays equal
    assert outs[1].startswith(SELF_DESCRIBED)
    assert text["message"].encode() in outs[2]  # protobuf: the same placeholder


def test_a_status_in_a_watch_error_event_is_masked() -> None:
    event = json.dumps({"type": "ERROR", "object": status(INVALID, [])}).encode()
    info = parse_request("GET", "/api/v1/namespaces/leak/secrets?watch=true")
    out, _ = Redactor().watch_frame(info, event, "application/json")
    assert VALUE.encode() not in out


def test_other_resources_keep_their_messages() -> None:
    body = json.dumps(status(INVALID, [])).encode()
    info = parse_request("PATCH", "/api/v1/namespaces/leak/configmaps/sdata")
    assert Redactor().body(info, "application/json", body) == (body, False)


def test_values_the_request_carried_reach_its_answer_through_seen() -> None:
    redactor = Redactor()
    info = parse_request("PATCH", SECRET)
    seen: set[bytes] = set()
    patch = json.dumps({"stringData": {"password": "plain-Zq8-pass"}}).encode()
    redactor.body(info, "application/merge-patch+json", patch, seen)
    assert seen == {b"plain-Zq8-pass"}
    answer = json.dumps(status("admission webhook denied: plain-Zq8-pass is weak", [])).encode()
    out, _ = redactor.body(info, "application/json", answer, seen)
    assert b"plain-Zq8-pass" not in out and b"is weak" in out


def test_a_watch_reads_seen_and_adds_nothing_to_it() -> None:
    """A watch on Secrets runs for days: its events' values are not kept for the rest of it
    (its memory would follow the stream), while what its request carried still masks an
    ERROR event's Status."""
    redactor = Redactor()
    info = parse_request("GET", "/api/v1/namespaces/leak/secrets?watch=1")
    seen: set[bytes] = {b"plain-Zq8-pass"}
    for n in range(50):
        secret = {"kind": "Secret", "metadata": {"name": f"s{n}"}, "data": {"k": _b64(f"v{n}")}}
        frame = json.dumps({"type": "ADDED", "object": secret}).encode()
        out, redacted = redactor.watch_frame(info, frame, "application/json", seen)
        assert redacted and f"v{n}".encode() not in out
    assert seen == {b"plain-Zq8-pass"}
    error = status("the watch of plain-Zq8-pass is too old", [])
    frame = json.dumps({"type": "ERROR", "object": error}).encode()
    out, _ = redactor.watch_frame(info, frame, "application/json", seen)
    assert b"plain-Zq8-pass" not in out and b"is too old" in out


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()
