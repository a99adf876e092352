"""What lands in etcd, recorded from etcd itself beside the traffic (`proxy --etcd`)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.summaries import Summaries
from k8s_wiretap.lab.state import LabState
from tests.conftest import Kubectl, wait_until
from tests.proxy.conftest import spawn_proxy

SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "landed-secret"},
    "stringData": {"password": "in-etcd-too"},
}


def test_each_write_shows_the_record_etcd_stored(lab: LabState, tmp_path: Path) -> None:
    etcd = f"http://127.0.0.1:{lab.ports['etcd']}"
    proxy = spawn_proxy(lab.kubeconfig, tmp_path, "--etcd", etcd)
    kubectl = Kubectl(lab.kubeconfig, tmp_path / "cache", server=proxy.url)
    try:
        kubectl("create", "configmap", "landed", "--from-literal=colour=blue")
        kubectl("create", "-f", "-", stdin=json.dumps(SECRET))
        kubectl("delete", "configmap", "landed")
        wait_until(
            lambda: any(r.key.endswith("/landed") and r.deleted for r in proxy.recording().etcd),
            20,
            "etcd's record of the delete",
        )
    finally:
        proxy.process.terminate()
        proxy.process.wait(30)
    recording = proxy.recording()
    assert b"in-etcd-too" not in proxy.record.read_bytes()  # redacted in etcd's view too
    summaries = Summaries(Analysis.of(recording))
    create = next(
        e
        for e in recording.exchanges
        if e.method == "POST" and e.path.startswith("/api/v1/namespaces/default/configmaps")
    )
    etcd_record = summaries.explain(create).etcd
    assert etcd_record is not None
    assert etcd_record["key"] == "/registry/configmaps/default/landed"
    stored = etcd_record["stored"]
    assert stored["format"] == "protobuf"  # the API server stores built-in kinds as protobuf
    value = stored["value"]
    assert value["kind"] == "ConfigMap" and value["data"] == {"colour": "blue"}
    # the stored object carries no resourceVersion: that is etcd's revision of the key
    assert "resourceVersion" not in value["metadata"]
    answer = summaries.analysis.response_body(create).value
    assert value["metadata"]["uid"] == answer["metadata"]["uid"]
    assert etcd_record["revision"] == int(answer["metadata"]["resourceVersion"])
    secret = next(e for e in recording.exchanges if e.method == "POST" and "/secrets" in e.path)
    landed = summaries.explain(secret).etcd
    assert landed is not None
    password = base64.b64decode(landed["stored"]["value"]["data"]["password"])
    assert password.startswith(b"redacted:")  # the same placeholder as in the API traffic
    (deleted,) = [
        r for r in recording.etcd if r.key.endswith("/configmaps/default/landed") and r.deleted
    ]
    assert deleted.value is None
