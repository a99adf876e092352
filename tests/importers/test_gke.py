"""`import audit` on GKE's Kubernetes audit entries from Cloud Logging (importers/gke.py), run
as a user runs it: real entries (tests/importers/data/README.md) in both export shapes, a
sink's JSON lines and gcloud's JSON array, become exchanges that `explain` attributes; an
entry that is no Kubernetes audit entry, or lacks what an exchange needs, is skipped with its
line number and why, and the rest is imported.

Cases the real entries do not cover (a failure, a watch, a Secret, a person without a user
agent) are the real entry changed in the one field the case is about, said at each."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from k8s_wiretap.importers.audit import import_audit
from k8s_wiretap.importers.sink import Sink
from tests.conftest import cli

DATA = Path(__file__).parent / "data"
LINES = DATA / "gke-audit.jsonl"
GCLOUD = DATA / "gke-audit.gcloud.json"
ID = "1eba2903-6843-4ef7-a903-51e7ccdbe585"
PATH = "/api/v1/namespaces/kube-system/endpoints/vpa-recommender"
AGENT = "vpa-recommender/v0.0.0 (linux/amd64) kubernetes/$Format"
OTHER_SERVICE = (
    "an audit entry of 'monitoring.googleapis.com', not of the Kubernetes API ('k8s.io')"
)


def entries() -> list[dict[str, Any]]:
    return [json.loads(line) for line in LINES.read_text().splitlines()]


def real() -> dict[str, Any]:
    """The real GKE entry: system:vpa-recommender updating its Endpoints."""
    return entries()[0]


def changed(**fields: Any) -> dict[str, Any]:
    """The real entry with its id (`insertId` and `operation.id`) and protoPayload fields
    changed (None: removed)."""
    entry = copy.deepcopy(real())
    entry["insertId"] = entry["operation"]["id"] = fields.pop("insertId")
    for key, value in fields.items():
        if value is None:
            entry["protoPayload"].pop(key, None)
        else:
            entry["protoPayload"][key] = value
    return entry


def imported(
    tmp_path: Path, log: Path, name: str = "rec.jsonl"
) -> tuple[list[dict[str, Any]], str]:
    out = tmp_path / name
    result = cli("import", "audit", str(log), "-o", str(out))
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    return records, result.stderr


def written(tmp_path: Path, *lines: dict[str, Any] | str, name: str = "log.jsonl") -> Path:
    log = tmp_path / name
    text = (line if isinstance(line, str) else json.dumps(line) for line in lines)
    log.write_text("".join(f"{line}\n" for line in text))
    return log


def of(records: list[dict[str, Any]], kind: str, id: str = ID) -> dict[str, Any]:
    return next(r for r in records if r["record"] == kind and r.get("id") == id)


def explained(path: Path) -> list[dict[str, Any]]:
    result = cli("explain", "--format", "json", str(path))
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines() if line]


def test_a_sinks_json_lines_import_as_exchanges(tmp_path: Path) -> None:
    records, said = imported(tmp_path, LINES)
    assert "gke-audit.jsonl: GKE Cloud Logging entries (JSON lines), 1 event\n" in said
    assert f"  1 skipped, first at line 2: {OTHER_SERVICE}\n" in said
    assert "1 exchange from 1 audit event; 1 unreadable line skipped" in said
    request, response, end = of(records, "request"), of(records, "response"), of(records, "end")
    assert (request["method"], request["path"]) == ("PUT", PATH)
    assert request["identity"] == {"credential": "audit log", "user": "system:vpa-recommender"}
    assert ["User-Agent", AGENT] in request["headers"]
    assert request["client"] == {"address": "::1"}
    sent = json.loads(request["body"]["text"])
    assert sent["metadata"]["resourceVersion"] == "13396222" and "@type" not in sent
    assert response["status"] == 200
    answered = json.loads(end["body"]["text"])
    assert answered["metadata"]["resourceVersion"] == "13396246" and "@type" not in answered
    audit = request["audit"]
    assert (audit["verb"], audit["level"], audit["decision"]) == (
        "update",
        "RequestResponse",
        "allow",
    )
    assert audit["reason"].startswith("RBAC: allowed by ClusterRoleBinding")
    cloud = audit["cloudLogging"]
    assert cloud["logName"].endswith("cloudaudit.googleapis.com%2Factivity")
    assert cloud["requestType"] == "core.k8s.io/v1.Endpoints"
    assert cloud["resource"]["labels"]["cluster_name"] == "mg-logs-docs-test"
    assert "the HTTP status (200 is google.rpc code 0's HTTP mapping)" in audit["absent"]
    assert {"user groups, uid and extra", "the query string"} <= set(audit["absent"])
    assert request["time"] == response["time"] == end["time"]  # the entry has one time


def test_explain_attributes_them(tmp_path: Path) -> None:
    records, _ = imported(tmp_path, LINES)
    [exchange] = explained(tmp_path / "rec.jsonl")
    assert exchange["component"] == "vpa-recommender"
    assert exchange["who"]["identity"] == "system:vpa-recommender [audit log]"
    assert (exchange["verb"], exchange["resource"], exchange["status"]) == (
        "update",
        "endpoints",
        200,
    )
    assert records


def test_gclouds_json_array_imports_as_the_lines_do(tmp_path: Path) -> None:
    from_lines, _ = imported(tmp_path, LINES, "lines.jsonl")
    from_array, said = imported(tmp_path, GCLOUD, "array.jsonl")
    assert "gke-audit.gcloud.json: GKE Cloud Logging entries (a JSON array), 1 event" in said
    assert f"  1 skipped, first at line 115: {OTHER_SERVICE}" in said
    assert GCLOUD.read_text().startswith("[\n  {\n")  # gcloud's layout, not one entry a line
    exchanges = [r for r in from_lines if r["record"] in ("request", "response", "end")]
    assert exchanges and exchanges == [
        r for r in from_array if r["record"] in {"request", "response", "end"}
    ]


def test_a_gcloud_array_cut_short_keeps_the_entries_before(tmp_path: Path) -> None:
    text = GCLOUD.read_text()
    second = text.index("\n  {", 10)  # the second entry starts on line 115
    cut = written(tmp_path, text[: second + 40], name="cut.json")
    records, said = imported(tmp_path, cut)
    assert of(records, "request")["path"] == PATH
    assert "  1 skipped, first at line 115: an item of the JSON array is not JSON" in said
    open_ended = written(tmp_path, text[: text.index(",\n  {")], name="open.json")
    records, said = imported(tmp_path, open_ended, "open.jsonl")
    assert of(records, "end")
    last = open_ended.read_text().count("\n")  # the line the first entry ends on, the last
    assert (
        f"  1 skipped, first at line {last}: after an item of the JSON array, the file ends "
        "without the array's ] (cut short?)"
    ) in said


def test_malformed_entries_are_skipped_with_their_line_and_the_rest_imported(
    tmp_path: Path,
) -> None:
    not_audit = changed(insertId="a2")
    not_audit["protoPayload"]["@type"] = "type.googleapis.com/google.cloud.audit.Other"
    bad_time = changed(insertId="a7")
    bad_time["timestamp"] = "yesterday"
    log = written(
        tmp_path,
        not_audit,
        changed(insertId="a3", methodName="google.container.v1.ClusterManager.GetCluster"),
        changed(insertId="a4", resourceName="projects/p"),
        changed(insertId="a5", status={"code": "7"}),
        bad_time,
        {"protoPayload": "not an object"},
        real(),
    )
    records, said = imported(tmp_path, log)
    assert of(records, "request")["path"] == PATH  # the last line, imported
    lines = [line for line in said.splitlines() if " skipped, first at line " in line]
    assert lines == [
        "  1 skipped, first at line 1: protoPayload is a "
        "'type.googleapis.com/google.cloud.audit.Other', not an AuditLog "
        "(type.googleapis.com/google.cloud.audit.AuditLog)",
        "  1 skipped, first at line 2: methodName 'google.container.v1.ClusterManager.GetCluster'"
        " is no Kubernetes method (io.k8s.GROUP...VERB)",
        "  1 skipped, first at line 3: resourceName 'projects/p' is no GROUP/VERSION/RESOURCE path",
        "  1 skipped, first at line 4: status.code '7' is no google.rpc code (0 to 16)",
        "  1 skipped, first at line 5: timestamp 'yesterday' is not an RFC 3339 time",
        "  1 skipped, first at line 6: protoPayload is a JSON str, not an AuditLog",
    ]
    assert "1 exchange from 1 audit event; 6 unreadable lines skipped" in said


def test_an_entry_without_a_time_takes_the_files_and_says_so(tmp_path: Path) -> None:
    """An export that dropped the entry's `timestamp` (and the AuditLog's own): the file's
    modification time, said in `audit.taken` and `absent`."""
    entry = changed(insertId="a6")
    del entry["timestamp"]
    log = written(tmp_path, entry)
    records, _ = imported(tmp_path, log)
    request = of(records, "request", "a6")
    assert request["time"] == pytest.approx(log.stat().st_mtime, abs=1e-3)
    assert request["audit"]["taken"]["requestReceivedTimestamp"].endswith("modification time")
    assert "the request's time (the file's modification time instead)" in request["audit"]["absent"]


def test_a_non_resource_request_and_an_entry_without_type_import(tmp_path: Path) -> None:
    """GKE's health check (`io.k8s.get` on `readyz`) is `GET /readyz`; an export that
    dropped the AuditLog's `@type` and `serviceName` still reads as one."""
    health = changed(insertId="h1", methodName="io.k8s.get", resourceName="readyz")
    bare = changed(insertId="b1")
    del bare["protoPayload"]["@type"], bare["protoPayload"]["serviceName"]
    log = written(tmp_path, health, bare)
    records, said = imported(tmp_path, log)
    assert (of(records, "request", "h1")["method"], of(records, "request", "h1")["path"]) == (
        "GET",
        "/readyz",
    )
    assert of(records, "request", "b1")["path"] == PATH
    assert "2 exchanges from 2 audit events; 0 unreadable lines skipped" in said


def test_a_kubernetes_status_is_the_status_else_the_rpc_codes_mapping(tmp_path: Path) -> None:
    """The real entry answered with a Conflict Status (code 409, rpc ABORTED), and answered
    PERMISSION_DENIED without a response object."""
    conflict = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 409}
    log = written(
        tmp_path,
        changed(insertId="c1", response=conflict, status={"code": 10, "message": "Conflict"}),
        changed(insertId="c2", response=None, request=None, status={"code": 7}),
    )
    records, _ = imported(tmp_path, log)
    assert of(records, "response", "c1")["status"] == 409
    assert not [a for a in of(records, "request", "c1")["audit"]["absent"] if "HTTP" in a]
    assert of(records, "end", "c1")["audit"]["responseStatus"]["message"] == "Conflict"
    assert of(records, "response", "c2")["status"] == 403
    metadata = of(records, "request", "c2")["audit"]
    assert metadata["level"] == "Metadata"
    assert {"request body", "the HTTP status (403 is google.rpc code 7's HTTP mapping)"} <= set(
        metadata["absent"]
    )


def test_a_watch_is_a_watch_without_its_events(tmp_path: Path) -> None:
    """The real entry as a watch of the namespace's Endpoints (what methodName's verb says)."""
    watch = changed(
        insertId="w1",
        methodName="io.k8s.core.v1.endpoints.watch",
        resourceName="core/v1/namespaces/kube-system/endpoints",
        request=None,
        response=None,
    )
    records, _ = imported(tmp_path, written(tmp_path, watch))
    request = of(records, "request", "w1")
    assert (request["method"], request["path"]) == (
        "GET",
        "/api/v1/namespaces/kube-system/endpoints?watch=true",
    )
    assert "watch events" in of(records, "end", "w1")["audit"]["absent"]
    [exchange] = explained(tmp_path / "rec.jsonl")
    assert exchange["verb"] == "watch"
    # the entry keeps no query string: not "from now", which an absent resourceVersion is
    assert exchange["rule"] == "informer-watch"
    assert "from resourceVersion (not recorded)" in exchange["summary"]


def test_a_secrets_values_are_redacted(tmp_path: Path) -> None:
    """The real entry as a Secret's create with its data: the recording holds no value."""
    secret = {
        "@type": "core.k8s.io/v1.Secret",
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "db", "namespace": "default"},
        "data": {"password": "aHVudGVyMi1na2UtaW1wb3J0"},
    }
    entry = changed(
        insertId="s1",
        methodName="io.k8s.core.v1.secrets.create",
        resourceName="core/v1/namespaces/default/secrets/db",
        request=secret,
        response=secret,
    )
    records, _ = imported(tmp_path, written(tmp_path, entry))
    text = (tmp_path / "rec.jsonl").read_text()
    assert "aHVudGVyMi1na2UtaW1wb3J0" not in text
    assert of(records, "request", "s1")["path"] == "/api/v1/namespaces/default/secrets/db"


def test_an_entry_under_message_is_read_as_a_shipper_writes_it(tmp_path: Path) -> None:
    """The real entry as a JSON string under `message`, as log shippers forward it."""
    records, said = imported(tmp_path, written(tmp_path, {"message": json.dumps(real())}))
    assert of(records, "request")["path"] == PATH
    assert "0 unreadable lines skipped" in said


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b" ")), max_size=6), st.data()
)
def test_any_gcloud_array_is_imported_or_skipped_by_line(
    tmp_path: Path, lines: list[bytes], data: st.DataObject
) -> None:
    """gcloud's array with its lines cut, spliced or replaced anywhere: never a crash, each
    skip names a line of the file that has something on it, every record is JSON."""
    text = GCLOUD.read_bytes().split(b"\n")
    at = data.draw(st.integers(1, len(text)))
    keep = data.draw(st.integers(0, len(text)))
    log = tmp_path / "array.json"
    log.write_bytes(b"\n".join(text[:at] + lines + text[max(at, keep) :]))
    out = tmp_path / "rec.jsonl"
    said: list[str] = []
    with Sink(out, source="audit log", overwrite=True, on_skip=said.append) as sink:
        import_audit([log], sink)
    file_lines = log.read_bytes().split(b"\n")
    for place in (line.split(": skipped: ")[0] for line in said):
        number = int(place.removeprefix(f"{log}:").split()[0])
        # something on it besides JSON's whitespace (bytes.strip also takes \x0b, not JSON's)
        assert 0 < number <= len(file_lines) and file_lines[number - 1].strip(b" \t\r\n")
    written = out.read_bytes().split(b"\n")
    assert written[-1] == b"" and all(json.loads(line) for line in written[:-1])


def test_a_user_without_a_user_agent_is_attributed_by_their_email(tmp_path: Path) -> None:
    """The real entry sent by a person's Google account, and by GKE's controller manager,
    neither naming a user agent: each is attributed by its principalEmail."""
    people = []
    for n, email in enumerate(["jane@example.com", "system:kube-controller-manager"]):
        entry = changed(insertId=f"u{n}")
        entry["protoPayload"]["authenticationInfo"]["principalEmail"] = email
        del entry["protoPayload"]["requestMetadata"]["callerSuppliedUserAgent"]
        people.append(entry)
    imported(tmp_path, written(tmp_path, *people))
    person, manager = explained(tmp_path / "rec.jsonl")
    assert (person["component"], person["who"]["how"]) == ("user/jane@example.com", "identity")
    assert (manager["component"], manager["who"]["how"]) == ("controller-manager", "identity")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)
ENTRY_KEYS = ["insertId", "timestamp", "labels", "operation", "protoPayload", "resource"]
PAYLOAD_KEYS = [
    "@type",
    "serviceName",
    "methodName",
    "resourceName",
    "authenticationInfo",
    "requestMetadata",
    "status",
    "request",
    "response",
]


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.sampled_from(ENTRY_KEYS + PAYLOAD_KEYS), json_values)
def test_any_field_of_an_entry_is_imported_or_skipped(tmp_path: Path, key: str, value: Any) -> None:
    """The real entry with any field replaced by any JSON value: one exchange, or one line
    skipped with its number; never a crash."""
    entry = copy.deepcopy(real())
    (entry if key in ENTRY_KEYS else entry["protoPayload"])[key] = value
    log = written(tmp_path, entry)
    out = tmp_path / "rec.jsonl"
    said: list[str] = []
    with Sink(out, source="audit log", overwrite=True, on_skip=said.append) as sink:
        import_audit([log], sink)
    assert sink.exchanges + len(said) == 1
    assert all(line.startswith(f"{log}:1: skipped: ") for line in said)
    written_lines = out.read_bytes().split(b"\n")
    assert written_lines[-1] == b"" and all(json.loads(line) for line in written_lines[:-1])


def test_a_null_object_is_an_absent_one(tmp_path: Path) -> None:
    """The real entry with `request` and `response` null: no body, and marked absent."""
    entry = changed(insertId="n1")
    entry["protoPayload"]["request"] = entry["protoPayload"]["response"] = None
    records, _ = imported(tmp_path, written(tmp_path, entry))
    request, end = of(records, "request", "n1"), of(records, "end", "n1")
    assert "body" not in request and "body" not in end
    assert "request body" in request["audit"]["absent"]
    assert "response body" in end["audit"]["absent"]


def test_two_entries_of_one_operation_are_one_exchange_and_a_repeat_is_ignored(
    tmp_path: Path,
) -> None:
    """The real entry logged as the first and the last of its operation (as KHI reads
    `operation.first` and `.last`), each with an insertId of its own, the last 2 s later;
    then the real entry again, as a sink may write it twice."""
    first, last = copy.deepcopy(real()), copy.deepcopy(real())
    first["insertId"], first["operation"]["last"] = "i-1", False
    last["insertId"], last["operation"]["first"] = "i-2", False
    last["timestamp"] = "2021-06-01T13:46:26.606609Z"
    records, said = imported(tmp_path, written(tmp_path, first, last, real()))
    assert len([r for r in records if r["record"] == "request"]) == 1
    request, end = of(records, "request"), of(records, "end")
    assert round(end["time"] - request["time"], 3) == 2.0
    assert end["audit"]["stages"] == ["ResponseStarted", "ResponseComplete"]
    assert (
        f"a ResponseComplete event of {ID} after its end: ignored"
        in (tmp_path / "rec.jsonl").read_text()
    )
    assert "1 exchange from 3 audit events" in said


def test_a_dry_run_is_a_dry_run(tmp_path: Path) -> None:
    """The real entry with GKE's dry-run label (`command.gke.io/dryRun`, as KHI reads it)."""
    entry = changed(insertId="d1")
    entry["labels"]["command.gke.io/dryRun"] = "true"
    records, _ = imported(tmp_path, written(tmp_path, entry))
    assert of(records, "request", "d1")["path"] == f"{PATH}?dryRun=All"
    [exchange] = explained(tmp_path / "rec.jsonl")
    assert exchange["options"].get("dryRun") == "All"
