"""The OTLP export against a real Jaeger v2 (built from its Go module by `make jaeger`):
all-in-one, in-memory storage, its OTLP HTTP receiver on a free port. What is sent is read
back through Jaeger's query API: the services, the parent of each span, the links."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.capture.reader import iter_records
from k8s_wiretap.lab.jaeger import ensure_jaeger
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.proxy.server import free_port
from k8s_wiretap.views.otlp import OtlpOutput, Span, export_batches, span_id, trace_id
from tests.conftest import Kubectl
from tests.proxy.conftest import spawn_proxy
from tests.recorded import STORY, STORY_1_20

pytestmark = pytest.mark.lab

CONFIG = """\
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: info
extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:{query}
    grpc:
      endpoint: 127.0.0.1:{query_grpc}
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:{otlp}
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
"""


@dataclass
class Jaeger:
    otlp: str  # the OTLP HTTP receiver's base URL
    query: str  # the query service's base URL
    log: Path

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.query + path, timeout=10) as response:
            return json.loads(response.read())

    def services(self) -> set[str]:
        return set(self.get("/api/services")["data"] or ())

    def trace(self, trace_id: str) -> dict[str, Any]:
        """The trace as the v1 query API gives it (spans, processes, references)."""
        data = self.get(f"/api/traces/{trace_id}")["data"]
        assert len(data) == 1
        trace: dict[str, Any] = data[0]
        return trace


def _until(check: Any, what: str, log: Path, seconds: float = 120.0) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        try:
            value = check()
        except (OSError, urllib.error.URLError, ValueError, KeyError, AssertionError):
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            tail = "\n".join(log.read_text().splitlines()[-20:])
            pytest.fail(f"jaeger: {what} not within {seconds:.0f} s; its log ends:\n{tail}")
        time.sleep(0.5)


@pytest.fixture(scope="module")
def jaeger(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Jaeger]:
    binary = ensure_jaeger()  # `make jaeger` built it; built here when it has not
    folder = tmp_path_factory.mktemp("jaeger")
    ports = {"otlp": free_port(), "query": free_port(), "query_grpc": free_port()}
    config = folder / "config.yaml"
    config.write_text(CONFIG.format(**ports))
    log = folder / "jaeger.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [str(binary), "--config", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    instance = Jaeger(
        f"http://127.0.0.1:{ports['otlp']}", f"http://127.0.0.1:{ports['query']}", log
    )
    try:
        _until(lambda: process.poll() is None and instance.get("/api/services"), "query", log)
        yield instance
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _spans(path: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    """span id → (service.name, OTLP span) of an `export --otlp` file."""
    found = {}
    for line in path.read_text().splitlines():
        for resource in json.loads(line)["resourceSpans"]:
            attributes = {a["key"]: a["value"] for a in resource["resource"]["attributes"]}
            service = attributes["service.name"]["stringValue"]
            for scope in resource["scopeSpans"]:
                for span in scope.get("spans", ()):
                    found[span["spanId"]] = (service, span)
    return found


def _named(sent: dict[str, tuple[str, dict[str, Any]]], service: str, name: str) -> Any:
    """The first span of `service` named `name`."""
    return next(s for by, s in sent.values() if by == service and s["name"] == name)


def _export(recording: Path, jaeger: Jaeger, out: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    argv = [sys.executable, "-m", "k8s_wiretap", "export", str(recording)]
    result = subprocess.run(
        [*argv, "--otlp", str(out), "--otlp-endpoint", jaeger.otlp],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return _spans(out)


def test_an_exported_recording_reads_back_as_traces_from_jaeger(
    jaeger: Jaeger, tmp_path: Path
) -> None:
    sent = _export(STORY, jaeger, tmp_path / "story.json")
    services = {service for service, _ in sent.values()}
    assert {"kubectl", "scheduler", "kubelet", "controller-manager/deployment-controller"} <= (
        services
    )
    _until(lambda: services <= jaeger.services(), "every component as a service", jaeger.log)

    patch = max(  # the apply that changed the pod template: a rollout
        (s for by, s in sent.values() if by == "kubectl" and s["name"] == "patch deployments"),
        key=lambda p: sum(s["traceId"] == p["traceId"] for _, s in sent.values()),
    )
    expected = {i: s for i, s in sent.items() if s[1]["traceId"] == patch["traceId"]}
    assert len(expected) > 50  # the controllers, the scheduler, the kubelet
    trace = _until(
        lambda: (t := jaeger.trace(patch["traceId"]))["spans"].__len__() == len(expected) and t,
        "the whole apply trace",
        jaeger.log,
    )
    processes = {key: p["serviceName"] for key, p in trace["processes"].items()}
    for span in trace["spans"]:
        service, otlp = expected[span["spanID"]]
        assert processes[span["processID"]] == service
        assert span["operationName"] == otlp["name"]
        parents = [r for r in span["references"] if r["refType"] == "CHILD_OF"]
        if "parentSpanId" in otlp:
            assert [(r["traceID"], r["spanID"]) for r in parents] == [
                (patch["traceId"], otlp["parentSpanId"])
            ]
        else:
            assert not parents and span["spanID"] == patch["spanId"]  # the root: kubectl's
        links = [r for r in span["references"] if r["refType"] == "FOLLOWS_FROM"]
        assert [(r["traceID"], r["spanID"]) for r in links] == [
            (link["traceId"], link["spanId"]) for link in otlp.get("links", [])
        ]
    by_id = {s["spanID"]: s for s in trace["spans"]}
    rollout = [
        s
        for s in by_id.values()
        if processes[s["processID"]] == "controller-manager/deployment-controller"
    ]
    assert any(r["spanID"] == patch["spanId"] for s in rollout for r in s["references"])


def test_a_link_is_the_watch_event_that_delivered_the_change(
    jaeger: Jaeger, tmp_path: Path
) -> None:
    """Read through the v3 API (OTLP JSON): a link keeps its attributes, and its span is
    the watch's, in a trace of its own."""
    sent = _export(STORY, jaeger, tmp_path / "story.json")
    binding = _named(sent, "scheduler", "create pods/binding")
    delivery = binding["links"][0]
    watch_service, watch = sent[delivery["spanId"]]

    def read() -> list[dict[str, Any]]:
        answer = jaeger.get(f"/api/v3/traces/{binding['traceId']}")
        return [
            span
            for resource in answer["result"]["resourceSpans"]
            for scope in resource["scopeSpans"]
            for span in scope.get("spans", ())
            if span["spanId"] == binding["spanId"]
        ]

    [stored] = _until(read, "the binding's span through /api/v3", jaeger.log)
    [link] = [x for x in stored["links"] if x["spanId"] == delivery["spanId"]]
    attributes = {a["key"]: a["value"] for a in link["attributes"]}
    assert attributes["wiretap.event.type"]["stringValue"] in ("ADDED", "MODIFIED")
    assert attributes["wiretap.event.object"]["stringValue"].startswith("pods default/web-")
    assert watch_service == "scheduler" and watch["name"] == "watch pods"
    watch_trace = _until(lambda: jaeger.trace(watch["traceId"]), "the watch's trace", jaeger.log)
    assert [s["spanID"] for s in watch_trace["spans"]] == [watch["spanId"]]


def test_the_proxys_live_output_reaches_jaeger(jaeger: Jaeger) -> None:
    """The recorder's output, fed the records of the 1.20 story as the proxy writes them:
    every exchange reaches Jaeger as a span, none dropped, each trace as `export` makes it."""
    warnings: list[str] = []
    output = OtlpOutput(jaeger.otlp)
    for record in iter_records(STORY_1_20, warnings):
        output.write(record)
    output.close()
    exported: list[Span] = []
    export_batches(iter_records(STORY_1_20, warnings), exported.extend)
    assert (output.sent, output.dropped_spans, output.dropped_records) == (len(exported), 0, 0)
    patch = next(s for s in exported if s.service == "kubectl" and s.name == "patch deployments")
    expected = {s.span_id for s in exported if s.trace_id == patch.trace_id}
    assert len(expected) > 10  # the deployment controller, the replica sets, the scheduler

    def stored() -> set[str]:
        return {s["spanID"] for s in jaeger.trace(patch.trace_id)["spans"]}

    _until(lambda: stored() == expected, "the live output's apply trace", jaeger.log)


def test_proxy_otlp_endpoint_sends_spans_while_it_runs(
    jaeger: Jaeger, lab: LabState, tmp_path: Path
) -> None:
    """`proxy --otlp-endpoint` in front of the lab: kubectl's requests reach Jaeger while
    the proxy runs (a span goes out once its exchange has ended and the stream's look-ahead
    has passed), as the exchanges the recording holds."""
    proxy = spawn_proxy(lab.kubeconfig, tmp_path, "--otlp-endpoint", jaeger.otlp)
    try:
        kubectl = Kubectl(lab.kubeconfig, tmp_path / "cache", server=proxy.url)
        kubectl("create", "configmap", "otlp-live", "--from-literal=colour=blue")
        recording = proxy.wait_for(
            "kubectl's create",
            lambda r: any(e.method == "POST" and e.status == 201 for e in r.exchanges),
        )
        create = next(e for e in recording.exchanges if e.method == "POST" and e.status == 201)

        def sent() -> dict[str, Any]:
            trace = jaeger.trace(trace_id(create.id))
            [span] = [s for s in trace["spans"] if s["spanID"] == span_id(create.id)]
            return {"span": span, "processes": trace["processes"]}

        found = _until(sent, "the proxy's span of kubectl's create", jaeger.log, 90)
        span = found["span"]
        tags = {t["key"]: t["value"] for t in span["tags"]}
        assert found["processes"][span["processID"]]["serviceName"] == "kubectl"
        assert span["operationName"] == "create configmaps"
        assert tags["http.request.method"] == "POST"
        assert tags["http.response.status_code"] == 201
        assert tags["k8s.namespace.name"] == "default"
        assert tags["wiretap.exchange.id"] == create.id
        assert proxy.process.poll() is None  # still serving: the span went out live
    finally:
        proxy.stop()
        Kubectl(lab.kubeconfig, tmp_path / "cache")("delete", "configmap", "otlp-live")
    assert "dropped" not in proxy.log.read_text()
