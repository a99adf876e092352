"""`import audit LOG --join RECORDING` on a real session: a lab whose components talk to the
API server directly, kubectl (and a raw client) through a real proxy, the API server's own
audit log at RequestResponse (a lab of its own) and at Metadata (the session's lab).

Every proxied exchange the API server answered gets its audit Event's user and groups,
impersonation, decision and reason, and annotations, its records otherwise unchanged; the
controller manager's, scheduler's and kubelet's exchanges come in from the log, marked as
seen only there; `explain` attributes every exchange and says the joined ones' audit facts.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from k8s_wiretap.capture.reader import load
from k8s_wiretap.lab import Lab, UpOptions
from k8s_wiretap.lab.state import LabState
from k8s_wiretap.views.tui import ReplayApp
from tests.conftest import Kubectl, cli, wait_until
from tests.importers.test_audit import audit_log, records, whole_lines
from tests.proxy.conftest import ProxyProcess, spawn_proxy
from tests.views.tui.pilot import drive, settle, tab_text
from tests.views.tui.test_app import type_filter

REFUSED = "/version?refused-by-the-proxy=1"


@dataclass
class Session:
    """A proxy's recording of a session and the API server's audit log of the same time."""

    recording: Path
    log: Path
    level: str


def _audit_ids(recording: Path) -> dict[str, str]:
    """Audit-ID → exchange id, of the recording's responses that carry one."""
    found = {}
    for record in records(recording):
        if record["record"] == "response":
            headers = {k.lower(): v for k, v in record["headers"]}
            if "audit-id" in headers:
                found[headers["audit-id"]] = record["id"]
    return found


def _completed(log: Path, offset: int) -> set[str]:
    text = whole_lines(log, offset).decode()
    return {
        json.loads(line)["auditID"]
        for line in text.split("\n")
        if '"stage":"ResponseComplete"' in line
    }


def _refused_by_the_proxy(port: int) -> None:
    """A request the proxy answers itself (400: a header name with a space)."""
    head = (
        f"GET {REFUSED} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: raw-client/1.0\r\n"
        "Bad Name: x\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=15) as conn:
        conn.sendall(head)
        while conn.recv(65536):
            pass


def _session(kubeconfig: str, log: Path, folder: Path, level: str) -> Session:
    """kubectl's session through a proxy of its own, the log from the proxy's start."""
    offset = log.stat().st_size
    proxy = spawn_proxy(kubeconfig, folder)
    try:
        _run(Kubectl(kubeconfig, folder / "cache", server=proxy.url), proxy)
        ids = _wait_for_the_log(proxy, log, offset)
    finally:
        proxy.stop()
    assert set(_audit_ids(proxy.record)) == ids  # nothing came after the wait
    cut = folder / "audit.log"
    cut.write_bytes(whole_lines(log, offset))
    return Session(proxy.record, cut, level)


def _run(kubectl: Kubectl, proxy: ProxyProcess) -> None:
    kubectl("create", "configmap", "joined", "--from-literal=colour=blue")
    kubectl("get", "configmap", "joined", "-o", "json")
    kubectl("create", "rolebinding", "jane-views", "--clusterrole=view", "--user=jane")
    kubectl("get", "configmaps", "--as=jane", "--as-group=team")
    denied = kubectl.run("get", "secrets", "--as=jane", check=False)
    assert "forbidden" in denied.stderr
    kubectl("run", "joined", "--image=registry.k8s.io/pause:3.10", "--restart=Never")
    kubectl("get", "--raw", "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1")
    _refused_by_the_proxy(proxy.port)


def _wait_for_the_log(proxy: ProxyProcess, log: Path, offset: int) -> set[str]:
    """The recording's Audit-IDs, once each has its ResponseComplete in the log and the
    scheduler and kubelet have handled the pod (their exchanges bypass the proxy)."""
    found: list[set[str]] = []

    def complete() -> bool:
        ids = set(_audit_ids(proxy.record))
        done = _completed(log, offset)
        bound = b'"subresource":"status"' in whole_lines(log, offset)
        if ids and ids <= done and bound and _refused_in(proxy.record):
            found.append(ids)
            return True
        return False

    wait_until(complete, 60, "the proxied exchanges' events and the pod's status in the log")
    return found[-1]


def _refused_in(recording: Path) -> bool:
    refused = _ids_of(recording, REFUSED)
    return any(r["record"] == "end" and r["id"] in refused for r in records(recording))


def _ids_of(recording: Path, path: str) -> set[str]:
    return {r["id"] for r in records(recording) if r.get("path") == path}


@pytest.fixture(scope="module")
def request_response(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    lab = Lab(tmp_path_factory.mktemp("join") / "lab")
    state = lab.up(UpOptions(build=False, audit_level="RequestResponse"))
    try:
        folder = tmp_path_factory.mktemp("join-rr")
        yield _session(state.kubeconfig, audit_log(state), folder, "RequestResponse")
    finally:
        lab.down()


@pytest.fixture(scope="module")
def metadata(lab: LabState, tmp_path_factory: pytest.TempPathFactory) -> Session:
    folder = tmp_path_factory.mktemp("join-metadata")
    return _session(lab.kubeconfig, audit_log(lab), folder, "Metadata")


# "Metadata" takes the session `lab` by name: its group in a parallel run (tests/conftest.py)
@pytest.fixture(
    params=["RequestResponse", pytest.param("Metadata", marks=pytest.mark.xdist_group("lab"))]
)
def session(request: pytest.FixtureRequest) -> Session:
    name = "request_response" if request.param == "RequestResponse" else "metadata"
    found: Session = request.getfixturevalue(name)
    return found


def joined(session: Session, tmp_path: Path) -> tuple[Path, str]:
    out = tmp_path / "joined.jsonl"
    result = cli(
        "import", "audit", str(session.log), "--join", str(session.recording), "-o", str(out)
    )
    assert result.returncode == 0, result.stderr
    return out, result.stderr


def _requests(path: Path) -> list[dict[str, Any]]:
    return [r for r in records(path) if r["record"] == "request"]


@pytest.mark.lab
def test_every_proxied_exchange_carries_its_audit_event(session: Session, tmp_path: Path) -> None:
    out, said = joined(session, tmp_path)
    ids = _audit_ids(session.recording)
    assert "0 unreadable lines skipped" in said
    assert f"{len(ids)} proxied exchanges of {session.recording} joined" in said
    assert "0 not in the log, 1 without an Audit-ID" in said
    by_id = {r["id"]: r for r in _requests(out)}
    for audit_id, id in ids.items():
        audit = by_id[id]["audit"]
        assert audit["joined"] is True and "only" not in audit and "absent" not in audit
        assert (audit["auditID"], audit["level"]) == (audit_id, session.level)
        assert audit["user"]["username"] == "kubernetes-admin"
        assert "system:masters" in audit["user"]["groups"]
        assert audit["decision"] in ("allow", "forbid")
        assert audit["annotations"]["authorization.k8s.io/decision"] == audit["decision"]
        if "impersonatedUser" in audit and audit["decision"] == "allow":  # RBAC decided
            assert audit["reason"].startswith("RBAC: allowed by "), audit
        elif "impersonatedUser" not in audit:  # system:masters, allowed before RBAC
            assert (audit["decision"], audit["reason"]) == ("allow", ""), audit


def _one(out: Path, method: str, path: str, **audit: Any) -> dict[str, Any]:
    found = [
        r
        for r in _requests(out)
        if r["method"] == method
        and r["path"].split("?")[0] == path
        and all(r["audit"].get(k) == v for k, v in audit.items())
    ]
    assert len(found) == 1, [(r["method"], r["path"]) for r in _requests(out)]
    return found[0]


def _end(out: Path, id: str) -> dict[str, Any]:
    return next(r for r in records(out) if r["record"] == "end" and r["id"] == id)


@pytest.mark.lab
def test_impersonation_a_403_and_admission_annotations(session: Session, tmp_path: Path) -> None:
    out, _ = joined(session, tmp_path)
    configmaps = "/api/v1/namespaces/default/configmaps"
    allowed = _one(out, "GET", configmaps, joined=True, verb="list", decision="allow")
    assert allowed["audit"]["impersonatedUser"]["username"] == "jane"
    assert "team" in allowed["audit"]["impersonatedUser"]["groups"]
    assert 'RoleBinding "jane-views/default"' in allowed["audit"]["reason"]
    denied = _one(out, "GET", "/api/v1/namespaces/default/secrets", joined=True)
    assert denied["audit"]["impersonatedUser"]["username"] == "jane"
    assert denied["audit"]["decision"] == "forbid"
    end = _end(out, denied["id"])
    assert end["audit"]["responseStatus"]["code"] == 403
    assert 'User "jane" cannot list resource "secrets"' in end["audit"]["responseStatus"]["message"]
    assert end["audit"]["stages"] == ["ResponseStarted", "ResponseComplete"] or end["audit"][
        "stages"
    ] == ["ResponseComplete"]
    pod = _one(out, "POST", "/api/v1/namespaces/default/pods", joined=True)
    assert pod["audit"]["annotations"]["pod-security.kubernetes.io/enforce-policy"]
    watch = _one(out, "GET", configmaps, joined=True, verb="watch")
    assert _end(out, watch["id"])["audit"]["stages"] == ["ResponseStarted", "ResponseComplete"]


@pytest.mark.lab
def test_the_recording_is_kept_as_it_was_but_for_audit(session: Session, tmp_path: Path) -> None:
    """Each record of the recording is in the output as it was, with the joined `audit`
    fields only: the bodies the proxy recorded (protobuf too) are its own, not the log's."""
    out, _ = joined(session, tmp_path)
    original = [r for r in records(session.recording) if r["record"] != "header"]
    ids = {r["id"] for r in original if "id" in r}
    mine = [r for r in records(out) if r.get("id") in ids and r["record"] != "note"]
    kept = [r for r in original if r["record"] != "note"]
    assert [{k: v for k, v in r.items() if k != "audit"} for r in mine] == kept
    refused = _ids_of(session.recording, REFUSED)
    assert len(refused) == 1 and not [r for r in mine if r["id"] in refused and "audit" in r]
    protobuf = [r for r in kept if r["record"] == "end" and "base64" in r.get("body", {})]
    assert protobuf  # kubectl's discovery and the proxy's reads: protobuf, as sent
    header = records(out)[0]
    assert header["joined"] == "audit log" and header["format"] == "k8s-wiretap-recording"
    assert (out.stat().st_mode & 0o777) == 0o600


@pytest.mark.lab
def test_the_components_that_bypassed_the_proxy_come_from_the_log(
    session: Session, tmp_path: Path
) -> None:
    out, _ = joined(session, tmp_path)
    recording_ids = {r["id"] for r in records(session.recording) if "id" in r}
    only = [r for r in _requests(out) if r.get("audit", {}).get("only")]
    assert only and all(r["identity"]["credential"] == "audit log" for r in only)
    assert not {r["id"] for r in only} & recording_ids
    binding = _one(out, "POST", "/api/v1/namespaces/default/pods/joined/binding", only=True)
    assert binding["audit"]["user"]["username"] == "system:kube-scheduler"
    status = [
        r for r in only if r["path"].startswith("/api/v1/namespaces/default/pods/joined/status")
    ]
    assert status and all(r["audit"]["user"]["username"].startswith("system:node:") for r in status)
    times = [r["time"] for r in records(out) if r["record"] == "request"]
    first_only = next(i for i, r in enumerate(_requests(out)) if "only" in r.get("audit", {}))
    assert first_only < len(times) - 1  # merged in, not appended
    result = cli("explain", "--format", "json", str(out))
    assert result.returncode == 0, result.stderr
    explained = [json.loads(line) for line in result.stdout.split("\n") if line]
    assert len(explained) == len(_requests(out))
    assert [e for e in explained if e["component"] == "unknown"] == []
    by_id = {e["id"]: e for e in explained}
    assert by_id[binding["id"]]["component"] == "scheduler"
    assert {by_id[r["id"]]["component"] for r in status} == {"kubelet"}
    assert any(by_id[r["id"]]["component"].startswith("controller-manager/") for r in only)


@pytest.mark.lab
def test_explain_says_the_audit_user_and_decision(session: Session, tmp_path: Path) -> None:
    out, _ = joined(session, tmp_path)
    denied = _one(out, "GET", "/api/v1/namespaces/default/secrets", joined=True)
    result = cli("explain", "--format", "json", str(out))
    assert result.returncode == 0, result.stderr
    explained = {e["id"]: e for e in map(json.loads, result.stdout.split("\n")[:-1])}
    said = explained[denied["id"]]["audit"]
    assert said["user"] == "kubernetes-admin" and said["impersonated"] == "jane"
    assert said["decision"] == "forbid" and said["seen"] == "proxy and audit log"
    assert said["said"].startswith("kubernetes-admin (system:masters, system:authenticated)")
    assert "as jane (system:authenticated)" in said["said"] and "forbidden" in said["said"]
    kubectl = [e for e in explained.values() if e["component"] == "kubectl"]
    assert kubectl and all(e["audit"]["seen"] == "proxy and audit log" for e in kubectl)
    masters = [e for e in kubectl if not e["audit"]["impersonated"]]
    allowed = [e for e in masters if e["audit"]["decision"] == "allow"]
    assert allowed and all(e["audit"]["said"].endswith(": allowed") for e in allowed)
    jane = next(e for e in explained.values() if e["path"].endswith("configmaps?limit=500"))
    assert jane["audit"]["said"] == (
        "kubernetes-admin (system:masters, system:authenticated) as jane (team, "
        'system:authenticated): allowed: RBAC: allowed by RoleBinding "jane-views/default" of '
        'ClusterRole "view" to User "jane"'
    )
    only = [e for e in explained.values() if e.get("audit", {}).get("seen") == "audit log only"]
    assert only and not [e for e in only if e["component"] == "kubectl"]


@pytest.mark.lab
def test_the_explain_tab_says_the_audit_facts(request_response: Session, tmp_path: Path) -> None:
    out, _ = joined(request_response, tmp_path)

    async def script(app: ReplayApp, pilot: Pilot[int]) -> None:
        await type_filter(pilot, "~s 403")
        await settle(app, pilot)
        detail = app.detail_pane.detail
        assert detail is not None and detail.exchange.path.startswith(
            "/api/v1/namespaces/default/secrets"
        )
        explain = " ".join(tab_text(app, "explain").split())
        assert (
            "audit kubernetes-admin (system:masters, system:authenticated) as jane "
            "(system:authenticated): forbidden [proxy and audit log]"
        ) in explain

    drive(script, out)


@pytest.mark.lab
def test_a_proxied_write_sets_off_the_components_the_log_alone_shows(
    request_response: Session, tmp_path: Path
) -> None:
    """kubectl's pod create went through the proxy; the scheduler's binding of that pod is
    only in the log. Its cause is kubectl's create, inferred from the write's answer (the
    scheduler's watch is nowhere in either)."""
    out, _ = joined(request_response, tmp_path)
    binding = _one(out, "POST", "/api/v1/namespaces/default/pods/joined/binding", only=True)
    created = _one(out, "POST", "/api/v1/namespaces/default/pods", joined=True)
    result = cli("explain", "--format", "json", str(out))
    assert result.returncode == 0, result.stderr
    explained = {e["id"]: e for e in map(json.loads, result.stdout.split("\n")[:-1])}
    cause = explained[binding["id"]]["caused_by"]
    assert cause is not None and cause["exchange"] == created["id"]
    assert cause["event"]["inferred_from"] == "resourceVersion"
    assert explained[binding["id"]]["chain"] == [created["id"], binding["id"]]


# -- bad input: no lab --------------------------------------------------------------------------
RECORDING = Path(__file__).resolve().parents[2] / "recordings" / "apply-story.jsonl.gz"


def test_a_missing_recording_is_one_line(tmp_path: Path) -> None:
    log = tmp_path / "audit.log"
    log.write_text("")
    out = tmp_path / "out.jsonl"
    missing = tmp_path / "nope.jsonl"
    result = cli("import", "audit", str(log), "--join", str(missing), "-o", str(out))
    assert result.returncode == 2
    assert result.stderr == f"k8s-wiretap: import audit: {missing} does not exist\n"
    assert not out.exists()


def test_a_file_that_is_no_recording_is_one_line(tmp_path: Path) -> None:
    log = tmp_path / "audit.log"
    log.write_text('{"kind":"Event","auditID":"a"}\n')
    out = tmp_path / "out.jsonl"
    result = cli("import", "audit", str(log), "--join", str(log), "-o", str(out))
    assert result.returncode == 2
    said = f"k8s-wiretap: import audit: --join {log}: not a k8s-wiretap recording (no header line)"
    assert result.stderr == said + "\n"
    assert not out.exists() and not list(tmp_path.glob(".out.jsonl.*"))


def test_an_audit_logs_import_is_no_recording_to_join(tmp_path: Path) -> None:
    log = tmp_path / "audit.log"
    log.write_text("")
    imported = tmp_path / "imported.jsonl"
    empty = cli("import", "audit", str(log), "-o", str(imported))
    assert empty.returncode == 1 and "nothing importable" in empty.stderr  # written, said
    assert imported.exists()
    out = tmp_path / "out.jsonl"
    result = cli("import", "audit", str(log), "--join", str(imported), "-o", str(out))
    assert result.returncode == 2
    assert result.stderr.strip().endswith("a recording imported from an audit log, not a proxy's")
    assert not out.exists()


def test_an_existing_output_is_kept(tmp_path: Path) -> None:
    log = tmp_path / "audit.log"
    log.write_text("")
    out = tmp_path / "out.jsonl"
    out.write_text("mine\n")
    result = cli("import", "audit", str(log), "--join", str(RECORDING), "-o", str(out))
    assert result.returncode == 2 and "exists (--overwrite)" in result.stderr
    assert out.read_text() == "mine\n"
    again = cli(
        "import", "audit", str(log), "--join", str(RECORDING), "-o", str(out), "--overwrite"
    )
    assert again.returncode == 1, again.stderr  # the log held nothing: said, OUT written
    assert f"{log}: nothing importable: the file holds no JSON value" in again.stderr
    assert len(load(out).exchanges) == len(load(RECORDING).exchanges)


@pytest.mark.lab
def test_an_audit_id_the_recording_has_as_an_id_is_renamed(
    request_response: Session, tmp_path: Path
) -> None:
    """The scheduler's binding (seen only in the log) keeps its auditID as its id unless an
    exchange of the recording has it: here the refused request is given it."""
    session = request_response
    binding = next(
        e["auditID"]
        for e in map(json.loads, session.log.read_text().split("\n")[:-1])
        if e["requestURI"] == "/api/v1/namespaces/default/pods/joined/binding"
    )
    (refused,) = _ids_of(session.recording, REFUSED)
    text = session.recording.read_text().replace(refused, binding)
    recording = tmp_path / "recording.jsonl"
    recording.write_text(text)
    out = tmp_path / "joined.jsonl"
    result = cli("import", "audit", str(session.log), "--join", str(recording), "-o", str(out))
    assert result.returncode == 0, result.stderr
    renamed = _one(out, "POST", "/api/v1/namespaces/default/pods/joined/binding", only=True)
    assert renamed["id"] == f"{binding}~j1"
    assert [r for r in records(out) if r.get("id") == binding] == [
        r for r in records(recording) if r.get("id") == binding
    ]
    notes = [r["message"] for r in records(out) if r["record"] == "note"]
    assert (
        f"auditID {binding} is an exchange id of the recording: imported as {binding}~j1" in notes
    )
