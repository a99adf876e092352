"""Every shape an audit log is kept in, built from the lab's recorded audit log
(recordings/wide-session.audit.log.gz, a real API server's own) wrapped as each vendor's
documented schema says (the URLs are in k8s_wiretap/importers/shapes/): each imports the
same exchanges as the plain log, told by its content whatever the file's name, and the
import says the shape it read."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from k8s_wiretap.importers.audit import MAX_REASONS, OTHER_REASONS, FileReport, import_audit
from k8s_wiretap.importers.sink import Sink
from tests.conftest import cli

LOG = Path(__file__).resolve().parents[2] / "recordings" / "wide-session.audit.log.gz"
COUNT = 40  # the log's first events


def events() -> list[dict[str, Any]]:
    with gzip.open(LOG, "rt") as lines:
        return [json.loads(line) for _, line in zip(range(COUNT), lines, strict=False)]


def lines(values: list[Any]) -> str:
    return "".join(json.dumps(v) + "\n" for v in values)


def imported(path: Path) -> tuple[list[dict[str, Any]], str, int]:
    """The records, stderr and exit status of `import audit PATH`."""
    out = path.with_suffix(".rec")
    result = cli("import", "audit", str(path), "-o", str(out), "--overwrite")
    records = [json.loads(r) for r in out.read_bytes().split(b"\n") if r] if out.exists() else []
    return records, result.stderr, result.returncode


def requests(records: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(r["id"], r["method"], r["path"]) for r in records if r["record"] == "request"]


def plain(tmp_path: Path) -> list[tuple[str, str, str]]:
    log = tmp_path / "plain"
    log.write_text(lines(events()))
    return requests(imported(log)[0])


def _cloudwatch(filtered: bool) -> dict[str, Any]:
    out = []
    for n, event in enumerate(events()):
        item: dict[str, Any] = {"timestamp": 1_700_000_000_000 + n, "message": json.dumps(event)}
        item["ingestionTime"] = item["timestamp"] + 500
        if filtered:
            item = {"logStreamName": "kube-apiserver-audit-0123", **item, "eventId": str(n)}
        out.append(item)
    document: dict[str, Any] = {"events": out}
    if filtered:
        document["searchedLogStreams"] = []
    else:
        document["nextForwardToken"] = "f/1"
    return document


def _subscription() -> dict[str, Any]:
    return {
        "messageType": "DATA_MESSAGE",
        "owner": "123456789012",
        "logGroup": "/aws/eks/lab/cluster",
        "logStream": "kube-apiserver-audit-0123",
        "subscriptionFilters": ["audit"],
        "logEvents": [
            {"id": str(n), "timestamp": 1_700_000_000_000, "message": json.dumps(e)}
            for n, e in enumerate(events())
        ],
    }


def _otlp_value(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        pairs = [{"key": k, "value": _otlp_value(v)} for k, v in value.items()]
        return {"kvlistValue": {"values": pairs}}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_otlp_value(v) for v in value]}}
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": value}


SHAPES: dict[str, tuple[str, Any]] = {
    # name said: (expected shape, the file's bytes)
    "pretty": (
        "audit.k8s.io EventLists",
        lambda: json.dumps(
            {"kind": "EventList", "apiVersion": "audit.k8s.io/v1", "items": events()}, indent=2
        ),
    ),
    "array": ("audit.k8s.io Events", lambda: json.dumps(events(), indent=4)),
    "one-line-array": ("JSON arrays of audit values", lambda: json.dumps(events()) + "\n"),
    "bom-crlf": ("audit.k8s.io Events", lambda: "\ufeff" + lines(events()).replace("\n", "\r\n")),
    "concatenated": ("audit.k8s.io Events", lambda: "".join(json.dumps(e) for e in events())),
    "filter": ("EKS CloudWatch filter-log-events", lambda: json.dumps(_cloudwatch(True), indent=4)),
    "get": ("EKS CloudWatch get-log-events", lambda: json.dumps(_cloudwatch(False), indent=4)),
    "s3": (
        "audit.k8s.io Events",
        lambda: "".join(
            f"2024-01-01T00:00:{n % 60:02d}.000Z {json.dumps(e)}\n" for n, e in enumerate(events())
        ),
    ),
    "firehose": ("EKS CloudWatch subscription payloads", lambda: json.dumps(_subscription())),
    "kinesis": (
        "EKS CloudWatch subscription payloads",
        lambda: (
            base64.b64encode(gzip.compress(json.dumps(_subscription()).encode())).decode() + "\n"
        ),
    ),
    "lambda": (
        "Lambda",
        lambda: (
            json.dumps(
                {
                    "awslogs": {
                        "data": base64.b64encode(
                            gzip.compress(json.dumps(_subscription()).encode())
                        ).decode()
                    }
                }
            )
            + "\n"
        ),
    ),
    "records": (
        "AKS diagnostic records",
        lambda: json.dumps(
            {
                "records": [
                    {
                        "time": e["stageTimestamp"],
                        "resourceId": "/SUBSCRIPTIONS/X",
                        "category": "kube-audit",
                        "operationName": "Microsoft.ContainerService/managedClusters/diagnosticLogs"
                        "/Read",
                        "properties": {
                            "log": json.dumps(e) if n % 2 else e,
                            "stream": "stdout",
                            "pod": "kube-apiserver-1",
                        },
                    }
                    for n, e in enumerate(events())
                ]
            }
        ),
    ),
    "diagnostics": (
        "AKS AzureDiagnostics rows",
        lambda: json.dumps(
            [
                {
                    "TimeGenerated": e["stageTimestamp"],
                    "Category": "kube-audit",
                    "log_s": json.dumps(e),
                    "pod_s": "kube-apiserver-1",
                    "Type": "AzureDiagnostics",
                }
                for e in events()
            ],
            indent=2,
        ),
    ),
    "aksaudit": ("AKS AKSAudit", lambda: json.dumps([_aksaudit(e) for e in events()], indent=2)),
    "viaq": ("OpenShift Logging ViaQ", lambda: lines([_viaq(e) for e in events()])),
    "otlp": (
        "OpenTelemetry OTLP",
        lambda: (
            json.dumps(
                {
                    "resourceLogs": [
                        {
                            "resource": {"attributes": []},
                            "scopeLogs": [
                                {
                                    "scope": {},
                                    "logRecords": [
                                        {
                                            "timeUnixNano": "1700000000000000000",
                                            "body": {"stringValue": json.dumps(e)}
                                            if n % 2
                                            else _otlp_value(e),
                                        }
                                        for n, e in enumerate(events())
                                    ],
                                }
                            ],
                        }
                    ]
                }
            )
            + "\n"
        ),
    ),
    "fluentbit": (
        "under log",
        lambda: lines(
            [{"log": json.dumps(e) + "\n", "stream": "stdout", "time": "x"} for e in events()]
        ),
    ),
    "vector": (
        "under message",
        lambda: lines([{"message": json.dumps(e), "source_type": "file"} for e in events()]),
    ),
    "loki": (
        "Loki logcli",
        lambda: lines(
            [
                {
                    "labels": {"job": "audit"},
                    "line": json.dumps(e),
                    "timestamp": e["stageTimestamp"],
                }
                for e in events()
            ]
        ),
    ),
    "elastic": (
        "Elastic",
        lambda: lines(
            [
                {
                    "_index": "logs",
                    "_source": {"@timestamp": e["stageTimestamp"], "kubernetes": {"audit": e}},
                }
                for e in events()
            ]
        ),
    ),
    "clickhouse": (
        "ClickHouse",
        lambda: lines([{"ts": e["stageTimestamp"], "raw": json.dumps(e)} for e in events()]),
    ),
}


def _aksaudit(event: dict[str, Any]) -> dict[str, Any]:
    """A row of the AKSAudit table (https://learn.microsoft.com/azure/azure-monitor/reference/
    tables/aksaudit) as `az monitor log-analytics query` prints it: dynamic columns as text."""
    row = {
        "TenantId": "t",
        "TimeGenerated": event["stageTimestamp"],
        "Level": event["level"],
        "AuditId": event["auditID"],
        "Stage": event["stage"],
        "RequestUri": event["requestURI"],
        "Verb": event["verb"],
        "User": json.dumps(event["user"]),
        "SourceIps": json.dumps(event.get("sourceIPs", [])),
        "UserAgent": event.get("userAgent"),
        "ObjectRef": json.dumps(event.get("objectRef", {})),
        "ResponseStatus": json.dumps(event.get("responseStatus", {})),
        "RequestReceivedTime": event["requestReceivedTimestamp"],
        "StageReceivedTime": event["stageTimestamp"],
        "PodName": "kube-apiserver-1",
        "Type": "AKSAudit",
    }
    if "requestObject" in event:
        row["RequestObject"] = "skipped-too-big-size-object"
    return row


def _viaq(event: dict[str, Any]) -> dict[str, Any]:
    record = {k: v for k, v in event.items() if k != "level"}
    return {
        **record,
        "k8s_audit_level": event["level"],
        "level": "default",
        "log_type": "audit",
        "hostname": "master-0",
        "@timestamp": event["stageTimestamp"],
        "openshift": {"cluster_id": "c"},
        "viaq_msg_id": "m",
    }


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_shape_imports_what_the_plain_log_does(tmp_path: Path, name: str) -> None:
    shape, make = SHAPES[name]
    log = tmp_path / "export.data"  # one name for every shape: told by content
    log.write_text(make())
    records, said, status = imported(log)
    assert status == 0, said
    assert requests(records) == plain(tmp_path)
    assert f"{log}: " in said and shape in said.splitlines()[0], said


def test_a_gzipped_shape_is_read_through_gzip(tmp_path: Path) -> None:
    log = tmp_path / "export"
    log.write_bytes(gzip.compress(json.dumps(_subscription()).encode() * 2))
    records, said, status = imported(log)
    assert status == 0 and requests(records) == plain(tmp_path), said
    assert "(JSON documents), 80 events" in said  # two payloads one after the other
    assert "40 repeated or late audit events ignored" in said  # the second repeats the first


def test_a_truncated_cloudwatch_message_is_imported_as_far_as_it_goes(tmp_path: Path) -> None:
    first = events()[0]
    event: dict[str, Any] = {}
    for key, value in first.items():  # in the order the API server writes (Go's struct's)
        if key == "requestReceivedTimestamp":
            event["requestObject"] = {"pad": "x" * 300_000}
        event[key] = value
    event["level"] = "RequestResponse"
    message = json.dumps(event)[: 256 * 1024 - 26]
    document = {"events": [{"timestamp": 1_700_000_000_000, "message": message}]}
    log = tmp_path / "cut.json"
    log.write_text(json.dumps(document))
    records, said, status = imported(log)
    assert status == 0, said
    request = next(r for r in records if r["record"] == "request")
    assert request["id"] == event["auditID"] and "body" not in request
    absent = " ".join(request["audit"]["absent"])
    assert "requestObject on" in absent and "256 KB" in absent
    assert request["audit"]["taken"]["requestReceivedTimestamp"].startswith("the CloudWatch")


def test_old_events_and_events_without_id_or_stage(tmp_path: Path) -> None:
    first = events()[0]
    beta = {k: v for k, v in first.items() if not k.endswith("Timestamp")}
    beta |= {
        "apiVersion": "audit.k8s.io/v1beta1",
        "timestamp": first["requestReceivedTimestamp"],
        "metadata": {"creationTimestamp": first["stageTimestamp"]},
    }
    bare = {k: v for k, v in events()[1].items() if k not in ("auditID", "stage")}
    log = tmp_path / "old.log"
    log.write_text(lines([beta, bare, bare]))
    records, said, status = imported(log)
    assert status == 0, said
    got = [r for r in records if r["record"] == "request"]
    assert len(got) == 2  # the bare event's copy is its repeat
    assert (
        got[0]["audit"]["taken"]["requestReceivedTimestamp"] == "timestamp (audit.k8s.io/v1beta1)"
    )
    assert got[0]["audit"]["taken"]["stageTimestamp"].startswith("metadata.creationTimestamp")
    assert got[1]["id"].startswith("sha256:") and got[1]["audit"]["stage"] == "ResponseComplete"
    assert "auditID" in got[1]["audit"]["taken"] and "stage" in got[1]["audit"]["taken"]
    notes = [r for r in records if r["record"] == "note" and r.get("id") == got[1]["id"]]
    assert notes[0]["message"] == (
        "an event with no auditID: none in the event: the SHA-256 of its content; no stage: "
        "none in the event: taken as the whole request (audit.taken)"
    )


def test_requests_sharing_one_auditid_are_kept_apart(tmp_path: Path) -> None:
    shared = [{**e, "auditID": "00000000-0000-0000-0000-000000000000"} for e in events()]
    complete = [e for e in shared if e["stage"] == "ResponseComplete"]
    log = tmp_path / "sanitised.log"
    log.write_text(lines(complete))
    records, said, status = imported(log)
    assert status == 0, said
    ids = [r["id"] for r in records if r["record"] == "request"]
    assert len(ids) == len(complete) == len(set(ids))
    assert ids[1] == "00000000-0000-0000-0000-000000000000~1"


def test_a_file_with_nothing_importable_says_the_closest_shape_and_exits_1(
    tmp_path: Path,
) -> None:
    log = tmp_path / "control.json"
    log.write_text(json.dumps({"messageType": "CONTROL_MESSAGE", "logEvents": []}))
    _, said, status = imported(log)
    assert status == 1
    assert f"{log}: nothing importable: the closest shape is EKS CloudWatch subscription " in said
    assert "a CloudWatch Logs CONTROL_MESSAGE (no log events)" in said
    empty = tmp_path / "empty"
    empty.write_text("\n\n")
    _, said, status = imported(empty)
    assert status == 1 and f"{empty}: nothing importable: the file holds no JSON value" in said
    batch = tmp_path / "batch.json"
    batch.write_text('{"kind": "EventList", "apiVersion": "audit.k8s.io/v1", "items": []}\n')
    _, said, status = imported(batch)
    assert status == 1
    assert (
        f"{batch}: nothing importable: its values are audit.k8s.io EventLists (webhook "
        "batches) (JSON lines), holding no audit Event"
    ) in said


def test_skips_are_counted_per_reason_with_the_first_line(tmp_path: Path) -> None:
    log = tmp_path / "mixed.log"
    good = lines(events()[:3])
    log.write_text(
        good + "not json\n" * 3 + '{"stage": "Halfway", "verb": "get", "auditID": "x"}\n'
    )
    _, said, status = imported(log)
    assert status == 0
    assert "  3 skipped, first at line 4: the line is not JSON" in said
    assert "  1 skipped, first at line 7: stage 'Halfway'" in said
    assert said.count("skipped, first") == 2


def test_the_sink_is_told_each_skip_by_the_reader(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text("x\n" + lines(events()[:2]))
    said: list[str] = []
    with Sink(tmp_path / "r", source="audit log", on_skip=said.append) as sink:
        importer = import_audit([log], sink)
    assert said == [
        f"{log}:1: skipped: the line is not JSON (Expecting value: line 1 column 1 (char 0))"
    ]
    assert importer.files[0].shape == "audit.k8s.io Events"


def test_openshifts_other_api_servers_paths_import(tmp_path: Path) -> None:
    """openshift-apiserver's and oauth-apiserver's Events are the API server's own, of
    their groups' paths (and oauth-server's `/oauth/authorize`, a non-resource path)."""
    paths = [
        ("/apis/route.openshift.io/v1/namespaces/default/routes", "list"),
        ("/apis/oauth.openshift.io/v1/oauthclients/console", "get"),
        ("/apis/user.openshift.io/v1/users/~", "get"),
        ("/oauth/authorize?client_id=console&response_type=code", "get"),
    ]
    first = events()[0]
    lines_ = [
        {**first, "auditID": f"os-{n}", "requestURI": uri, "verb": verb}
        for n, (uri, verb) in enumerate(paths)
    ]
    log = tmp_path / "openshift-apiserver-audit.log"
    log.write_text(lines(lines_))
    records, said, status = imported(log)
    assert status == 0, said
    assert [(r[1], r[2]) for r in requests(records)] == [("GET", uri) for uri, _ in paths]


def test_reasons_differing_in_a_value_are_one_and_past_a_hundred_one_count(
    tmp_path: Path,
) -> None:
    """What a report holds does not grow with the input: reasons that differ only in a
    value are one reason, and past 100 reasons, one count holds the rest."""
    good = events()[0]
    bad = [{**good, "level": f"L{n}", "auditID": f"l{n}"} for n in range(3)]
    log = tmp_path / "many.log"
    log.write_text(lines([good, *bad]))
    _, said, status = imported(log)
    assert status == 0, said
    reasons = [line for line in said.splitlines() if line.startswith("  ")]
    assert reasons == [
        "  3 skipped, first at line 2: level 'L0' is none of Metadata, Request, RequestResponse"
    ]
    report = FileReport(log)
    for n in range(150):
        report.skip(f"{log}:{n}", f"reason{'x' * n}")
    assert len(report.skips) == MAX_REASONS + 1
    count, first, said_ = report.skips[OTHER_REASONS]
    assert (count, first) == (50, f"{log}:100")
    assert said_.endswith("(and other reasons: the recording notes them)")


def test_elastics_documents_give_the_original_line_or_their_fields_made_whole(
    tmp_path: Path,
) -> None:
    """Elastic's pipeline keeps the line in `event.original` (taken whole), and writes the
    fields under `kubernetes.audit` with annotation keys' dots as `_` (made `.` again)
    (elastic/integrations packages/kubernetes/data_stream/audit_logs, its pipeline test's
    expected output)."""
    event = events()[0]
    renamed = {k.replace(".", "_", k.count(".")): v for k, v in event["annotations"].items()}
    fields = {k: v for k, v in event.items() if k != "annotations"} | {"annotations": renamed}
    log = tmp_path / "elastic.ndjson"
    log.write_text(
        lines(
            [
                {"event": {"original": json.dumps(event)}, "kubernetes": {"audit": fields}},
                {"kubernetes": {"audit": {**fields, "auditID": "fields-only"}}},
            ]
        )
    )
    records, said, status = imported(log)
    assert status == 0, said
    whole, rebuilt = [r for r in records if r["record"] == "request"]
    assert whole["audit"]["taken"] == {"the Event": "event.original (the line Elastic read)"}
    assert rebuilt["id"] == "fields-only"
    assert rebuilt["audit"]["annotations"] == event["annotations"]
    assert rebuilt["audit"]["decision"] == event["annotations"]["authorization.k8s.io/decision"]
