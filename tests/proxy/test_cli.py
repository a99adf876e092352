"""`k8s-wiretap proxy | run | kubeconfig` as users run them, and mitmdump with our script."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import yaml

from k8s_wiretap.capture.exchange import Body
from k8s_wiretap.capture.reader import iter_records, load
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.proxy.server import free_port
from tests.conftest import Kubectl, cli, wait_until
from tests.proxy.conftest import Wiretap, spawn_proxy


def test_run_passes_the_exit_status_and_shows_what_was_captured(
    lab: LabState, tmp_path: Path
) -> None:
    env = {**os.environ, "KUBECONFIG": lab.kubeconfig}
    record = tmp_path / "run.jsonl"
    ok = cli("run", "--record", str(record), "--", "kubectl", "get", "namespaces", env=env)
    assert ok.returncode == 0, ok.stderr
    assert "default" in ok.stdout
    assert "exchanges of the command captured (and the wiretap's own GET /version)" in ok.stderr
    assert "GET /api/v1/namespaces?limit=500 200" in ok.stderr
    listed = ok.stderr.split("captured", 1)[1].splitlines()[1:]  # the proxy's own is not listed
    assert listed and all(" kubectl " in line for line in listed), listed
    assert any(e.path.startswith("/api/v1/namespaces") for e in load(record).exchanges)
    missing = cli("run", "--", "kubectl", "get", "pod", "no-such-pod", env=env)
    assert missing.returncode == 1 and "NotFound" in missing.stderr
    assert cli("run", "--", "sh", "-c", "exit 7", env=env).returncode == 7


def test_no_redact_keeps_values_and_says_so(lab: LabState, tmp_path: Path) -> None:
    env = {**os.environ, "KUBECONFIG": lab.kubeconfig}
    record = tmp_path / "plain.jsonl"
    result = cli(
        "run",
        "--no-redact",
        "--record",
        str(record),
        "--",
        "kubectl",
        "create",
        "secret",
        "generic",
        "kept",
        "--from-literal=k=visible-on-purpose",
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert "warning: --no-redact" in result.stderr
    assert load(record).header["redacted"] is False
    bodies = [b for e in load(record).exchanges for b in (e.request_body, e.response_body) if b]
    assert any(b"visible-on-purpose" in body.data for body in bodies)


def test_run_hands_the_command_a_kubeconfig_for_the_proxy_only(
    lab: LabState, tmp_path: Path
) -> None:
    config = yaml.safe_load(Path(lab.kubeconfig).read_text())
    config["contexts"][0]["context"]["namespace"] = "kube-system"
    (tmp_path / "ns.kubeconfig").write_text(yaml.safe_dump(config))
    env = {**os.environ, "KUBECONFIG": str(tmp_path / "ns.kubeconfig")}
    show = 'echo "$KUBECACHEDIR"; cat "$KUBECONFIG"'
    result = cli("run", "--", "sh", "-c", show, env=env)
    cache, *document = result.stdout.splitlines()
    generated = yaml.safe_load("\n".join(document))
    assert generated["clusters"][0]["cluster"]["server"].startswith("https://127.0.0.1:")
    assert generated["contexts"][0]["context"]["namespace"] == "kube-system"
    admin_key = config["users"][0]["user"]["client-key-data"]
    assert admin_key not in "\n".join(document)  # the real credentials stay in the proxy
    assert "k8s-wiretap-run-" in cache and not Path(cache).exists()  # private, and cleaned up
    pods = cli("run", "--", "kubectl", "get", "pods", "-o", "name", env=env)
    assert pods.returncode == 0 and "/api/v1/namespaces/kube-system/pods" in pods.stderr


def test_kubectl_plugin(lab: LabState) -> None:
    folder = Path(sys.executable).parent
    assert (folder / "kubectl-wiretap").exists()
    env = {
        **os.environ,
        "KUBECONFIG": lab.kubeconfig,
        "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}",
    }
    result = subprocess.run(
        ["kubectl", "wiretap", "run", "--", "kubectl", "get", "ns"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "exchanges of the command captured" in result.stderr


def test_usage_errors_are_one_line_with_exit_status_2(lab: LabState, tmp_path: Path) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    existing = tmp_path / "existing.jsonl"
    existing.write_text("kept\n")
    missing = tmp_path / "no-such-folder" / "trace.jsonl"
    proxy = ["proxy", "--kubeconfig", lab.kubeconfig]
    try:
        cases = [
            (["proxy", "--kubeconfig", str(tmp_path / "nope")], "not found"),
            (
                ["proxy", "--kubeconfig", lab.kubeconfig, "--context", "nope"],
                "no context named 'nope'",
            ),
            (
                ["proxy", "--kubeconfig", lab.kubeconfig, "--listen", f"127.0.0.1:{port}"],
                f"cannot listen on 127.0.0.1:{port}",
            ),
            (["proxy", "--kubeconfig", lab.kubeconfig, "--listen", "8001"], "expected HOST:PORT"),
            ([*proxy, "--idle-timeout", "0"], "--idle-timeout 0: must be positive"),
            (
                [*proxy, "--record", str(existing)],
                f"--record: {existing} exists (--overwrite replaces it)",
            ),
            (
                [*proxy, "--record", str(existing), "--overwrite", "--listen", f"127.0.0.1:{port}"],
                f"cannot listen on 127.0.0.1:{port}",
            ),
            (
                [*proxy, "--record", str(missing), "--listen", f"127.0.0.1:{port}"],
                f"--record: folder {missing.parent} does not exist",
            ),
            (
                ["run", "--kubeconfig", lab.kubeconfig, "--record", str(existing), "--", "true"],
                f"--record: {existing} exists",
            ),
            (["run", "--kubeconfig", lab.kubeconfig], "give a command"),
            (
                ["run", "--kubeconfig", lab.kubeconfig, "--", "no-such-command"],
                "no-such-command: command not found",
            ),
            (["proxy", "--no-such-flag"], "proxy: unknown option '--no-such-flag'"),
        ]
        for args, message in cases:
            result = cli(*args, timeout=60)
            assert result.returncode == 2, (args, result.stderr)
            lines = result.stderr.strip().splitlines()
            assert len(lines) == 1 and message in lines[0], (args, result.stderr)
    finally:
        taken.close()
    assert existing.read_text() == "kept\n"  # refused, or the proxy could not start: untouched
    assert not missing.parent.exists()


def test_a_listener_other_machines_reach_needs_allow_remote(lab: LabState, tmp_path: Path) -> None:
    """Loopback by default: a wildcard or other non-loopback address, in --listen or in a
    --routes entry, is refused in one line (before anything listens) unless --allow-remote."""
    port = free_port()
    routes = tmp_path / "routes.json"
    entry = {"name": "admin", "listen": f"0.0.0.0:{port}", "kubeconfig": lab.kubeconfig}
    routes.write_text(json.dumps([entry]))
    reach = "which other machines can reach: add --allow-remote"
    cases = [
        (["--listen", f"0.0.0.0:{port}"], f"--listen 0.0.0.0:{port}, {reach}"),
        (["--listen", f"[::]:{port}"], f"--listen [::]:{port}, {reach}"),
        (["--routes", str(routes)], f"--routes {routes}: admin listens on 0.0.0.0:{port}, {reach}"),
    ]
    for args, message in cases:
        result = cli("proxy", "--kubeconfig", lab.kubeconfig, "--no-tui", *args, timeout=60)
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr.strip() == f"k8s-wiretap: {message} (their clients then need a " + (
            "client certificate of the proxy's CA), or listen on 127.0.0.1"
        ), args


def test_max_body_is_one_byte_or_more(lab: LabState, tmp_path: Path) -> None:
    """A negative --max-body used to drop every body and 0 to mean 16m, silently: both are
    refused in one line by `proxy` and `run`, and by the mitmdump addon's option."""
    proxy = ["proxy", "--kubeconfig", lab.kubeconfig, "--no-tui"]
    run = ["run", "--kubeconfig", lab.kubeconfig]
    for args in ([*proxy, "--max-body=-5"], [*proxy, "--max-body", "0"], [*run, "--max-body=-5"]):
        extra = ["--", "true"] if args[0] == "run" else []
        result = cli(*args, *extra, timeout=60)
        value = args[-1].removeprefix("--max-body=")
        assert result.returncode == 2, (args, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith(f"k8s-wiretap: --max-body {value}: must be 1 byte or more")
    mitmdump = subprocess.run(
        [
            str(Path(sys.executable).parent / "mitmdump"),
            *("-s", str(Path(__file__).parents[2] / "addons" / "wiretap.py")),
            *("--mode", f"reverse:https://127.0.0.1:{free_port()}", "--listen-port", "0"),
            *("--set", "wiretap_max_body=-5"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert mitmdump.returncode != 0
    assert "wiretap_max_body: must be 1 byte or more" in mitmdump.stdout + mitmdump.stderr


def test_overwrite_replaces_an_existing_recording(lab: LabState, tmp_path: Path) -> None:
    old = tmp_path / "recording.jsonl"  # where spawn_proxy records
    old.write_text(
        '{"record":"header","format":"k8s-wiretap-recording","version":1}\n'
        '{"record":"note","time":0,"level":"info","message":"the old recording"}\n'
    )
    proxy = spawn_proxy(lab.kubeconfig, tmp_path, "--overwrite")
    try:
        Kubectl(lab.kubeconfig, tmp_path / "cache", server=proxy.url)("get", "--raw", "/version")
    finally:
        proxy.stop()
    recording = load(old)
    assert recording.header["tool"].startswith("k8s-wiretap ") and not recording.warnings
    # nothing of the old recording is left; the new one ends with the stop's own note
    assert [note["message"] for note in recording.notes] == ["recording stopped by SIGTERM"]
    assert any(e.path == "/version" and e.status == 200 for e in recording.exchanges)


def test_kill_9_mid_recording_leaves_a_loadable_recording(lab: LabState, tmp_path: Path) -> None:
    proxy = spawn_proxy(lab.kubeconfig, tmp_path)
    client = Kubectl(lab.kubeconfig, tmp_path / "cache", server=proxy.url)
    watcher = client.popen("get", "pods", "-A", "-w")

    def recorded() -> bool:  # records reach the file within ~20 ms: wait for them, then kill
        exchanges = proxy.recording().exchanges
        listed = any(e.path.startswith("/api/v1/namespaces?") and e.end for e in exchanges)
        return listed and any(e.info.verb == "watch" and e.response for e in exchanges)

    try:
        client("get", "namespaces")
        wait_until(recorded, 20, "the list and the watch recorded")
        client("get", "namespaces")  # its records may be lost: kill -9 loses the last ~20 ms
        proxy.process.send_signal(signal.SIGKILL)
        proxy.process.wait()
    finally:
        watcher.kill()
        watcher.wait()
    recording = load(proxy.record)
    assert any(
        e.path.startswith("/api/v1/namespaces") and e.status == 200 for e in recording.exchanges
    )
    assert any(e.info.verb == "watch" for e in recording.exchanges)


def exchange_through(
    port: int, method: str, path: str, body: bytes = b"", **headers: str
) -> tuple[int, bytes]:
    """One plain-HTTP exchange with a proxy: the status and body the client received."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(method, path, body=body or None, headers=headers)
        reply = connection.getresponse()
        return reply.status, reply.read()
    finally:
        connection.close()


def test_plain_mitmdump_with_the_addon_script_records_the_same(
    lab: LabState, wiretap: Wiretap, tmp_path: Path
) -> None:
    """What mitmdump with addons/wiretap.py records is what the client sent and received,
    byte for byte, in the records `k8s-wiretap proxy` writes (the same fields)."""
    folder = Path(lab.kubeconfig).parent / "pki"
    (tmp_path / "client.pem").write_bytes(
        (folder / "admin.crt").read_bytes() + (folder / "admin.key").read_bytes()
    )
    server, port = lab.server.removeprefix("https://"), free_port()
    record = tmp_path / "mitmdump.jsonl"
    script = Path(__file__).parents[2] / "addons" / "wiretap.py"
    argv = [
        str(Path(sys.executable).parent / "mitmdump"),
        "-q",
        "-s",
        str(script),
        "--mode",
        f"reverse:https://{server}@127.0.0.1:{port}",
        "--set",
        f"confdir={tmp_path / 'ca'}",
        "--set",
        f"client_certs={tmp_path / 'client.pem'}",
        "--set",
        f"ssl_verify_upstream_trusted_ca={folder / 'ca.crt'}",
        "--set",
        f"wiretap_record={record}",
    ]
    name = f"mitmdump-{os.getpid()}"
    configmaps = "/api/v1/namespaces/default/configmaps"
    sent = json.dumps(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}}
    ).encode()
    protobuf = "application/vnd.kubernetes.protobuf"
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_until(lambda: record.exists(), 30, "mitmdump to listen (it then creates the file)")
        created = exchange_through(
            port, "POST", configmaps, sent, **{"Content-Type": "application/json"}
        )
        as_json = exchange_through(port, "GET", f"{configmaps}/{name}")
        as_proto = exchange_through(port, "GET", f"{configmaps}/{name}", Accept=protobuf)
        secret_value = exchange_through(
            port,
            "POST",
            "/api/v1/namespaces/default/secrets",
            json.dumps(
                {"kind": "Secret", "metadata": {"name": name}, "stringData": {"k": "hidden"}}
            ).encode(),
            **{"Content-Type": "application/json"},
        )
    finally:
        process.terminate()
        process.wait(30)
    assert [created[0], as_json[0], as_proto[0], secret_value[0]] == [201, 200, 200, 201]
    recording = load(record)
    assert not recording.warnings and recording.header["redacted"] is True
    exchanges = {(e.method, e.path, e.request_header("accept")): e for e in recording.exchanges}
    for (method, path, accept), (status, body), request_body in [
        (("POST", configmaps, ""), created, sent),
        (("GET", f"{configmaps}/{name}", ""), as_json, None),
        (("GET", f"{configmaps}/{name}", protobuf), as_proto, None),
    ]:
        exchange = exchanges[(method, path, accept)]
        assert exchange.status == status and exchange.end is not None
        assert exchange.response_body is not None and exchange.response_body.data == body
        assert exchange.response_body.size == len(body)
        recorded_request = exchange.request_body.data if exchange.request_body else None
        assert recorded_request == request_body
    assert as_proto[1].startswith(b"k8s\x00")  # the protobuf body, recorded as it came
    secret = next(e for e in recording.exchanges if e.path.endswith("/secrets"))
    assert secret.request_body is not None and secret.request_body.redacted
    assert b"hidden" not in secret.request_body.data + (secret.response_body or Body(b"", 0)).data

    # the same records, field for field, as k8s-wiretap proxy writes for the same request
    assert exchange_through(wiretap.port, "GET", f"{configmaps}/{name}")[0] == 200
    ours = wiretap.wait_for(
        "the GET through k8s-wiretap proxy",
        lambda r: any(e.path == f"{configmaps}/{name}" and e.end for e in r.exchanges),
    )
    proxied = next(e for e in ours.exchanges if e.path == f"{configmaps}/{name}")
    mitmdump = exchanges[("GET", f"{configmaps}/{name}", "")]

    def fields(path: Path, exchange_id: str) -> list[tuple[str, set[str]]]:
        records = iter_records(path, [])
        return [(r["record"], set(r) - {"id"}) for r in records if r.get("id") == exchange_id]

    assert fields(record, mitmdump.id) == fields(wiretap.record, proxied.id)
    assert [kind for kind, _ in fields(record, mitmdump.id)] == ["request", "response", "end"]
    assert mitmdump.response_body == proxied.response_body  # the same object, the same bytes


def test_sigterm_ends_every_open_exchange_in_the_recording(lab: LabState, tmp_path: Path) -> None:
    proxy = spawn_proxy(lab.kubeconfig, tmp_path)
    client = Kubectl(lab.kubeconfig, tmp_path / "cache", server=proxy.url)
    watcher = client.popen("get", "pods", "-A", "-w")
    try:
        wait_until(lambda: "watch=true" in proxy.record.read_text(), 20, "the watch recorded")
        proxy.process.terminate()  # what `lab down` does to the wiretap
        assert proxy.process.wait(30) == 0
    finally:
        watcher.kill()
        watcher.wait()
    recording = load(proxy.record)
    watch = next(e for e in recording.exchanges if e.info.verb == "watch")
    assert watch.end is not None and watch.end.error == "recording stopped"
    assert all(e.end is not None for e in recording.exchanges)
