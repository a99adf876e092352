"""`import mitmproxy` of a flow file a real mitmdump wrote in front of the lab's API server,
with real kubectl traffic through it (a Secret created and read, a ConfigMap applied, a
watch that saw it change) and protobuf asked for as the controllers ask: every flow is an
exchange that explains (kubectl's commands, protobuf decoded, the watch's events), the
Secret's value — in the flow file as mitmdump saw it — is nowhere in the recording. The
HAR file mitmproxy itself makes of those flows (its `hardump` option: a third party's HAR)
imports to the same exchanges. A flow file cut short imports what comes before the cut and
says where it stopped; a flow mitmproxy cannot make a flow of is skipped, said, and the
flows after it are imported."""

from __future__ import annotations

import base64
import io
import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mitmproxy import http
from mitmproxy.io import FlowReader, tnetstring

from k8s_wiretap.kube.client import ApiClient
from k8s_wiretap.lab.layout import Layout
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.proxy.server import free_port
from tests.conftest import Kubectl, cli
from tests.views.test_contentview_lab import MITMDUMP, PROTOBUF, start_mitmdump

pytestmark = pytest.mark.lab

NAMESPACE = "mitm-import"
PASSWORD = "hunter2-mitm-import"
CONFIGMAP = f"""
apiVersion: v1
kind: ConfigMap
metadata: {{name: settings, namespace: {NAMESPACE}}}
data: {{mode: "%s"}}
"""


def _traffic(through: Kubectl, port: int) -> None:
    """kubectl through mitmdump: a namespace, a Secret, a ConfigMap applied twice, then a
    watch of ConfigMaps from the resourceVersion of a list made before the applies (it
    sees both changes whenever it starts); the ConfigMap as protobuf."""
    through("create", "namespace", NAMESPACE)
    through("create", "secret", "generic", "db", "-n", NAMESPACE, f"--from-literal=pw={PASSWORD}")
    through("get", "secret", "db", "-n", NAMESPACE, "-o", "json")
    listed = json.loads(through("get", "--raw", f"/api/v1/namespaces/{NAMESPACE}/configmaps"))
    since = listed["metadata"]["resourceVersion"]
    through("apply", "-f", "-", stdin=CONFIGMAP % "one")
    through("apply", "-f", "-", stdin=CONFIGMAP % "two")
    # the server ends the watch (mitmdump holds a response until it ends, then keeps it)
    watched = (
        f"/api/v1/namespaces/{NAMESPACE}/configmaps?watch=true"
        f"&resourceVersion={since}&timeoutSeconds=3"
    )
    through("get", "--raw", watched)
    client = ApiClient(f"http://127.0.0.1:{port}")
    answer = client.get(f"/api/v1/namespaces/{NAMESPACE}/configmaps/settings", accept=PROTOBUF)
    assert answer.status == 200 and answer.body[:4] == b"k8s\x00"


@pytest.fixture(scope="module")
def flows(lab: LabState, kubectl: Kubectl, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A flow file a real mitmdump wrote of real kubectl traffic."""
    folder = tmp_path_factory.mktemp("mitm-import")
    written = folder / "flows.mitm"
    port = free_port()
    layout = Layout(Path(lab.kubeconfig).parent, lab.ports)
    mitmdump = start_mitmdump(layout, folder, port, written)
    through = Kubectl(lab.kubeconfig, folder / "cache", server=f"http://127.0.0.1:{port}")
    try:
        _traffic(through, port)
    finally:
        mitmdump.send_signal(signal.SIGTERM)
        log = mitmdump.communicate(timeout=30)[0]
        kubectl("delete", "namespace", NAMESPACE, "--wait=false")
    assert written.stat().st_size > 0, log
    return written


def _read(path: Path) -> list[http.HTTPFlow]:
    with path.open("rb") as file:
        return [flow for flow in FlowReader(file).stream() if isinstance(flow, http.HTTPFlow)]


def _explained(recording: Path) -> list[dict[str, Any]]:
    result = cli("explain", str(recording), "--format", "json")
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def _import(source: str, path: Path, out: Path) -> str:
    result = cli("import", source, str(path), "-o", str(out))
    assert result.returncode == 0, result.stderr
    return result.stderr


@pytest.fixture(scope="module")
def imported(flows: Path) -> tuple[Path, list[dict[str, Any]]]:
    out = flows.with_name("imported.jsonl")
    said = _import("mitmproxy", flows, out)
    count = len(_read(flows))
    assert said.strip().splitlines()[-1] == (
        f"{out}: {count:,} exchanges from {flows}; 0 unreadable flows skipped"
    )
    return out, _explained(out)


def _seen(lines: list[dict[str, Any]]) -> list[tuple[str, str, int | None]]:
    return [(line["method"], line["path"], line["status"]) for line in lines]


def test_every_flow_explains(flows: Path, imported: tuple[Path, list[dict[str, Any]]]) -> None:
    _, lines = imported
    read = sorted(
        (f.request.method, f.request.path, f.response and f.response.status_code)
        for f in _read(flows)
    )
    assert sorted(_seen(lines)) == read
    assert not [line for line in lines if "undecodable" in json.dumps(line["response_body"])]
    summaries = {line["summary"] for line in lines}
    assert {
        f"kubectl create secret generic creates Secret {NAMESPACE}/db",
        f"kubectl apply creates ConfigMap {NAMESPACE}/settings",
        f"kubectl apply patches ConfigMap {NAMESPACE}/settings (strategic merge patch, three-way)",
    } <= summaries
    assert any(line["response_format"] == "protobuf" for line in lines)
    watch = next(line for line in lines if line["verb"] == "watch")
    kinds = [(event["type"], event["name"]) for event in watch["events"]]
    assert ("ADDED", "settings") in kinds and ("MODIFIED", "settings") in kinds
    assert {line["component"] for line in lines} == {"kubectl", "k8s-wiretap"}


def test_the_secret_is_redacted(flows: Path, imported: tuple[Path, list[dict[str, Any]]]) -> None:
    out, _ = imported
    encoded = base64.b64encode(PASSWORD.encode())
    assert encoded in flows.read_bytes()  # mitmdump kept what it saw
    recording = out.read_bytes()
    assert PASSWORD.encode() not in recording and encoded not in recording
    assert b'"redacted":true' in recording


def test_mitmproxys_own_har_imports_to_the_same_exchanges(
    flows: Path, imported: tuple[Path, list[dict[str, Any]]], tmp_path: Path
) -> None:
    har = tmp_path / "flows.har"
    dumped = subprocess.run(
        [MITMDUMP, "-n", "-r", str(flows), "--set", f"hardump={har}"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert dumped.returncode == 0 and har.stat().st_size > 0, dumped.stdout + dumped.stderr
    out = tmp_path / "from-har.jsonl"
    _import("har", har, out)
    lines = _explained(out)
    assert sorted(_seen(lines)) == sorted(_seen(imported[1]))
    assert [line["summary"] for line in lines] == [line["summary"] for line in imported[1]]
    recording = out.read_bytes()
    assert PASSWORD.encode() not in recording
    assert base64.b64encode(PASSWORD.encode()) not in recording


def test_a_file_cut_short_imports_what_comes_before(flows: Path, tmp_path: Path) -> None:
    data = flows.read_bytes()
    cut = tmp_path / "cut.mitm"
    cut.write_bytes(data[: len(data) * 2 // 3])
    out = tmp_path / "cut.jsonl"
    result = cli("import", "mitmproxy", str(cut), "-o", str(out))
    assert result.returncode == 0, result.stderr
    lines = result.stderr.strip().splitlines()
    whole = len(_read(flows))
    kept = len(_explained(out))
    assert 0 < kept < whole
    assert lines[0].startswith(f"{cut}:flow {kept + 1}: skipped: unreadable, the rest")
    assert lines[-1].startswith(f"{out}: {kept:,} exchanges from {cut}; 1 unreadable flow")
    not_flows = tmp_path / "notes.txt"
    not_flows.write_text("hello")
    refused = cli("import", "mitmproxy", str(not_flows), "-o", str(tmp_path / "x.jsonl"))
    assert refused.returncode == 2 and not (tmp_path / "x.jsonl").exists()
    assert refused.stderr.strip().splitlines() == [
        f"k8s-wiretap: import mitmproxy: {not_flows}: not a mitmproxy flow file"
    ]


def test_a_flow_mitmproxy_cannot_read_is_skipped_and_the_rest_imported(
    flows: Path, tmp_path: Path
) -> None:
    """A whole tnetstring that is no flow mitmproxy can make (its migration meets a missing
    field: KeyError), or a flow whose path is no UTF-8, is one skipped flow; reading goes on
    after it."""
    with flows.open("rb") as file:
        states = []
        while file.peek(1):
            states.append(tnetstring.dumps(tnetstring.load(file)))
    bad = tnetstring.dumps({b"version": 21, b"type": b"http"})
    not_utf8 = tnetstring.load(io.BytesIO(states[0]))
    assert isinstance(not_utf8, dict) and isinstance(not_utf8["request"], dict)
    not_utf8["request"]["path"] = b"/api/v1/namespaces/\xff"
    mixed = tmp_path / "mixed.mitm"
    mixed.write_bytes(b"".join([*states[:2], bad, tnetstring.dumps(not_utf8), *states[2:]]))
    out = tmp_path / "mixed.jsonl"
    result = cli("import", "mitmproxy", str(mixed), "-o", str(out))
    assert result.returncode == 0, result.stderr
    whole = len(_read(flows))
    lines = result.stderr.strip().splitlines()
    assert lines[:2] == [
        f"{mixed}:flow 3: skipped: not a flow mitmproxy can read: KeyError: 'type'",
        f"{mixed}:flow 4: skipped: the URL holds a lone surrogate (\\udcff): no Unicode text",
    ]
    assert lines[2].startswith(f"{out}: {whole:,} exchanges from {mixed}; 2 unreadable flows")
    assert len(lines) == 3
    assert len(_explained(out)) == whole
