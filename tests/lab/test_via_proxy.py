"""`lab up --via-proxy`: the whole control plane through the wiretap, identities intact."""

from __future__ import annotations

import base64
import json
from collections import defaultdict
from pathlib import Path

import pytest

from k8s_wiretap.capture.reader import Recording, load
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.lab.layout import Layout
from k8s_wiretap.lab.readiness import admin_client
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.wire.envelope import MAGIC
from tests.conftest import Kubectl, cli, wait_until

pytestmark = pytest.mark.lab  # every test here reads the session's `tapped` lab (conftest)


def recording_of(state: LabState) -> Recording:
    assert state.recording
    return load(state.recording)


def audit_users(state: LabState) -> dict[str, str]:
    log = Path(state.kubeconfig).parent / "logs" / "audit.log"
    return {
        e["auditID"]: e["user"]["username"] for e in map(json.loads, log.read_text().splitlines())
    }


def test_status_names_the_recording(tapped: LabState) -> None:
    status = cli("lab", "status", "--dir", str(Path(tapped.kubeconfig).parent))
    assert status.returncode == 0
    assert f"recording  {tapped.recording}" in status.stdout
    assert "wiretap " in status.stdout


def test_each_component_keeps_its_own_identity_upstream(tapped: LabState) -> None:
    users_by_listener: dict[str, set[str]] = defaultdict(set)
    audit = audit_users(tapped)
    for exchange in recording_of(tapped).exchanges:
        user = audit.get(exchange.response_header("audit-id"))
        if user:  # the audit log holds requests that have completed
            users_by_listener[exchange.request.listener].add(user)
    assert users_by_listener["kubelet"] == {"system:node:node-1"}
    assert users_by_listener["scheduler"] == {"system:kube-scheduler"}
    assert users_by_listener["admin"] == {"kubernetes-admin"}
    controller_manager = users_by_listener["controller-manager"]
    assert "system:kube-controller-manager" in controller_manager
    # each controller's own service-account token passed through unchanged
    assert {
        "system:serviceaccount:kube-system:deployment-controller",
        "system:serviceaccount:kube-system:replicaset-controller",
    } <= controller_manager


def test_the_apply_story_is_in_one_recording_protobuf_included(tapped: LabState) -> None:
    exchanges = recording_of(tapped).exchanges
    by_component = defaultdict(list)
    for exchange in exchanges:
        by_component[exchange.component.split("/")[0]].append(exchange)
    assert any(
        e.method == "POST"
        and e.path.endswith(
            "/deployments?fieldManager=kubectl-client-side-apply&fieldValidation=Strict"
        )
        for e in by_component["kubectl"]
    )
    binding = [e for e in by_component["scheduler"] if e.info.subresource == "binding"]
    assert len(binding) == 2 and all(e.status == 201 for e in binding)
    statuses = [
        e for e in by_component["kubelet"] if e.method == "PATCH" and e.info.subresource == "status"
    ]
    assert any(e.info.resource == "pods" for e in statuses)
    protobuf = [e for e in exchanges if e.response_body and e.response_body.data[:4] == MAGIC]
    assert len(protobuf) > 50
    kubelet_pod_watch = [
        e for e in by_component["kubelet"] if e.info.verb == "watch" and e.info.resource == "pods"
    ]
    events = [ev for e in kubelet_pod_watch for ev in e.watch_events()]
    assert any(MAGIC in ev.data.data for ev in events)  # protobuf WatchEvents, framed


LEGACY_TOKEN = """
apiVersion: v1
kind: Secret
type: kubernetes.io/service-account-token
metadata:
  name: legacy-token
  namespace: kube-system
  annotations: {kubernetes.io/service-account.name: default}
"""


def test_service_account_tokens_stay_out_of_the_recording(tapped: LabState) -> None:
    """Every token the recording could hold: the controller manager's own tokens (the default
    release: TokenRequests, one per controller's ServiceAccount; 1.20: token Secrets the tokens
    controller made), a legacy token Secret made and read through the wiretap, and every Bearer
    header."""
    client = admin_client(Layout(Path(tapped.kubeconfig).parent, tapped.ports))
    Kubectl(tapped.kubeconfig, Path(tapped.kubeconfig).parent / "cache")(
        "apply", "-f", "-", stdin=LEGACY_TOKEN
    )
    secret = "/api/v1/namespaces/kube-system/secrets/legacy-token"
    wait_until(lambda: "token" in (client.get(secret).json().get("data") or {}), 30, "a token")
    secrets = client.get("/api/v1/namespaces/kube-system/secrets").json()["items"]
    tokens = [
        base64.b64decode(s["data"]["token"])
        for s in secrets
        if s["type"] == "kubernetes.io/service-account-token"
    ]
    assert tokens
    recording = recording_of(tapped)
    raw = Path(tapped.recording or "").read_bytes()
    seen = [
        b
        for e in recording.exchanges
        for b in [e.request_body, e.response_body, *[ev.data for ev in e.events]]
        if b
    ]
    for token in tokens:
        assert token not in raw and base64.b64encode(token) not in raw
        assert not any(token in body.data for body in seen)
    requests = [e for e in recording.exchanges if e.info.subresource == "token"]
    if not tapped.kube_version.startswith("1.20."):
        assert len(requests) > 5  # --use-service-account-credentials: a token per controller
    analysis = Analysis.of(recording)
    for exchange in requests:
        assert exchange.status == 201
        answer = analysis.response_body(exchange).value  # protobuf, from the controllers
        assert answer["status"]["token"].startswith("redacted:"), exchange.path
    bearer = [
        v for e in recording.exchanges for k, v in e.request.headers if k.lower() == "authorization"
    ]
    assert bearer and all(v.startswith("Bearer redacted:") for v in bearer)
