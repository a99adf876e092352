"""The Kubernetes contentview over traffic a real mitmdump captured in front of the lab.

mitmdump runs in reverse mode before the lab's API server, presenting the admin client
certificate upstream (`client_certs`) and verifying the lab's CA, and writes what passes to
a flow file (`-w`). A plain HTTP client asks it for protobuf (`Accept:
application/vnd.kubernetes.protobuf`, which `kubectl get --raw` cannot send): a Pod, a Secret,
and a watch of the Pods during which one changes. Then `mitmdump -n -r FLOWS -s
addons/contentview.py --flow-detail 4` shows them decoded, as a user would read them.
"""

from __future__ import annotations

import base64
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from k8s_wiretap.kube.client import ApiClient, Response
from k8s_wiretap.lab.layout import Layout
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.proxy.server import free_port
from tests.conftest import Kubectl, wait_until
from tests.views.test_contentview import mitmdump

pytestmark = pytest.mark.lab

ROOT = Path(__file__).resolve().parents[2]
MITMDUMP = str(Path(sys.executable).parent / "mitmdump")
PROTOBUF = "application/vnd.kubernetes.protobuf"
NAMESPACE = "contentview"
PASSWORD = "hunter2-contentview"
POD = f"""
apiVersion: v1
kind: Pod
metadata: {{name: web, namespace: {NAMESPACE}}}
spec: {{containers: [{{name: web, image: nginx}}]}}
"""


@pytest.fixture(scope="module")
def captured(
    lab: LabState, kubectl: Kubectl, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """A flow file a real mitmdump wrote: a protobuf Pod, a protobuf Secret and a protobuf
    watch of Pods (ADDED for the Pod there, MODIFIED when it is labelled meanwhile)."""
    folder = tmp_path_factory.mktemp("contentview")
    kubectl("create", "namespace", NAMESPACE)
    kubectl("apply", "-f", "-", stdin=POD)
    kubectl(
        "create", "secret", "generic", "db", "-n", NAMESPACE, f"--from-literal=password={PASSWORD}"
    )
    flows = folder / "flows.mitm"
    port = free_port()
    mitmdump = start_mitmdump(Layout(Path(lab.kubeconfig).parent, lab.ports), folder, port, flows)
    try:
        client = ApiClient(f"http://127.0.0.1:{port}")
        base = f"/api/v1/namespaces/{NAMESPACE}"
        for path in (f"{base}/pods/web", f"{base}/secrets/db"):
            assert_protobuf(client.get(path, accept=PROTOBUF))
        watched: list[Response] = []
        watch = threading.Thread(
            target=lambda: watched.append(
                client.get(f"{base}/pods?watch=true&timeoutSeconds=4", 20, PROTOBUF)
            )
        )
        watch.start()
        time.sleep(1)  # the watch is open: this change is one of its events
        kubectl("label", "pod", "web", "-n", NAMESPACE, "seen=yes")
        watch.join(20)
        assert watched and watched[0].status == 200
        assert watched[0].headers["Content-Type"] == f"{PROTOBUF};stream=watch"
    finally:
        mitmdump.send_signal(signal.SIGTERM)
        log = mitmdump.communicate(timeout=30)[0]
        kubectl("delete", "namespace", NAMESPACE, "--wait=false")
    assert flows.stat().st_size > 0, log
    yield flows


def start_mitmdump(layout: Layout, folder: Path, port: int, flows: Path) -> subprocess.Popen[str]:
    client_pem = folder / "admin.pem"  # mitmproxy's client_certs: certificate and key in one
    client_pem.write_bytes(
        (layout.pki / "admin.crt").read_bytes() + (layout.pki / "admin.key").read_bytes()
    )
    argv = [
        MITMDUMP,
        "--mode",
        f"reverse:{layout.server}@127.0.0.1:{port}",
        "--set",
        f"confdir={folder / 'mitmproxy'}",
        "--set",
        f"client_certs={client_pem}",
        "--set",
        f"ssl_verify_upstream_trusted_ca={layout.pki / 'ca.crt'}",
        "-w",
        str(flows),
    ]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def listening() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"mitmdump exited: {process.communicate()[0]}")
        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", port)) == 0

    wait_until(listening, 30, "mitmdump to listen")
    return process


def assert_protobuf(response: Response) -> None:
    assert response.status == 200, response.body[:200]
    assert response.body[:4] == b"k8s\x00"


def test_mitmdump_shows_the_captured_protobuf_decoded(captured: Path) -> None:
    out = mitmdump(captured, "-s", str(ROOT / "addons" / "contentview.py"))
    # the Pod, as the API server's JSON
    assert '"kind": "Pod",\n' in out and '"apiVersion": "v1",\n' in out
    assert '"name": "web",\n' in out and f'"namespace": "{NAMESPACE}"' in out
    # the watch, one JSON line per event
    added = '{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web"'
    assert added in out
    modified = [line for line in out.splitlines() if line.strip().startswith('{"type":"MODIFIED"')]
    assert modified and '"seen":"yes"' in modified[-1]
    # the Secret, redacted
    assert '"kind": "Secret"' in out and '"password": "' in out
    assert PASSWORD not in out and base64.b64encode(PASSWORD.encode()).decode() not in out


def test_without_the_contentview_mitmdump_cannot_read_them(captured: Path) -> None:
    out = mitmdump(captured)
    assert '"type":"ADDED"' not in out and '"kind": "Pod"' not in out
