"""`import audit` of OpenShift OAuth token requests: no output holds a token.

The events have the shape of line 1 of data/openshift/clo-kube-apiserver-audit.log (an
OpenShift 4.6 kube-apiserver event: audit.k8s.io/v1, user with groups, sourceIPs,
userAgent, objectRef, responseStatus, annotations), changed to requests on
oauth.openshift.io's oauthaccesstokens and oauthauthorizetokens at level RequestResponse
(as OpenShift's Default audit profile logs their writes: openshift/library-go
pkg/operator/apiserver/audit/manifests/audit-policies-cm.yaml,
secure-oauth-storage-default.yaml) and at Metadata (their reads). Their bodies are built from
openshift/api oauth/v1/types.go (tests/capture/test_redact_oauth.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.capture.test_redact_oauth import (
    AUTHORIZE,
    CHALLENGE,
    HASHED,
    RAW_NAME,
    REFRESH,
    access_token,
    authorize_token,
)
from tests.fuzz.secret_traffic import TEMPLATES, forms, requests, status
from tests.fuzz.test_secret_outputs import _audit_log, _record, _run, outputs

API = "/apis/oauth.openshift.io/v1"
CODE = "code-Qm4Zt8Wc1Xv6Bn3Hy7Ju2Ki9"  # a pre-4.6 authorize token's name: the code
RBAC_REASON = 'RBAC: allowed by ClusterRoleBinding "system:openshift:openshift-authentication"'
OAUTH_SERVER = {
    "username": "system:serviceaccount:openshift-authentication:oauth-openshift",
    "uid": "6c3f0d9e-2b1a-4e8f-9c7d-5a4b3c2d1e0f",
    "groups": [
        "system:serviceaccounts",
        "system:serviceaccounts:openshift-authentication",
        "system:authenticated",
    ],
}


def event(
    audit_id: str,
    verb: str,
    uri: str,
    resource: str,
    name: str,
    code: int,
    level: str = "RequestResponse",
    **more: Any,
) -> dict[str, Any]:
    ref = {"resource": resource, "apiGroup": "oauth.openshift.io", "apiVersion": "v1"}
    return {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": level,
        "auditID": audit_id,
        "stage": "ResponseComplete",
        "requestURI": uri,
        "verb": verb,
        "user": OAUTH_SERVER,
        "sourceIPs": ["10.128.0.31"],
        "userAgent": "oauth-server/v0.0.0 (linux/amd64) kubernetes/$Format",
        "objectRef": {**ref, "name": name} if name else ref,
        "responseStatus": {"metadata": {}, "code": code},
        "requestReceivedTimestamp": "2021-03-12T15:11:04.621761Z",
        "stageTimestamp": "2021-03-12T15:11:04.626590Z",
        "annotations": {
            "authorization.k8s.io/decision": "allow",
            "authorization.k8s.io/reason": RBAC_REASON,
        },
        **more,
    }


def not_found(name: str) -> dict[str, Any]:
    return {
        "metadata": {},
        "status": "Failure",
        "message": f'oauthaccesstokens.oauth.openshift.io "{name}" not found',
        "reason": "NotFound",
        "details": {"name": name, "group": "oauth.openshift.io", "kind": "oauthaccesstokens"},
        "code": 404,
    }


def test_no_output_of_an_import_holds_an_oauth_token(tmp_path: Path) -> None:
    patch = [{"op": "replace", "path": "/refreshToken", "value": REFRESH}]
    events = [
        event(
            "e1",
            "create",
            f"{API}/oauthaccesstokens",
            "oauthaccesstokens",
            RAW_NAME,
            201,
            requestObject=access_token(RAW_NAME),
            responseObject=access_token(RAW_NAME),
        ),
        event(  # a pre-4.6 bearer token looked up by its name: the name is in the path
            "e2",
            "get",
            f"{API}/oauthaccesstokens/{RAW_NAME}",
            "oauthaccesstokens",
            RAW_NAME,
            404,
            "Metadata",
            responseStatus=not_found(RAW_NAME),
        ),
        event(  # the auditID of e2 (sanitised samples share one): a note quotes its URI
            "e2",
            "list",
            f"{API}/oauthaccesstokens?fieldSelector=metadata.name%3D{RAW_NAME}",
            "oauthaccesstokens",
            "",
            200,
            "Metadata",
        ),
        event(
            "e4",
            "create",
            f"{API}/oauthauthorizetokens",
            "oauthauthorizetokens",
            CODE,
            201,
            requestObject={**authorize_token(CODE), "metadata": {"name": CODE}},
            responseObject={**authorize_token(CODE), "metadata": {"name": CODE}},
        ),
        event(
            "e5",
            "update",
            f"{API}/oauthaccesstokens/{HASHED}",
            "oauthaccesstokens",
            HASHED,
            200,
            requestObject=access_token(HASHED),
            responseObject=access_token(HASHED),
            annotations={
                "patch.webhook.admission.k8s.io/round_0_index_0": json.dumps(
                    {"configuration": "c", "webhook": "w", "patch": patch, "patchType": "JSONPatch"}
                )
            },
        ),
    ]
    log = tmp_path / "audit.log"
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    for value in (RAW_NAME, REFRESH, AUTHORIZE, CHALLENGE, CODE):
        assert value in log.read_text()  # the log holds them: no output may
    recording = tmp_path / "r.jsonl"
    _run("import", "audit", str(log), "-o", str(recording))
    requests = {
        r["id"]: r
        for r in map(json.loads, recording.read_text().splitlines())
        if r["record"] == "request"
    }
    assert set(requests) == {"e1", "e2", "e2~1", "e4", "e5"}
    notes = [
        r["message"]
        for r in map(json.loads, recording.read_text().splitlines())
        if r["record"] == "note"
    ]
    assert any("is another request's too (list /apis/oauth.openshift.io" in n for n in notes)
    placeholder = requests["e2"]["path"].rsplit("/", 1)[1]
    assert placeholder.startswith("redacted:")
    assert requests["e2"]["audit"]["objectRef"]["name"] == placeholder
    created = json.loads(requests["e1"]["body"]["text"])
    assert created["metadata"]["name"] == placeholder  # the same token, the same placeholder
    assert requests["e5"]["path"] == f"{API}/oauthaccesstokens/{HASHED}"  # a hash is kept
    made = outputs(recording)
    for value in (RAW_NAME, REFRESH, AUTHORIZE, CHALLENGE, CODE):
        for output, text in made.items():
            for form, written in forms(value).items():
                assert written not in text, f"{output} holds {value} ({form})"
    assert HASHED in made["recording"]


def test_a_joined_status_is_masked_of_the_proxied_request_values(tmp_path: Path) -> None:
    """`import audit --join`: the audit log's responseStatus of a joined exchange quotes the
    request's value bare (an admission webhook's words); it is masked of the values of the
    request's body, as the plain import masks it (the body itself is the recording's)."""
    value = "Zq8-refresh-token-joined"
    request = next(r for r in requests(value) if r.name == "OAuth access token, refreshToken")
    message, causes = TEMPLATES["clear, unquoted"](value, request)
    answer = status(message, causes, 400)
    recording, log = tmp_path / "r.jsonl", tmp_path / "audit.log"
    _record(recording, request, json.dumps(answer).encode(), "application/json", 400)
    _audit_log(log, request, answer, "RequestResponse")
    joined = tmp_path / "joined.jsonl"
    _run("import", "audit", str(log), "--join", str(recording), "-o", str(joined))
    ends = [r for r in map(json.loads, joined.read_text().splitlines()) if r["record"] == "end"]
    said = ends[0]["audit"]["responseStatus"]["message"]
    assert said.startswith("admission webhook denied the request: redacted:"), said
    for form, written in forms(value).items():
        assert written not in joined.read_text(), form
