"""explain/changes.py on a JSON patch that inserts into a list: the item named is the one
inserted, not the one it pushes along. The exchange is a real `kubectl patch --type json`
of the wide session; the objects before and after are its Deployment with a sidecar put
first, as such a patch leaves it."""

from __future__ import annotations

import base64
import copy
import io
import json
from pathlib import Path
from typing import Any

from bench.explain_coverage import RECORDING
from k8s_wiretap.capture import records
from k8s_wiretap.capture.events import End, RequestSeen, ResponseSeen
from k8s_wiretap.capture.outputs import FileOutput
from k8s_wiretap.capture.reader import iter_records, load
from k8s_wiretap.capture.recorder import Recorder
from k8s_wiretap.capture.redact import Redactor
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.changes import change
from k8s_wiretap.explain.objects import field_story, history_streamed
from k8s_wiretap.views.history import write_field_story, write_history

SIDECAR = {"name": "sidecar", "image": "busybox:1.36"}


def _json_patch_of_a_deployment() -> tuple[Any, dict[str, Any]]:
    analysis = Analysis.of(load(RECORDING))
    for exchange in analysis.exchanges:
        info = exchange.info
        if (
            exchange.request_header("kubectl-command") == "kubectl patch"
            and info.resource == "deployments"
            and exchange.status == 200
        ):
            return exchange, analysis.response_body(exchange).value
    raise AssertionError("no JSON patch of a Deployment in the wide session")


def test_an_add_at_an_index_names_the_item_it_inserts() -> None:
    exchange, deployment = _json_patch_of_a_deployment()
    before = copy.deepcopy(deployment)
    after = copy.deepcopy(deployment)
    after["spec"]["template"]["spec"]["containers"].insert(0, SIDECAR)
    ops = [{"op": "add", "path": "/spec/template/spec/containers/0", "value": SIDECAR}]
    said = change(exchange, ops, "json", before, after)
    assert said.startswith("adds container sidecar"), said
    assert "web" not in said


def test_a_remove_at_an_index_names_the_item_it_removes() -> None:
    exchange, deployment = _json_patch_of_a_deployment()
    before = copy.deepcopy(deployment)
    before["spec"]["template"]["spec"]["containers"].insert(0, SIDECAR)
    after = copy.deepcopy(deployment)
    ops = [{"op": "remove", "path": "/spec/template/spec/containers/0"}]
    said = change(exchange, ops, "json", before, after)
    assert said.startswith("removes container sidecar"), said


# -- a Secret patched through the redacting proxy ------------------------------------------
SECRET_PATH = "/api/v1/namespaces/leak/secrets/sdata"


def _secret(password: bytes, version: str) -> bytes:
    return json.dumps(
        {
            "kind": "Secret",
            "apiVersion": "v1",
            "metadata": {
                "name": "sdata",
                "namespace": "leak",
                "uid": "u1",
                "resourceVersion": version,
            },
            "data": {"password": base64.b64encode(password).decode()},
            "type": "Opaque",
        }
    ).encode()


def _secret_patched(patch: dict[str, Any], path: Path) -> Path:
    """A GET of a Secret, then `patch` (strategic) of its password, as the proxy records
    them (values redacted) at `path`."""
    output = FileOutput(path, redacted=True, max_body=1 << 20)
    recorder = Recorder([output], redactor=Redactor())
    exchanges = [
        ("1", "GET", None, _secret(b"old-pass", "10")),
        ("2", "PATCH", json.dumps(patch).encode(), _secret(b"new-pass", "11")),
    ]
    for n, (id, method, body, answer) in enumerate(exchanges):
        headers = [
            (b"User-Agent", b"kubectl/v1.33.0 (linux/amd64) kubernetes/abcdef0"),
            (b"Content-Type", b"application/strategic-merge-patch+json"),
        ]
        client: records.Client = {"address": "127.0.0.1:1"}
        server = "https://127.0.0.1:6443"
        recorder.handle(
            RequestSeen(
                id,
                10.0 + n,
                "default",
                client,
                server,
                method,
                SECRET_PATH,
                "HTTP/2.0",
                headers,
                body,
                None,
            )
        )
        response = [(b"Content-Type", b"application/json")]
        recorder.handle(ResponseSeen(id, 10.1 + n, 200, "", "HTTP/2.0", response))
        recorder.handle(End(id, 10.2 + n, body=answer))
    recorder.close()
    return path


def _history_text(recording: Path) -> str:
    out = io.StringIO()
    records = iter_records(recording, [])
    write_history(history_streamed(records, "secret/leak/sdata", None), out)
    return out.getvalue()


def test_a_secret_field_story_says_redacted_not_the_placeholder(tmp_path: Path) -> None:
    """`history --field data`: the first value of data.password is said `(redacted)`, not
    as the base64 of its placeholder."""
    recording = _secret_patched({"data": {"password": "bmV3LXBhc3M="}}, tmp_path / "r.jsonl")
    history = history_streamed(iter_records(recording, []), "secret/leak/sdata")
    out = io.StringIO()
    write_field_story(history, "data", field_story(history, "data"), out)
    text = out.getvalue()
    assert '"password":"(redacted)"' in text or "password = (redacted)" in text
    assert "cmVkYWN0ZWQ6" not in text and "redacted:" not in text


def test_a_secret_patch_of_string_data_says_the_data_it_changed(tmp_path: Path) -> None:
    """`kubectl patch secret -p '{"stringData":{...}}'`: the server writes stringData into
    data and keeps no stringData. It said "nothing changed" beside a diff of data.password."""
    patch = {"stringData": {"password": "new-pass"}}
    text = _history_text(_secret_patched(patch, tmp_path / "r.jsonl"))
    assert "nothing changed" not in text
    assert "why: kubectl: patch Secret leak/sdata: data.password changed (redacted)" in text
    assert "new-pass" not in text and "old-pass" not in text


def test_a_secret_patch_of_data_says_it_changed_without_a_placeholder(tmp_path: Path) -> None:
    encoded = base64.b64encode(b"new-pass").decode()
    text = _history_text(_secret_patched({"data": {"password": encoded}}, tmp_path / "r.jsonl"))
    assert "data.password changed (redacted)" in text
    assert "cmVkYWN0ZWQ6" not in text  # base64 of "redacted:": no placeholder said
