"""The wiretap against the real lab: kubectl through it works as direct, and is recorded."""

from __future__ import annotations

import base64
import http.client
import io
import json
import os
import re
import selectors
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from k8s_wiretap.capture.exchange import Exchange
from k8s_wiretap.capture.reader import Recording
from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.lab.layout import Layout
from k8s_wiretap.lab.readiness import admin_client
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.proxy.addon import DEFAULT_IDLE_TIMEOUT
from k8s_wiretap.proxy.server import free_port
from k8s_wiretap.workshop import manifest
from tests.conftest import Kubectl, wait_until
from tests.proxy.conftest import Wiretap, spawn_proxy

PROTOBUF = "application/vnd.kubernetes.protobuf"


def find(recording: Recording, method: str, pattern: str) -> list[Exchange]:
    return [e for e in recording.exchanges if e.method == method and re.search(pattern, e.path)]


def test_apply_create_update_scale_delete_through_plain_http(
    proxied: Kubectl, wiretap: Wiretap
) -> None:
    proxied("create", "namespace", "through")
    proxied("apply", "-n", "through", "-f", "-", stdin=manifest("web"))
    three = manifest("web").replace("replicas: 2", "replicas: 3")
    assert "configured" in proxied("apply", "-n", "through", "-f", "-", stdin=three)
    proxied("scale", "-n", "through", "deployment/web", "--replicas=1")
    assert (
        proxied("get", "-n", "through", "deployment/web", "-o", "jsonpath={.spec.replicas}") == "1"
    )
    assert "Replicas:" in proxied("describe", "-n", "through", "deployment/web")
    proxied("delete", "-n", "through", "deployment/web")

    deployment = r"/apis/apps/v1/namespaces/through/deployments/web(\?|$)"
    recording = wiretap.wait_for("the delete", lambda r: bool(find(r, "DELETE", deployment)))
    gets = find(recording, "GET", deployment)
    assert [g.status for g in gets[:2]] == [404, 200]  # apply GETs before create and update
    create = find(recording, "POST", r"/namespaces/through/deployments\?")[0]
    assert create.status == 201
    patch = find(recording, "PATCH", deployment)[0]
    assert patch.request_header("content-type") == "application/strategic-merge-patch+json"
    body = json.loads(patch.request_body.data)  # type: ignore[union-attr]
    assert body["spec"] == {"replicas": 3}  # only the difference
    applied = json.loads(
        body["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
    )
    assert applied["spec"]["replicas"] == 3  # the whole new file
    assert patch.info.param("fieldManager") == "kubectl-client-side-apply"
    assert find(recording, "PATCH", r"/deployments/web/scale")[0].status == 200


def test_get_watch_shows_a_change_while_the_watch_is_open(
    proxied: Kubectl, wiretap: Wiretap
) -> None:
    proxied("create", "namespace", "watched")
    watcher = proxied.popen(
        "get", "configmaps", "-n", "watched", "-w", "--no-headers", "-l", "story=watch"
    )
    try:
        wait_until(
            lambda: bool(
                find(wiretap.recording(), "GET", r"/namespaces/watched/configmaps\?.*watch=true")
            ),
            20,
            "the watch to open",
        )
        proxied(
            "create",
            "-f",
            "-",
            stdin=(
                "apiVersion: v1\nkind: ConfigMap\n"
                "metadata: {name: while-open, namespace: watched, labels: {story: watch}}\n"
            ),
        )
        # kubectl prints it only if the event is streamed to it while the watch is open
        assert read_line(watcher, 30).startswith("while-open")
    finally:
        watcher.kill()
        watcher.wait()
    recording = wiretap.wait_for(
        "the watch to end",
        lambda r: any(
            e.end for e in find(r, "GET", r"/namespaces/watched/configmaps\?.*watch=true")
        ),
    )
    watch = find(recording, "GET", r"/namespaces/watched/configmaps\?.*watch=true")[0]
    texts = [e.data.data for e in watch.watch_events()]
    assert any(b"while-open" in t and b'"ADDED"' in t for t in texts)
    assert watch.end is not None and watch.end.error  # the client went away mid-watch


def read_line(process: subprocess.Popen[str], timeout: float) -> str:
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            raise AssertionError(f"no output within {timeout:.0f} s")
    return process.stdout.readline()


def test_bodies_through_the_proxy_equal_direct(
    lab: LabState, wiretap: Wiretap, kubectl: Kubectl
) -> None:
    kubectl("create", "namespace", "fidelity")
    for name in ("a", "b"):
        kubectl("create", "configmap", name, "-n", "fidelity", f"--from-literal=k={name}")
    direct = admin_client(Layout(Path(lab.kubeconfig).parent, lab.ports))
    for path, accept in [
        ("/api/v1/namespaces/fidelity/configmaps", "application/json"),
        ("/api/v1/namespaces/fidelity/configmaps", PROTOBUF),
        ("/api/v1/namespaces/fidelity/configmaps/a", PROTOBUF),
        ("/version", "application/json"),
    ]:
        before, through, after = b"", b"", b"-"
        for _ in range(10):  # a list's resourceVersion moves with every write in the cluster
            before = direct.get(path, accept=accept).body
            through = get_through(wiretap.port, path, accept)
            after = direct.get(path, accept=accept).body
            if before == after:
                break
        assert before == after, f"{path} never stood still between two direct reads"
        assert through == before, path


def get_through(port: int, path: str, accept: str) -> bytes:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", path, headers={"Accept": accept})
    try:
        return connection.getresponse().read()
    finally:
        connection.close()


def recorded_bytes(recording: Recording) -> list[bytes]:
    out = []
    for exchange in recording.exchanges:
        for body in (exchange.request_body, exchange.response_body):
            if body:
                out.append(body.data)
        out += [e.data.data for e in exchange.events]
        out += [v.encode() for _, v in exchange.request.headers]
    return out


def test_secret_values_never_reach_the_recording(proxied: Kubectl, wiretap: Wiretap) -> None:
    proxied("create", "namespace", "secrets")
    watcher = proxied.popen("get", "secrets", "-n", "secrets", "-w", "-o", "json")
    try:
        proxied(
            "create",
            "secret",
            "generic",
            "literal",
            "-n",
            "secrets",
            "--from-literal=password=literal-secret-value",
        )
        applied = (
            "apiVersion: v1\nkind: Secret\nmetadata: {name: applied, namespace: secrets}\n"
            "stringData: {token: applied-secret-value}\n"
        )
        proxied("apply", "-f", "-", stdin=applied)
        proxied(
            "apply",
            "-f",
            "-",
            stdin=applied.replace("applied-secret-value", "changed-secret-value"),
        )
        proxied("get", "secrets", "-n", "secrets", "-o", "yaml")
        proxied("get", "secrets", "-n", "secrets")
        token = proxied("create", "token", "default", "-n", "secrets").strip()
    finally:
        watcher.kill()
        watcher.wait()
    recording = wiretap.wait_for(
        "the token request", lambda r: bool(find(r, "POST", r"/serviceaccounts/default/token"))
    )
    secrets = [
        b"literal-secret-value",
        b"applied-secret-value",
        b"changed-secret-value",
        token.encode(),
    ]
    secrets += [base64.b64encode(s) for s in secrets]
    everything = recorded_bytes(recording)
    for secret in secrets:
        assert not any(secret in data for data in everything), secret
    patch = find(recording, "PATCH", r"/namespaces/secrets/secrets/applied")[0]
    assert patch.request_body and patch.request_body.redacted
    assert b"redacted:" in patch.request_body.data


def test_a_watch_the_api_server_ends_is_recorded_whole(proxied: Kubectl, wiretap: Wiretap) -> None:
    proxied("create", "namespace", "timeout")
    proxied("create", "configmap", "present", "-n", "timeout")
    path = "/api/v1/namespaces/timeout/configmaps?watch=1&timeoutSeconds=1"
    output = proxied("get", "--raw", path)  # returns when the API server ends the watch
    assert '"type":"ADDED"' in output and "present" in output
    recorded = r"/namespaces/timeout/configmaps\?.*watch=1"  # kubectl sorts the query
    recording = wiretap.wait_for(
        "the ended watch", lambda r: any(e.end for e in find(r, "GET", recorded))
    )
    watch = find(recording, "GET", recorded)[0]
    assert watch.end is not None and watch.end.error is None
    assert watch.end.events == len(watch.watch_events()) >= 1
    assert any(b"present" in event.data.data for event in watch.watch_events())


def test_a_compressed_watch_list_is_recorded_event_by_event(
    proxied: Kubectl, wiretap: Wiretap
) -> None:
    """A watch list (sendInitialEvents) is gzipped in the default release
    (WatchListCompression), one gzip member per flush: the events after the initial ones
    were lost until the recorder read every member. The recording holds each event the
    client got, in order."""
    proxied("create", "namespace", "listed")
    proxied("create", "configmap", "before", "-n", "listed")
    path = (
        "/api/v1/namespaces/listed/configmaps?watch=1&sendInitialEvents=true"
        "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=6"
    )
    watcher = proxied.popen("get", "--raw", path)
    recorded = r"/namespaces/listed/configmaps\?.*sendInitialEvents=true"
    wiretap.wait_for("the watch list to open", lambda r: bool(find(r, "GET", recorded)), 20)
    for name in ("after-1", "after-2"):
        proxied("create", "configmap", name, "-n", "listed")
    output, _ = watcher.communicate(timeout=30)  # the API server ends it after 6 s
    got = [json.loads(line) for line in output.splitlines() if line.strip()]
    recording = wiretap.wait_for(
        "the watch list to end", lambda r: any(e.end for e in find(r, "GET", recorded))
    )
    watch = find(recording, "GET", recorded)[0]
    assert watch.response is not None and watch.response.header("content-encoding") == "gzip"
    events = [json.loads(event.data.data) for event in watch.watch_events()]
    assert events == got
    names = [e["object"]["metadata"].get("name") for e in events if e["type"] == "ADDED"]
    assert [n for n in names if n != "kube-root-ca.crt"] == ["before", "after-1", "after-2"]
    assert any(e["type"] == "BOOKMARK" for e in events[: len(events) - 2])  # initial-events-end


def test_a_host_that_is_not_loopback_is_refused(wiretap: Wiretap) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", wiretap.port, timeout=10)
    connection.request("GET", "/api/v1/namespaces", headers={"Host": "attacker.example"})
    reply = connection.getresponse()
    status = json.loads(reply.read())
    assert reply.status == 403
    assert status["kind"] == "Status" and "not loopback" in status["message"]


def test_streaming_subresources_fail_as_they_do_direct(
    kubectl: Kubectl, proxied: Kubectl, lab: LabState
) -> None:
    kubectl("create", "namespace", "streams")
    kubectl("run", "shell", "-n", "streams", "--image=busybox", "--", "sleep", "3600")
    wait_until(
        lambda: (
            kubectl("get", "pod", "shell", "-n", "streams", "-o", "jsonpath={.status.phase}")
            == "Running"
        ),
        60,
        "the pod",
    )
    for args in (
        ["logs", "shell"],
        ["logs", "-f", "shell"],
        ["exec", "shell", "--", "ls"],
        ["attach", "shell"],
        ["port-forward", "pod/shell", "18080:80"],
    ):
        direct = kubectl.run(*args, "-n", "streams", check=False)
        through = proxied.run(*args, "-n", "streams", check=False)
        assert direct.returncode == through.returncode != 0, args
        assert normalise(through.stderr) == normalise(direct.stderr), args


def normalise(text: str) -> str:
    return re.sub(r"127\.0\.0\.1:\d+|localhost:\d+", "SERVER", text).strip()


def test_an_unreachable_api_server_gets_the_client_a_status(tmp_path: Path, lab: LabState) -> None:
    dead = free_port()
    config = Path(lab.kubeconfig).read_text()
    (tmp_path / "dead.kubeconfig").write_text(
        re.sub(r"server: https://127\.0\.0\.1:\d+", f"server: https://127.0.0.1:{dead}", config)
    )
    proxy = spawn_proxy(str(tmp_path / "dead.kubeconfig"), tmp_path)
    try:
        client = Kubectl(lab.kubeconfig, tmp_path / "cache", server=proxy.url)
        for _ in range(2):  # the proxy stays up
            result = client.run("get", "--raw", "/api/v1/namespaces/default/pods", check=False)
            assert result.returncode == 1
            assert f"API server https://127.0.0.1:{dead} is unreachable" in result.stderr
    finally:
        proxy.stop()
    recording = proxy.recording()
    statuses = [e.status for e in recording.exchanges]
    assert len(statuses) >= 2 and set(statuses) == {503}
    assert b"unreachable" in recording.exchanges[-1].response_body.data  # type: ignore[union-attr]


@pytest.mark.lab  # a lab of its own, only an API server
def test_an_api_server_that_dies_gets_the_next_request_a_status(tmp_path: Path) -> None:
    """Right after an answer (the API server counted as reachable), it dies: the next request
    still gets the Status 503, not mitmproxy's own HTML 502."""
    lab = Lab(tmp_path / "lab")
    state = lab.up(UpOptions(components=("apiserver",), build=False), out=io.StringIO())
    proxy = spawn_proxy(state.kubeconfig, tmp_path)
    try:
        client = Kubectl(state.kubeconfig, tmp_path / "cache", server=proxy.url)
        client("get", "--raw", "/api/v1/namespaces/default/configmaps")
        apiserver = next(p for p in state.processes if p.name == "apiserver")
        os.kill(apiserver.pid, signal.SIGKILL)
        wait_until(lambda: not apiserver.alive(), 10, "the API server to die")
        result = client.run("get", "--raw", "/api/v1/namespaces/default/pods", check=False)
        assert result.returncode == 1
        assert f"API server {state.server} is unreachable" in result.stderr
    finally:
        proxy.stop()
        lab.down(out=io.StringIO())
    assert proxy.recording().exchanges[-1].status == 503


def test_idle_timeout_is_the_proxys_own(tmp_path: Path, lab: LabState, wiretap: Wiretap) -> None:
    """mitmproxy's watchdog cuts idle connections after `tcp_timeout` (600 s by default);
    ours follows --idle-timeout (default one day, beyond the API server's longest watch).
    Shown with a short timeout."""
    # the session's proxy runs in this process with the default
    assert wiretap.server.idle_timeout == DEFAULT_IDLE_TIMEOUT > 3600
    proxy = spawn_proxy(lab.kubeconfig, tmp_path, "--idle-timeout", "2")
    pattern = r"/namespaces/quiet/configmaps\?.*watch=true"
    try:
        client = Kubectl(lab.kubeconfig, tmp_path / "cache", server=proxy.url)
        client("create", "namespace", "quiet")
        watcher = client.popen("get", "configmaps", "-n", "quiet", "-w")
        wait_until(lambda: watcher.poll() is not None, 30, "the idle watch to be cut")
        recording = proxy.wait_for(
            "the cut watch's end", lambda r: any(e.end for e in find(r, "GET", pattern))
        )
    finally:
        proxy.stop()
    watch = find(recording, "GET", pattern)[0]
    assert watch.status == 200 and watch.end is not None
    assert watch.end.error  # cut by the proxy, not ended by the API server
    assert watch.end.events == 0  # idle all along


def test_protobuf_and_http2_through_tls(wiretap: Wiretap, lab: LabState, tmp_path: Path) -> None:
    from tests.conftest import cli

    config = tmp_path / "via.kubeconfig"
    result = cli(
        "kubeconfig",
        "--kubeconfig",
        lab.kubeconfig,
        "--proxy",
        f"127.0.0.1:{wiretap.port}",
        "--confdir",
        str(wiretap.confdir),
        "-o",
        str(config),
    )
    assert result.returncode == 0, result.stderr
    client = Kubectl(str(config), tmp_path / "cache")
    client("get", "nodes", "-o", "name")
    recording = wiretap.wait_for(
        "the TLS request",
        lambda r: any(e.request.client.alpn == "h2" for e in r.exchanges),
    )
    exchange = next(e for e in recording.exchanges if e.request.client.alpn == "h2")
    assert exchange.request.client.tls is True
    assert exchange.request.identity.credential == "added by proxy"
    assert exchange.request.identity.user.startswith("kubernetes-admin (system:masters)")


BROKEN_REQUESTS = {
    "bad content-length": (
        "POST",
        "/api/v1/namespaces/default/configmaps?case=length",
        b"Content-Type: application/json\r\nContent-Length: abc\r\n\r\n{}",
    ),
    "cut-off body": (
        "PUT",
        "/api/v1/namespaces/default/configmaps/cut?case=cut",
        b'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"kind":',
    ),
    "bad chunk header": (
        "POST",
        "/api/v1/namespaces/default/configmaps?case=chunk",
        b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n",
    ),
}


def send_raw(port: int, data: bytes) -> bytes:
    """Send `data` on a fresh connection, stop sending, read until the proxy hangs up."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    return reply


def test_requests_that_break_are_recorded_with_their_error(lab: LabState, tmp_path: Path) -> None:
    """A request mitmproxy rejects (a bad Content-Length) or whose body breaks (cut off, a bad
    chunk) reaches the addon's `error` hook, never `request`: it is still recorded as what it
    was, a request (method, path, headers), the proxy's answer if it gave one, and an end
    with the error, and the recording loads without a warning."""
    proxy = spawn_proxy(lab.kubeconfig, tmp_path)
    try:
        for method, path, rest in BROKEN_REQUESTS.values():
            head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{proxy.port}\r\n".encode()
            send_raw(proxy.port, head + rest)
        client = Kubectl(lab.kubeconfig, tmp_path / "cache", server=proxy.url)
        client("get", "--raw", "/version")  # the proxy is still fine
    finally:
        proxy.stop()
    recording = proxy.recording()
    assert recording.warnings == []
    for case, (method, path, _) in BROKEN_REQUESTS.items():
        matching = [e for e in recording.exchanges if e.path == path]
        assert len(matching) == 1, (case, [e.path for e in recording.exchanges])
        exchange = matching[0]
        assert exchange.method == method, case
        assert exchange.request_header("content-type") == "application/json", case
        assert exchange.request.client.address.startswith("127.0.0.1:"), case
        assert exchange.end is not None and exchange.end.error, case
        # the proxy's own 400 to what it refused (a Status); a body cut off by the client's
        # close has no answer
        status = None if case == "cut-off body" else 400
        assert exchange.status == status, case
    assert any(e.path == "/version" and e.status == 200 for e in recording.exchanges)
