"""Exchanges as OTLP spans, over the apply story recorded on the real lab: one trace per
causal chain, parents from the chains' causes, watch deliveries as links, the explanation as
attributes, ids that do not change from one export to the next, no Secret value anywhere;
and the live output that never makes the proxy wait for a collector."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.capture.reader import load
from k8s_wiretap.commands.formats import FORMATS
from k8s_wiretap.explain.analysis import Analysis
from k8s_wiretap.explain.explainer import Explainer
from k8s_wiretap.views.otlp import (
    OtlpOutput,
    Span,
    export_batches,
    export_request,
    span_id,
    trace_id,
    traces_url,
)
from k8s_wiretap.views.otlp.spans import nanos
from tests.recorded import STORY, story_records, story_release

Spans = dict[str, tuple[str, dict[str, Any]]]  # span id → (service.name, OTLP span)


def _values(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    return {a["key"]: next(iter(a["value"].values())) for a in pairs}


def _spans(requests: list[dict[str, Any]]) -> Spans:
    found: Spans = {}
    for request in requests:
        for resource in request["resourceSpans"]:
            service = _values(resource["resource"]["attributes"])["service.name"]
            for scope in resource["scopeSpans"]:
                assert scope["scope"]["name"] == "k8s-wiretap"
                for span in scope["spans"]:
                    assert span["spanId"] not in found
                    found[span["spanId"]] = (service, span)
    return found


def _export(recording: Path, tmp_path: Path, name: str = "out.json") -> tuple[bytes, Spans]:
    out = tmp_path / name
    result = subprocess.run(
        [sys.executable, "-m", "k8s_wiretap", "export", str(recording), "--otlp", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "spans in" in result.stderr
    data = out.read_bytes()
    return data, _spans([json.loads(line) for line in data.splitlines()])


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, Spans]:
    return _export(STORY, tmp_path_factory.mktemp("otlp"))


@pytest.fixture(scope="module")
def explainer() -> Explainer:
    return Explainer(Analysis.of(load(STORY)))


def test_every_exchange_is_one_span_in_the_otlp_json_encoding(
    exported: tuple[bytes, Spans],
) -> None:
    _, spans = exported
    exchanges = load(STORY).exchanges
    assert {span_id(e.id) for e in exchanges} == set(spans)
    for _, span in spans.values():
        assert len(span["traceId"]) == 32 and int(span["traceId"], 16) >= 0
        assert len(span["spanId"]) == 16 and int(span["spanId"], 16) >= 0
        assert span["kind"] == 3  # CLIENT: a component's call to the API server
        start, end = span["startTimeUnixNano"], span["endTimeUnixNano"]
        assert isinstance(start, str) and start.isdigit() and int(end) >= int(start)
    first = exchanges[0]
    assert spans[span_id(first.id)][1]["startTimeUnixNano"] == str(nanos(first.time))


def test_a_trace_is_a_causal_chain_and_a_parent_the_write_that_caused_it(
    exported: tuple[bytes, Spans], explainer: Explainer
) -> None:
    _, spans = exported
    parents = 0
    for exchange in explainer.analysis.exchanges:
        chain = explainer.chains.chain_ids(exchange)
        _, span = spans[span_id(exchange.id)]
        assert span["traceId"] == trace_id(chain[0])
        if len(chain) > 1:
            parents += 1
            assert span["parentSpanId"] == span_id(chain[-2])
            assert spans[span["parentSpanId"]][1]["traceId"] == span["traceId"]
        else:
            assert "parentSpanId" not in span  # in no chain, or its root: a trace's root
    assert parents > 100  # the story's controllers react to each other all along


def test_kubectls_apply_is_the_root_of_the_controllers_reactions(
    exported: tuple[bytes, Spans],
) -> None:
    _, spans = exported
    patch = next(
        span
        for service, span in spans.values()
        if service == "kubectl" and span["name"] == "patch deployments"
    )
    trace = [(s, span) for s, span in spans.values() if span["traceId"] == patch["traceId"]]
    assert "parentSpanId" not in patch
    services = {service for service, _ in trace}
    assert {
        "kubectl",
        "controller-manager/deployment-controller",
        "controller-manager/replicaset-controller",
        "scheduler",
        "kubelet",
    } <= services
    rollout = next(
        span for s, span in trace if s.endswith("deployment-controller") and "parentSpanId" in span
    )
    assert rollout["parentSpanId"] == patch["spanId"]


def test_the_watch_event_that_delivered_the_change_is_a_link(
    exported: tuple[bytes, Spans], explainer: Explainer
) -> None:
    _, spans = exported
    linked = 0
    for exchange in explainer.analysis.exchanges:
        cause = explainer.chains.caused_by(exchange)
        if cause is None:
            continue
        _, span = spans[span_id(exchange.id)]
        delivery = span["links"][0]
        watch_service, watch = spans[delivery["spanId"]]
        assert delivery["spanId"] == span_id(cause.hop.watch)
        assert delivery["traceId"] == watch["traceId"]  # the watch's own trace
        assert _values(watch["attributes"])["wiretap.verb"] == "watch"
        attributes = _values(delivery["attributes"])
        assert attributes["wiretap.event.type"] == cause.hop.type
        assert attributes["wiretap.event.object"] == str(cause.hop.ref)
        assert attributes["wiretap.event.watcher"] == cause.hop.watcher
        assert watch_service.startswith(cause.hop.watcher.split("/")[0])
        linked += 1
    assert linked > 100


def test_the_explanation_and_the_request_are_attributes_by_the_semantic_conventions(
    exported: tuple[bytes, Spans],
) -> None:
    _, spans = exported
    resources = {}
    for request_line in exported[0].splitlines():
        for resource in json.loads(request_line)["resourceSpans"]:
            values = _values(resource["resource"]["attributes"])
            resources[values["service.name"]] = values
    assert resources["kubectl"]["service.version"] == story_release().git_version
    assert resources["kubelet"]["k8s.node.name"] == "node-1"
    patch = next(
        span
        for service, span in spans.values()
        if service == "kubectl" and span["name"] == "patch deployments"
    )
    attributes = _values(patch["attributes"])
    assert attributes["http.request.method"] == "PATCH"
    assert attributes["http.response.status_code"] == "200"  # an intValue: a string in JSON
    assert attributes["url.path"] == "/apis/apps/v1/namespaces/default/deployments/web"
    assert attributes["k8s.namespace.name"] == "default"
    assert attributes["k8s.deployment.name"] == "web"
    assert attributes["wiretap.verb"] == "patch"
    assert attributes["wiretap.resource"] == "deployments"
    assert attributes["wiretap.name"] == "web"
    assert attributes["wiretap.summary"].startswith("kubectl apply patches Deployment default/web")
    assert attributes["wiretap.kubectl.command"] == "kubectl apply"
    assert attributes["user_agent.original"].startswith("kubectl")
    assert "status" not in patch  # a success leaves the status unset


def test_a_failed_exchange_has_an_error_status(exported: tuple[bytes, Spans]) -> None:
    _, spans = exported
    failed = [
        span
        for _, span in spans.values()
        if int(_values(span["attributes"]).get("http.response.status_code", "0")) >= 400
    ]
    assert failed  # kubectl apply's GET of what does not exist yet: 404
    for span in failed:
        code = _values(span["attributes"])["http.response.status_code"]
        assert span["status"]["code"] == 2
        assert span["status"]["message"].startswith(code)
        assert _values(span["attributes"])["error.type"] == code


def test_exporting_twice_gives_the_same_traces(
    exported: tuple[bytes, Spans], tmp_path: Path
) -> None:
    again, _ = _export(STORY, tmp_path, "again.json")
    assert again == exported[0]


def test_no_secret_value_and_no_body_goes_into_a_span(exported: tuple[bytes, Spans]) -> None:
    data, spans = exported
    created = [s for _, s in spans.values() if s["name"] == "create secrets"]
    assert [_values(s["attributes"])["k8s.namespace.name"] for s in created] == ["default"]
    # the recording holds the Secret's password as its redaction marker; bodies never go
    assert b"redacted:" not in data
    assert b"stringData" not in data and b"password" not in data


def test_batches_split_a_recording_into_requests_of_at_most_batch_spans() -> None:
    batches: list[list[Span]] = []
    export_batches(iter(story_records()), batches.append, batch=100)
    assert all(len(b) == 100 for b in batches[:-1]) and 0 < len(batches[-1]) <= 100
    whole: list[list[Span]] = []
    export_batches(iter(story_records()), whole.append)
    assert [s for b in batches for s in b] == [s for b in whole for s in b]
    request = export_request(batches[0])
    assert sum(len(r["scopeSpans"][0]["spans"]) for r in request["resourceSpans"]) == 100


def test_the_endpoint_is_the_collectors_base_url() -> None:
    assert traces_url("http://jaeger:4318") == "http://jaeger:4318/v1/traces"
    assert traces_url("http://jaeger:4318/") == "http://jaeger:4318/v1/traces"
    assert traces_url("https://otel.example/v1/traces") == "https://otel.example/v1/traces"


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "k8s_wiretap", *argv], capture_output=True, text=True, check=False
    )


def test_export_says_in_one_line_what_is_wrong(tmp_path: Path) -> None:
    nowhere = _cli("export", str(STORY))
    assert nowhere.returncode == 2
    every = ", ".join(f"--{fmt.name} OUT" for fmt in FORMATS)
    assert nowhere.stderr.strip().splitlines() == [
        f"k8s-wiretap: export: say where to: {every}, --otlp-endpoint URL"
    ]
    bad = _cli("export", str(STORY), "--otlp-endpoint", "jaeger:4318")
    assert bad.returncode == 2 and "expected http(s)://HOST:PORT" in bad.stderr
    with _closed_port() as port:
        dead = _cli("export", str(STORY), "--otlp-endpoint", f"http://127.0.0.1:{port}")
    assert dead.returncode == 1
    assert dead.stderr.strip().splitlines() == [
        f"k8s-wiretap: http://127.0.0.1:{port}/v1/traces: [Errno 111] Connection refused"
    ]


@pytest.fixture
def closed_port() -> Iterator[int]:
    with _closed_port() as port:
        yield port


class _closed_port:
    """A loopback port nothing listens on (bound, never listening: no one else takes it)."""

    def __enter__(self) -> int:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        return int(self.sock.getsockname()[1])

    def __exit__(self, *_: object) -> None:
        self.sock.close()


class _Silent:
    """A collector that accepts connections and never answers: the slowest there is."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = int(self.sock.getsockname()[1])
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self.held.append(self.sock.accept()[0])
            except OSError:
                return

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


def test_a_silent_collector_never_holds_up_the_recorder() -> None:
    """Every record is taken at once (the proxy never waits); the spans that do not fit the
    queue while the collector says nothing are dropped, counted and said on stderr."""
    collector = _Silent()
    stderr = io.StringIO()
    url = f"http://127.0.0.1:{collector.port}"
    output = OtlpOutput(url, stderr=stderr, spans=10, timeout=2.0, close_wait=300)

    def write_all() -> None:
        for record in story_records():
            output.write(record)

    try:
        writer = threading.Thread(target=write_all)
        writer.start()
        writer.join(60)  # a write that blocked would hold this thread forever
        assert not writer.is_alive()
        output.close()
    finally:
        collector.close()
    assert output.sent == 0
    assert output.dropped_spans == len(load(STORY).exchanges)
    lines = stderr.getvalue().splitlines()
    assert lines[0].startswith("k8s-wiretap: otlp: ")
    assert "dropped" in lines[0]
    assert lines[-1] == (
        f"k8s-wiretap: otlp: 0 spans sent, {output.dropped_spans} spans and 0 records dropped"
    )


def test_a_full_record_queue_drops_records_and_says_so(closed_port: int) -> None:
    stderr = io.StringIO()
    output = OtlpOutput(f"http://127.0.0.1:{closed_port}", stderr=stderr, records=1)
    for record in story_records()[:200]:
        output.write(record)
    output.close()
    assert output.dropped_records > 0
    assert "records dropped" in stderr.getvalue()


def test_a_story_recorded_now_is_traced_the_same_way(story: Path, tmp_path: Path) -> None:
    """The apply story recorded on today's lab: every exchange a span, and kubectl's
    apply the root of a trace of the controllers', the scheduler's and the kubelet's
    reactions, each span's parent in the same trace."""
    data, spans = _export(story, tmp_path)
    assert {span_id(e.id) for e in load(story).exchanges} == set(spans)
    by_trace: dict[str, set[str]] = {}
    for service, span in spans.values():
        by_trace.setdefault(span["traceId"], set()).add(service)
        if "parentSpanId" in span:
            assert spans[span["parentSpanId"]][1]["traceId"] == span["traceId"]
    roots = [s for by, s in spans.values() if by == "kubectl" and s["name"] == "patch deployments"]
    reactions = {"scheduler", "kubelet", "controller-manager/replicaset-controller"}
    assert any(reactions <= by_trace[root["traceId"]] for root in roots)
    assert b"redacted:" not in data


def test_proxy_refuses_a_bad_endpoint_and_several_workers(tmp_path: Path) -> None:
    """Both before anything listens, in one line: several workers would each explain only
    their own connections, and a causal chain crosses them."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:6443'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    proxy = ("proxy", "--kubeconfig", str(kubeconfig), "--no-tui", "--otlp-endpoint")
    bad = _cli(*proxy, "127.0.0.1:4318")
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "k8s-wiretap: --otlp-endpoint '127.0.0.1:4318': expected http(s)://HOST:PORT"
    ]
    workers = _cli(*proxy, "http://127.0.0.1:4318", "--workers", "2")
    assert workers.returncode == 2
    assert workers.stderr.strip().splitlines() == [
        "k8s-wiretap: --otlp-endpoint needs one proxy process: drop --workers"
    ]
