"""Requests that carry a secret value and the API server's answers to them, for the
property that no output holds the value (test_secret_outputs.py).

Each request puts `value` in one field of a sensitive request, valid or not; each answer is
a Status whose message is one the API server writes for such a request (the templates, with
where each is written in the Kubernetes source), the value rendered in it as the server
renders it: clear, in a Go `%+v` map, `%q`-quoted, base64, a hex preview, the first 30
bytes of the body. The Status goes as JSON, CBOR or protobuf, as the client asked.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass

import cbor2

from k8s_wiretap.wire.cborseq import SELF_DESCRIBED
from k8s_wiretap.wire.protowire import BYTES, Field, encode

NAME, NAMESPACE = "sdata", "leak"
SECRETS = f"/api/v1/namespaces/{NAMESPACE}/secrets"
SECRET = f"{SECRETS}/{NAME}"
TOKEN = f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/default/token"
REVIEW = "/apis/authentication.k8s.io/v1/tokenreviews"
# OpenShift's OAuth tokens: openshift/api oauth/v1/types.go (kube/sensitive.py OAUTH_TOKENS)
ACCESS_TOKENS = "/apis/oauth.openshift.io/v1/oauthaccesstokens"
AUTHORIZE_TOKEN = "/apis/oauth.openshift.io/v1/oauthauthorizetokens/sha256~" + "A" * 43
OAUTH_V1, ACCESS = b"oauth.openshift.io/v1", b"OAuthAccessToken"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
PROTOBUF = "application/vnd.kubernetes.protobuf"


@dataclass(frozen=True)
class Request:
    """A request holding the value: method, path, Content-Type, body; `readable` says
    whether the API server (and so the redactor) can read it."""

    name: str
    method: str
    path: str
    content_type: str
    body: bytes
    readable: bool = True


def _secret(**fields: object) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": NAME, "namespace": NAMESPACE},
        **fields,
    }


def _dumps(document: object) -> bytes:
    return json.dumps(document).encode()


def _go_string(value: str) -> str:
    """Go's %q of a string, as near as JSON's escaping comes (the masking does not rely on
    the exact escapes: it masks the whole quoted string)."""
    return json.dumps(value, ensure_ascii=False)


def _yaml_string(value: str) -> str:
    """A YAML double-quoted scalar of `value`, every character but printable ASCII escaped."""
    escaped = "".join(
        c if " " <= c <= "~" and c not in '"\\' else f"\\U{ord(c):08x}" for c in value
    )
    return f'"{escaped}"'


def requests(value: str) -> list[Request]:
    """Every request of the property, `value` in one of its secret fields."""
    raw = value.encode()
    b64 = base64.b64encode(raw).decode()
    merge = "application/merge-patch+json"
    return [
        Request(
            "create, data", "POST", SECRETS, "application/json", _dumps(_secret(data={"k": b64}))
        ),
        Request(
            "create, stringData",
            "POST",
            SECRETS,
            "application/json",
            _dumps(_secret(stringData={"k": value})),
        ),
        Request(
            "create, data not base64",
            "POST",
            SECRETS,
            "application/json",
            _dumps(_secret(data={"k": value})),
        ),
        Request(
            "apply, last-applied",
            "PATCH",
            SECRET,
            "application/apply-patch+yaml",
            _dumps(
                _secret(
                    metadata={
                        "name": NAME,
                        "annotations": {LAST_APPLIED: json.dumps(_secret(data={"k": b64}))},
                    }
                )
            ),
        ),
        Request(
            "strategic patch, data (the issue's)",
            "PATCH",
            SECRET,
            "application/strategic-merge-patch+json",
            _dumps({"data": {"password": value}}),
        ),
        Request(
            "merge patch, stringData",
            "PATCH",
            SECRET,
            merge,
            _dumps({"stringData": {"password": value}}),
        ),
        Request(
            "json patch, data",
            "PATCH",
            SECRET,
            "application/json-patch+json",
            _dumps([{"op": "replace", "path": "/data/password", "value": value}]),
        ),
        Request(
            "apply patch YAML",
            "PATCH",
            SECRET,
            "application/apply-patch+yaml",
            f"apiVersion: v1\nkind: Secret\nstringData:\n  k: {_yaml_string(value)}\n".encode(),
        ),
        Request(
            "malformed JSON",
            "POST",
            SECRETS,
            "application/json",
            b'{"data":{"password":"' + raw,
            readable=False,
        ),
        Request(
            "malformed YAML",
            "PATCH",
            SECRET,
            "application/apply-patch+yaml",
            b"stringData:\n  k: [" + raw + b"\n :",
            readable=False,
        ),
        Request(
            "malformed protobuf",
            "POST",
            SECRETS,
            PROTOBUF,
            b"k8s\x00\x0a\x0c\x0a\x02v1\x12\x06Secret\x12\xff" + raw,
            readable=False,
        ),
        Request(
            "malformed CBOR",
            "POST",
            SECRETS,
            "application/cbor",
            SELF_DESCRIBED + b"\xa1\x64data\xa1\x61k\x7f" + raw,
            readable=False,
        ),
        Request(
            "CBOR Secret",
            "POST",
            SECRETS,
            "application/cbor",
            SELF_DESCRIBED + cbor2.dumps(_secret(stringData={"k": value})),
        ),
        Request(
            "token request",
            "POST",
            TOKEN,
            "application/json",
            _dumps({"kind": "TokenRequest", "status": {"token": value}}),
        ),
        Request(
            "token review",
            "POST",
            REVIEW,
            "application/json",
            _dumps({"kind": "TokenReview", "spec": {"token": value}}),
        ),
        Request(
            "OAuth access token, refreshToken",
            "POST",
            ACCESS_TOKENS,
            "application/json",
            _dumps(_access_token("sha256~" + "B" * 43, refreshToken=value)),
        ),
        Request(
            "OAuth access token named by the token (OpenShift before 4.6)",
            "POST",
            ACCESS_TOKENS,
            "application/json",
            _dumps(_access_token(value)),
        ),
        Request(
            "OAuth authorize token, merge patch of codeChallenge",
            "PATCH",
            AUTHORIZE_TOKEN,
            merge,
            _dumps({"codeChallenge": value}),
        ),
        Request(  # the API server reads it; the redactor has no schema for it (replaced whole)
            "OAuth access token, protobuf",
            "POST",
            ACCESS_TOKENS,
            PROTOBUF,
            b"k8s\x00"
            + encode(
                [
                    Field(1, BYTES, encode([Field(1, BYTES, OAUTH_V1), Field(2, BYTES, ACCESS)])),
                    Field(2, BYTES, encode([Field(9, BYTES, raw)])),  # refreshToken
                ]
            ),
            readable=False,
        ),
    ]


def _access_token(name: str, **fields: object) -> dict[str, object]:
    return {
        "apiVersion": "oauth.openshift.io/v1",
        "kind": "OAuthAccessToken",
        "metadata": {"name": name},
        "clientName": "openshift-challenging-client",
        "userName": "kube:admin",
        "scopes": ["user:full"],
        **fields,
    }


def _summary(body: bytes) -> str:
    """rest.go summarizeData(body, 30): `{` and the first bytes as text, else their hex."""
    if body[:1] == b"{":
        return body[:30].decode("utf-8", "replace") + (" ..." if len(body) > 30 else "")
    return body[:30].hex() + (" ..." if len(body) > 30 else "")


Template = Callable[[str, Request], tuple[str, list[str]]]


def _invalid(rendered: str) -> tuple[str, list[str]]:
    """patch.go: errors.NewInvalid(field.Invalid(field.NewPath("patch"), %+v or the patched
    object, err)), of an empty kind and name: the value %q-quoted in the message and in its
    cause (as the default release's lab answers the issue's patch)."""
    cause = (
        f"Invalid value: {rendered}: error decoding from json: illegal base64 data at input byte 12"
    )
    return f' "" is invalid: patch: {cause}', [cause]


TEMPLATES: dict[str, Template] = {
    # patch.go, strategic merge: fmt.Sprintf("%+v", patchMap), then %q (the lab's 422).
    "Go map, quoted": lambda v, r: _invalid(_go_string(f"map[data:map[password:{v}]]")),
    # patch.go, JSON and merge patches: string(patchedObjJS), then %q.
    "patched object, quoted": lambda v, r: _invalid(
        _go_string(json.dumps(_secret(data={"password": v}), separators=(",", ":")))
    ),
    # validation of data keys and values: field.Invalid(path, value, ...), %q of the value.
    "base64, quoted": lambda v, r: _invalid(_go_string(base64.b64encode(v.encode()).decode())),
    # 1.20's json-iterator decode of the patched object: excerpts between `...|` and `|...`.
    "json-iterator excerpt": lambda v, r: _invalid(
        "...|" + v[-9:] + '"},"kind":"|..., bigger context ...|"data":{"password":"' + v + '"}|...'
    ),
    # rest.go transformDecodeError: "(must be of type Secret): <err> (<summary>)".
    "body preview": lambda v, r: (
        "the object provided is unrecognized (must be of type Secret): couldn't get "
        "version/kind; json parse error: unexpected end of JSON input "
        f"({_summary(r.body)})",
        [],
    ),
    # runtime/error.go missingKindErr: the whole body in single quotes.
    "body without kind": lambda v, r: (
        f"Object 'Kind' is missing in '{r.body.decode('utf-8', 'replace')}'",
        [],
    ),
    # sigs.k8s.io/yaml over yaml: an excerpt of the document in backquotes.
    "YAML excerpt": lambda v, r: (
        "error converting YAML to JSON: yaml: unmarshal errors:\n  line 3: cannot "
        f"unmarshal !!str `{v}` into map[string]interface {{}}",
        [],
    ),
    # structured-merge-diff: a value as %#v of valueUnstructured.
    "Go struct": lambda v, r: (
        "failed to create typed patch object (/v1, Kind=Secret): .stringData.k: expected "
        f"map, got &value.valueUnstructured{{Value:{v}}}",
        [],
    ),
    # a value the server names without quotes (an admission webhook's own message, say):
    # only the values the request carried can be known, so only readable requests.
    "clear, unquoted": lambda v, r: (f"admission webhook denied the request: {v} is weak", []),
    "hex, unquoted": lambda v, r: (f"refused: value {v.encode().hex()} seen before", []),
}
UNQUOTED = ("clear, unquoted", "hex, unquoted")


def status(message: str, causes: list[str], code: int = 422) -> dict[str, object]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Invalid" if code == 422 else "BadRequest",
        "details": {
            "name": NAME,
            "kind": "secrets",
            "causes": [
                {"reason": "FieldValueInvalid", "message": c, "field": "patch"} for c in causes
            ],
        },
        "code": code,
    }


def encoded(document: dict[str, object], content_type: str) -> bytes:
    """The Status as the API server sends it in `content_type`."""
    if content_type == PROTOBUF:
        return _proto_status(document)
    if content_type == "application/cbor":
        return SELF_DESCRIBED + cbor2.dumps(document)
    return _dumps(document)


def _proto_status(document: dict[str, object]) -> bytes:
    details = document["details"]
    assert isinstance(details, dict)
    causes = [
        Field(4, BYTES, encode([Field(2, BYTES, c["message"].encode()), Field(3, BYTES, b"patch")]))
        for c in details["causes"]
    ]
    raw = encode(
        [
            Field(2, BYTES, b"Failure"),
            Field(3, BYTES, str(document["message"]).encode()),
            Field(5, BYTES, encode([Field(1, BYTES, NAME.encode()), *causes])),
        ]
    )
    type_meta = encode([Field(1, BYTES, b"v1"), Field(2, BYTES, b"Status")])
    return b"k8s\x00" + encode([Field(1, BYTES, type_meta), Field(2, BYTES, raw)])


def forms(value: str) -> dict[str, str]:
    """What must appear in no output: the value, as JSON escapes it, its base64, its hex."""
    raw = value.encode()
    return {
        "clear": value,
        "JSON-escaped": json.dumps(value)[1:-1],
        "base64": base64.b64encode(raw).decode(),
        "hex": raw.hex(),
    }
