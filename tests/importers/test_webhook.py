"""`audit-webhook`: a real receiver process, and a real lab started with `lab up
--audit-webhook` posting to it. The receiver records every component's traffic, attributed;
the TUI follows its recording as it grows; a client without the receiver's client
certificate is refused and recorded nowhere; a malformed POST gets 400 and a note, and the
receiver goes on; what the API server sent while the receiver was down comes in when it is
back (the API server retries); a receiver killed mid-stream leaves a readable recording; a
listen address other machines reach needs --allow-remote; a key folder that is not the
user's own and closed is refused; a bad Content-Length gets 400; a batch that fails on a
full disk is recorded whole when sent again; one above --max-batch is refused unread, noted,
in flat memory. (Connections that would hold the receiver: test_webhook_server.py.)"""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from textual.pilot import Pilot

from k8s_wiretap.capture.reader import iter_records
from k8s_wiretap.importers.webhook import LiveSink, WebhookImport
from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.tls import new_authority
from k8s_wiretap.views.tui import ReplayApp
from k8s_wiretap.workshop import manifest
from tests.capture.test_recorder_failures import free_space, small_filesystem
from tests.conftest import Kubectl, cli, wait_until
from tests.views.tui.pilot import until


@dataclass
class Receiver:
    """A running `k8s-wiretap audit-webhook --no-tui` and what it wrote."""

    process: subprocess.Popen[bytes]
    record: Path
    kubeconfig: Path
    stdout: Path
    stderr: Path
    folder: Path

    @property
    def port(self) -> int:
        config = yaml.safe_load(self.kubeconfig.read_text())
        return int(config["clusters"][0]["cluster"]["server"].rsplit(":", 1)[1])

    def said(self) -> str:
        return self.stderr.read_text()

    def records(self) -> list[dict[str, Any]]:
        """The recording's whole lines (the receiver may be writing the next batch)."""
        data = self.record.read_bytes()
        return [json.loads(line) for line in data[: data.rfind(b"\n") + 1].splitlines()]

    def requests(self) -> list[dict[str, Any]]:
        return [r for r in self.records() if r["record"] == "request"]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(30)


def as_from_a_terminal() -> None:
    """In the receiver's process before it starts: SIGINT as a terminal leaves it. A suite
    started in the background (`make test &`, a CI runner's shell) passes SIGINT on ignored,
    and Python keeps an inherited ignore, so Ctrl-C's signal would not reach the receiver."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_receiver(folder: Path, *extra: str) -> Receiver:
    """The receiver in a process of its own, its keys in `folder`/state, listening on a
    free port unless `extra` says another; returned once it listens."""
    folder.mkdir(parents=True, exist_ok=True)
    record, kubeconfig = folder / "webhook.jsonl", folder / "webhook.kubeconfig"
    stdout, stderr = folder / "stdout", folder / "stderr"
    env = {**os.environ, "XDG_STATE_HOME": str(folder / "state")}
    argv = [sys.executable, "-m", "k8s_wiretap", "audit-webhook", "--record", str(record)]
    argv += ["--webhook-kubeconfig", str(kubeconfig), "--no-tui"]
    argv += [] if "--listen" in extra else ["--listen", "127.0.0.1:0"]
    with stdout.open("wb") as out, stderr.open("wb") as err:
        process = subprocess.Popen(
            [*argv, *extra], stdout=out, stderr=err, env=env, preexec_fn=as_from_a_terminal
        )
    receiver = Receiver(process, record, kubeconfig, stdout, stderr, folder)
    wait_until(
        lambda: "listening on" in receiver.said() or process.poll() is not None, 60, "listening"
    )
    assert process.poll() is None, receiver.said()
    return receiver


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Receiver, LabState, Kubectl]]:
    """A receiver, and a lab of its own whose API server posts its audit events to it."""
    folder = tmp_path_factory.mktemp("webhook")
    receiver = start_receiver(folder / "receiver")
    lab = Lab(folder / "lab")
    try:
        state = lab.up(UpOptions(build=False, audit_webhook=receiver.kubeconfig))
        kubectl = Kubectl(state.kubeconfig, folder / "kubecache")
        yield receiver, state, kubectl
    finally:
        lab.down()
        receiver.stop()


# -- a client of the receiver ---------------------------------------------------------------
def context(receiver: Receiver, identity: tuple[bytes, bytes] | None) -> ssl.SSLContext:
    """A TLS client context trusting the receiver's CA, presenting `identity` (cert, key)."""
    config = yaml.safe_load(receiver.kubeconfig.read_text())
    ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"])
    tls = ssl.create_default_context(cadata=ca.decode())
    if identity is not None:
        cert, key = receiver.folder / "client.crt", receiver.folder / "client.key"
        cert.write_bytes(identity[0])
        key.write_bytes(identity[1])
        key.chmod(0o600)
        tls.load_cert_chain(cert, key)
    return tls


def kubeconfig_identity(receiver: Receiver) -> tuple[bytes, bytes]:
    """The client certificate and key the receiver issued to the API server."""
    user = yaml.safe_load(receiver.kubeconfig.read_text())["users"][0]["user"]
    return (
        base64.b64decode(user["client-certificate-data"]),
        base64.b64decode(user["client-key-data"]),
    )


def post(receiver: Receiver, body: bytes, tls: ssl.SSLContext) -> tuple[int, dict[str, Any]]:
    connection = http.client.HTTPSConnection("127.0.0.1", receiver.port, context=tls, timeout=30)
    try:
        connection.request("POST", "/", body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def lab_event(state: LabState, audit_id: str) -> dict[str, Any]:
    """An event of the lab's own audit log (a finished one), with another auditID."""
    log = Path(state.kubeconfig).parent / "logs" / "audit.log"
    lines = log.read_text().split("\n")
    event = json.loads(next(line for line in lines if '"ResponseComplete"' in line))
    return {**event, "auditID": audit_id}


def event_list(*events: Any) -> bytes:
    batch = {"kind": "EventList", "apiVersion": "audit.k8s.io/v1", "items": list(events)}
    return json.dumps(batch).encode()


# -- the tests ------------------------------------------------------------------------------
@pytest.mark.lab
def test_the_receiver_records_the_live_lab_every_component_attributed(
    live: tuple[Receiver, LabState, Kubectl], tmp_path: Path
) -> None:
    receiver, state, kubectl = live
    apiserver = next(p for p in state.processes if p.name == "apiserver")
    copy = Path(state.kubeconfig).parent / "audit-webhook.kubeconfig"
    assert f"--audit-webhook-config-file={copy}" in apiserver.argv
    assert "--audit-webhook-batch-max-wait=1s" in apiserver.argv
    assert any(a.startswith("--audit-log-path=") for a in apiserver.argv)  # the log stays
    assert copy.stat().st_mode & 0o777 == 0o600
    assert copy.read_bytes() == receiver.kubeconfig.read_bytes()

    kubectl("apply", "-f", "-", stdin=manifest("web"))

    def seen(user_agent: str, path: str, method: str = "") -> bool:
        return any(
            r["headers"] and r["headers"][0][1].startswith(user_agent) and path in r["path"]
            for r in receiver.requests()
            if not method or r["method"] == method
        )

    wait_until(lambda: seen("kubectl", "/deployments", "POST"), 60, "kubectl's create")
    wait_until(lambda: seen("kube-scheduler", "/binding", "POST"), 60, "the scheduler's bind")
    wait_until(lambda: seen("hollow-kubelet", "/status", "PATCH"), 60, "the kubelet's pod status")
    wait_until(lambda: seen("kube-controller-manager", "/replicasets"), 60, "the replica set")

    header = receiver.records()[0]
    assert header["imported"] == "audit webhook" and header["redacted"] is True
    requests = receiver.requests()
    assert all(r["identity"]["credential"] == "audit log" for r in requests)
    assert "batch 1 from kube-apiserver (127.0.0.1:" in receiver.stdout.read_text()

    snapshot = tmp_path / "snapshot.jsonl"  # the whole lines written so far
    data = receiver.record.read_bytes()
    snapshot.write_bytes(data[: data.rfind(b"\n") + 1])
    result = cli("explain", "--format", "json", str(snapshot))
    assert result.returncode == 0, result.stderr
    explained = [json.loads(line) for line in result.stdout.split("\n") if line]
    written = [json.loads(line) for line in snapshot.read_bytes().splitlines()]
    assert len(explained) == sum(r["record"] == "request" for r in written)
    assert [e for e in explained if e["component"] == "unknown"] == []
    components = {e["component"] for e in explained}
    assert {"kubectl", "scheduler", "kubelet", "apiserver"} <= components
    assert "controller-manager/deployment-controller" in components
    assert "controller-manager/replicaset-controller" in components


@pytest.mark.lab
def test_the_tui_follows_the_growing_recording(
    live: tuple[Receiver, LabState, Kubectl],
) -> None:
    receiver, _, kubectl = live
    name = f"followed-{uuid.uuid4().hex[:8]}"

    async def main() -> None:
        app = ReplayApp(receiver.record, follow=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.follow_mode.active and len(app.index) > 0, "rows")
            before = len(app.index)
            await asyncio.to_thread(kubectl, "create", "configmap", name)
            await asyncio.to_thread(kubectl, "get", "configmap", name)  # its name in the path
            await followed(app, pilot, name)
            assert len(app.index) > before

    async def followed(app: ReplayApp, pilot: Pilot[int], name: str) -> None:
        def row() -> bool:
            return any(
                r.name == name and r.resource == "configmaps" and r.component == "kubectl"
                for r in app.index.rows
            )

        await until(pilot, row, "kubectl's read of the configmap in the list", timeout=60)

    asyncio.run(main())


@pytest.mark.lab
def test_a_client_without_the_certificate_is_refused_and_recorded_nowhere(
    live: tuple[Receiver, LabState, Kubectl],
) -> None:
    receiver, state, _ = live
    audit_id = f"refused-{uuid.uuid4()}"
    body = event_list(lab_event(state, audit_id))
    status, answer = post(receiver, body, context(receiver, None))
    assert status == 401 and answer["reason"] == "Unauthorized"
    assert "no client certificate" in answer["message"]
    wait_until(lambda: "nothing recorded from it" in receiver.said(), 30, "the refusal said")
    stranger = new_authority("another CA").issue("kube-apiserver")
    with pytest.raises((ssl.SSLError, ConnectionError)):
        post(receiver, body, context(receiver, (stranger.cert_pem, stranger.key_pem)))
    wait_until(lambda: "TLS handshake with" in receiver.said(), 30, "the failed handshake said")
    # what a trusted client sends next is recorded: the refused one's would be there by now
    trusted = f"trusted-{uuid.uuid4()}"
    tls = context(receiver, kubeconfig_identity(receiver))
    assert post(receiver, event_list(lab_event(state, trusted)), tls)[0] == 200
    text = receiver.record.read_text()
    assert trusted in text and audit_id not in text


@pytest.mark.lab
def test_a_malformed_post_gets_400_and_a_note_and_the_receiver_goes_on(
    live: tuple[Receiver, LabState, Kubectl],
) -> None:
    receiver, state, _ = live
    tls = context(receiver, kubeconfig_identity(receiver))
    status, answer = post(receiver, b'{"kind": "EventList", "items": [', tls)
    assert status == 400 and answer["reason"] == "BadRequest"
    assert "not JSON" in answer["message"]
    good = f"after-{uuid.uuid4()}"
    mixed = event_list({"auditID": "no-request"}, lab_event(state, good))  # no verb, no URI
    assert post(receiver, mixed, tls)[0] == 200  # a bad item is skipped, the rest kept
    notes = [r["message"] for r in receiver.records() if r["record"] == "note"]
    assert any(
        "from kube-apiserver (127.0.0.1:" in n and "skipped: the body is not JSON" in n
        for n in notes
    ), notes
    unusable = "item 0: skipped: an Event without a verb and a requestURI"
    assert any(unusable in n for n in notes), notes
    assert any(r.get("id") == good for r in receiver.requests())
    assert "skipped: the body is not JSON" in receiver.said()
    assert receiver.process.poll() is None


@pytest.mark.lab
def test_batches_sent_while_the_receiver_is_down_come_in_when_it_is_back(
    live: tuple[Receiver, LabState, Kubectl],
) -> None:
    """The API server tries a failed batch again, for about 80 s (webhook.py): a receiver
    restarted on its port, with the same keys, gets what was sent meanwhile. The restarted
    one takes the stopped one's place in the fixture, with a recording of its own."""
    receiver, _, kubectl = live
    port = receiver.port
    receiver.stop()
    name = f"while-down-{uuid.uuid4().hex[:8]}"
    kubectl("create", "configmap", name)
    folder = receiver.folder.parent / "restarted"
    folder.mkdir()
    (folder / "state").symlink_to(receiver.folder / "state")  # the same keys
    back = start_receiver(folder, "--listen", f"127.0.0.1:{port}")
    vars(receiver).update(vars(back))
    assert receiver.port == port
    wait_until(lambda: name in receiver.record.read_text(), 90, "the retried batch")
    creates = [r for r in receiver.requests() if r["method"] == "POST"]
    assert any(r["audit"]["objectRef"].get("name") == name for r in creates)


@pytest.mark.lab
def test_a_killed_receiver_leaves_a_readable_recording(
    live: tuple[Receiver, LabState, Kubectl], tmp_path: Path
) -> None:
    """A receiver of its own, posted to by the test, killed (SIGKILL) after its answers:
    every batch it answered is in the file, whole, and the file reads."""
    _, state, _ = live
    receiver = start_receiver(tmp_path / "killed")
    tls = context(receiver, kubeconfig_identity(receiver))
    ids = [f"killed-{n}-{uuid.uuid4()}" for n in range(5)]
    for audit_id in ids:
        assert post(receiver, event_list(lab_event(state, audit_id)), tls)[0] == 200
    receiver.process.send_signal(signal.SIGKILL)
    receiver.process.wait(30)
    warnings: list[str] = []
    records = list(iter_records(receiver.record, warnings))
    assert warnings == []
    assert {r["id"] for r in records if r["record"] == "request"} == set(ids)
    assert {r["id"] for r in records if r["record"] == "end"} == set(ids)


def test_a_remote_listen_without_allow_remote_exits_2_in_one_line(tmp_path: Path) -> None:
    record = tmp_path / "rec.jsonl"
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    result = cli("audit-webhook", "--record", str(record), "--listen", "0.0.0.0:0", env=env)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("k8s-wiretap: --listen 0.0.0.0:0, which other machines ")
    assert "--allow-remote" in result.stderr
    assert not record.exists() and not (tmp_path / "state").exists()


def test_an_existing_kubeconfig_or_recording_is_kept_without_overwrite(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    mine = tmp_path / "mine.kubeconfig"
    mine.write_text("the user's own\n")
    record = tmp_path / "rec.jsonl"
    args = ["audit-webhook", "--record", str(record), "--listen", "127.0.0.1:0"]
    result = cli(*args, "--webhook-kubeconfig", str(mine), env=env)
    assert result.returncode == 2
    said = f"k8s-wiretap: audit-webhook: --webhook-kubeconfig {mine} exists (--overwrite)\n"
    assert result.stderr == said
    assert mine.read_text() == "the user's own\n" and not record.exists()
    record.write_text("kept\n")
    result = cli(*args, env=env)
    assert result.returncode == 2 and "--record" in result.stderr
    assert record.read_text() == "kept\n"


def test_the_keys_are_private_made_once_and_reused(tmp_path: Path) -> None:
    first = start_receiver(tmp_path / "one")
    first.stop()  # SIGTERM: a clean stop, and its count
    assert first.process.returncode == 0
    assert f"0 exchanges from 0 batches recorded to {first.record}" in first.said()
    keys = tmp_path / "one" / "state" / "k8s-wiretap" / "audit-webhook"
    files = {p.name: p.read_bytes() for p in keys.iterdir()}
    assert {"ca.key", "server.key", "client-ca.key"} <= set(files)
    for name in ("ca.key", "server.key", "client-ca.key", "webhook.kubeconfig"):
        if (keys / name).exists():
            assert (keys / name).stat().st_mode & 0o777 == 0o600, name
    assert keys.stat().st_mode & 0o777 == 0o700
    assert first.kubeconfig.stat().st_mode & 0o777 == 0o600
    second = start_receiver(tmp_path / "one", "--overwrite")
    second.stop()
    for name in ("ca.crt", "ca.key", "server.crt", "server.key", "client-ca.crt"):
        assert (keys / name).read_bytes() == files[name], name


# -- the key folder is the user's own ---------------------------------------------------------
def run_receiver(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """The receiver with its keys under `tmp_path`/state, expected to exit at once (a
    receiver that starts runs until the timeout, which fails the test)."""
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    argv = ["audit-webhook", "--record", str(tmp_path / "rec.jsonl"), "--no-tui"]
    return cli(*argv, "--listen", "127.0.0.1:0", env=env, timeout=30)


def key_folder(tmp_path: Path) -> Path:
    return tmp_path / "state" / "k8s-wiretap" / "audit-webhook"


def test_a_key_folder_others_can_write_is_refused_and_its_ca_never_trusted(
    tmp_path: Path,
) -> None:
    """Someone made the folder before the user (0777) and put their own client CA in it:
    the receiver would accept their client certificates. It refuses the folder instead."""
    folder = key_folder(tmp_path)
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    theirs = new_authority("someone else's CA").identity
    theirs.write(folder / "client-ca.crt", folder / "client-ca.key")
    result = run_receiver(tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        f"k8s-wiretap: {folder}: mode 0777 lets others in: refused for keys (chmod 700 it, "
        "or delete it to have it made again)\n"
    )
    assert sorted(p.name for p in folder.iterdir()) == ["client-ca.crt", "client-ca.key"]
    assert (folder / "client-ca.key").read_bytes() == theirs.key_pem
    assert not (tmp_path / "rec.jsonl").exists()


def test_a_symlinked_key_folder_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    key_folder(tmp_path).parent.mkdir(parents=True)
    key_folder(tmp_path).symlink_to(elsewhere)
    result = run_receiver(tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "not a folder (a symlink" in result.stderr
    assert list(elsewhere.iterdir()) == []


def test_a_planted_key_symlink_is_refused_and_the_users_file_kept(tmp_path: Path) -> None:
    """A link where the client CA's key goes, to a file of the user's: writing the key would
    have replaced that file's contents."""
    folder = key_folder(tmp_path)
    folder.mkdir(parents=True, mode=0o700)
    victim = tmp_path / "the-users-file"
    victim.write_text("the user's own\n")
    (folder / "client-ca.key").symlink_to(victim)
    result = run_receiver(tmp_path)
    assert result.returncode == 2, result.stderr
    said = f"k8s-wiretap: {folder / 'client-ca.key'}: not a regular file (a symlink?): refused\n"
    assert result.stderr == said
    assert victim.read_text() == "the user's own\n"


# -- requests ---------------------------------------------------------------------------------
def raw_post(receiver: Receiver, head: bytes, tls: ssl.SSLContext) -> bytes:
    """Send a request head over TLS; what the receiver answered before it closed."""
    with (
        socket.create_connection(("127.0.0.1", receiver.port), timeout=30) as plain,
        tls.wrap_socket(plain, server_hostname="127.0.0.1") as connection,
    ):
        connection.sendall(head)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
        return answer


@pytest.mark.parametrize(
    ("length", "status"),
    [
        ("\u00b2", b"400 Bad Request"),  # a digit to str.isdigit, none to int()
        ("9" * 5000, b"400 Bad Request"),  # above int()'s 4,300 digits
        ("1" * 13, b"400 Bad Request"),
        ("-1", b"400 Bad Request"),
        ("12 bytes", b"400 Bad Request"),
        (None, b"411 Length Required"),
    ],
)
def test_a_bad_content_length_is_answered_and_the_receiver_goes_on(
    tmp_path: Path, length: str | None, status: bytes
) -> None:
    receiver = start_receiver(tmp_path / "lengths")
    try:
        tls = context(receiver, kubeconfig_identity(receiver))
        head = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        if length is not None:
            head += b"Content-Length: " + length.encode("latin-1") + b"\r\n"
        answer = raw_post(receiver, head + b"\r\n", tls)
        assert answer.startswith(b"HTTP/1.1 " + status + b"\r\n"), answer[:200]
        document = json.loads(answer.split(b"\r\n\r\n", 1)[1])
        assert document["kind"] == "Status" and document["status"] == "Failure"
        assert b"Connection: close" in answer
        assert post(receiver, event_list(), tls)[0] == 200
        assert receiver.process.poll() is None
    finally:
        receiver.stop()


# -- a full disk ------------------------------------------------------------------------------
def audit_event(audit_id: str, stage: str, size: int = 2048) -> dict[str, Any]:
    """A ConfigMap create's audit event at level RequestResponse, its data `size` bytes."""
    configmap = {"kind": "ConfigMap", "metadata": {"name": audit_id}, "data": {"x": "y" * size}}
    event: dict[str, Any] = {
        "kind": "Event",
        "level": "RequestResponse",
        "auditID": audit_id,
        "stage": stage,
        "requestURI": "/api/v1/namespaces/default/configmaps",
        "verb": "create",
        "user": {"username": "kubernetes-admin"},
        "sourceIPs": ["127.0.0.1"],
        "requestReceivedTimestamp": "2026-12-07T05:00:00.000000Z",
        "stageTimestamp": "2026-12-07T05:00:00.100000Z",
        "requestObject": configmap,
    }
    if stage == "ResponseComplete":
        event.update(responseStatus={"code": 201}, responseObject=configmap)
    return event


def test_a_batch_that_fails_on_a_full_disk_is_recorded_whole_when_sent_again(
    tmp_path: Path,
) -> None:
    """A real 1 MiB filesystem fills up under the recording: each batch that cannot be
    written raises (the server answers 500) and leaves the file as it was, ending in a whole
    line, and untouched (nothing written, then taken back, that a reader following it would
    have seen); once the disk has room, the same batches sent again (as the API server does, some
    of their ends overtaken by a later batch) are recorded whole: every exchange once, with
    its request and its end, no event "ignored", a note of the failures, and the counts are
    the file's."""
    with small_filesystem(tmp_path / "disk") as full:
        filler, path = tmp_path / "disk" / "filler", tmp_path / "disk" / "webhook.jsonl"
        filler.write_bytes(os.urandom(600 * 1024))
        receiver = WebhookImport(LiveSink(path, source="audit webhook"))
        failed: list[bytes] = []
        everyone: set[str] = set()
        for n in range(60):
            if len(failed) >= 6:
                break
            ids = [f"cm-{n}-{i}" for i in range(4)]
            everyone.update(ids)
            body = event_list(
                *(audit_event(i, "RequestReceived") for i in ids),
                *(audit_event(i, "ResponseComplete") for i in ids[:3]),
            )
            ends = event_list(audit_event(ids[3], "ResponseComplete"))
            for batch in (body, ends):
                before = os.stat(path)
                try:
                    receiver.post(batch, "kube-apiserver (127.0.0.1:1)")
                except OSError as error:
                    assert full in str(error)
                    failed.append(batch)
                    # nothing of it was written, then taken back: a reader following the
                    # file (the TUI) never saw a line of it
                    after = os.stat(path)
                    assert (after.st_size, after.st_mtime_ns) == (
                        before.st_size,
                        before.st_mtime_ns,
                    )
                data = path.read_bytes()
                assert data.endswith(b"\n")
                assert all(json.loads(line) for line in data.splitlines())
        assert len(failed) >= 6
        filler.unlink()
        free_space(full)
        for batch in reversed(failed):  # late, and out of order
            receiver.post(batch, "kube-apiserver (127.0.0.1:1)")
        receiver.close()
        warnings: list[str] = []
        records = list(iter_records(path, warnings))
    assert warnings == []  # every line whole: a glued one is said
    requests = [r["id"] for r in records if r["record"] == "request"]
    ended = [r["id"] for r in records if r["record"] == "end"]
    assert sorted(requests) == sorted(everyone) == sorted(ended)
    assert receiver.sink.exchanges == len(requests)
    notes = [r["message"] for r in records if r["record"] == "note"]
    assert not [n for n in notes if "ResponseComplete" in n], notes
    late = "after its end: ignored (the exchange is recorded from its later events)"
    assert any(n.startswith("a RequestReceived event of cm-") and late in n for n in notes)
    assert any("could not be written" in n and full in n for n in notes), notes


# -- a batch's size ---------------------------------------------------------------------------
def peak_memory(process: subprocess.Popen[bytes]) -> int:
    """The peak resident memory of `process` so far, in bytes (VmHWM)."""
    status = Path(f"/proc/{process.pid}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


def test_a_batch_above_max_batch_is_refused_unread_and_noted_in_flat_memory(
    tmp_path: Path,
) -> None:
    """`--max-batch 4m`: a batch of 4 MiB of small events is recorded item by item, the
    receiver's peak memory growing by less than three times its size (its bytes and its
    text, not a parsed whole); one of 40 MiB (10x) is answered 413 unread, the recording
    notes its size and who sent it, and the peak does not move."""
    limit = 4 * 1024 * 1024
    receiver = start_receiver(tmp_path / "big", "--max-batch", "4m")
    try:
        tls = context(receiver, kubeconfig_identity(receiver))
        assert post(receiver, event_list(), tls)[0] == 200
        before = peak_memory(receiver.process)
        one = len(json.dumps(audit_event("cm-000000", "ResponseComplete", size=100))) + 2
        count = (limit - 100) // one
        events = [audit_event(f"cm-{n:06d}", "ResponseComplete", size=100) for n in range(count)]
        body = event_list(*events)
        assert len(body) <= limit
        assert post(receiver, body, tls)[0] == 200
        recorded = peak_memory(receiver.process)
        assert recorded - before < 3 * limit, (before, recorded)
        assert len(receiver.requests()) == len(events)
        head = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        answer = raw_post(receiver, head + b"Content-Length: %d\r\n\r\n" % (10 * limit), tls)
        assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
        assert peak_memory(receiver.process) == recorded
        notes = [r["message"] for r in receiver.records() if r["record"] == "note"]
        assert notes == [
            f"a batch of {10 * limit:,} bytes from kube-apiserver (127.0.0.1:"
            f"{notes[0].split('127.0.0.1:')[1].split(')')[0]}) refused unread: above the limit "
            f"of {limit:,} (--max-batch); its events are not recorded"
        ], notes
    finally:
        receiver.stop()
