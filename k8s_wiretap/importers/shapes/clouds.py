"""The managed clusters' shapes: EKS's CloudWatch Logs, AKS's Azure Monitor, GKE's Cloud
Logging (and its BigQuery export).

EKS (https://docs.aws.amazon.com/eks/latest/userguide/control-plane-logs.html: the audit
log in the group `/aws/eks/NAME/cluster`, streams `kube-apiserver-audit-*`, one Event a
log event):

- `aws logs filter-log-events` (https://docs.aws.amazon.com/cli/latest/reference/logs/filter-log-events.html):
  `{"events": [{"logStreamName", "timestamp", "message", "ingestionTime", "eventId"}],
  "searchedLogStreams": [...], "nextToken"}`; `get-log-events`
  (https://docs.aws.amazon.com/cli/latest/reference/logs/get-log-events.html): the same
  `events` without `logStreamName` and `eventId`;
- a subscription's payload (https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/SubscriptionFilters.html):
  `{"messageType": "DATA_MESSAGE", "owner", "logGroup", "logStream",
  "subscriptionFilters", "logEvents": [{"id", "timestamp", "message"}]}`, as Firehose
  delivers it (gzipped; `framing` inflates the file), as a Lambda is given it
  (`{"awslogs": {"data": BASE64-OF-GZIP}}`), or a Kinesis record's base64 a line
  (`framing`); a `CONTROL_MESSAGE` holds no events;
- Logs Insights (`aws logs get-query-results`): `{"results": [[{"field": "@message",
  "value": ...}, ...]]}`;
- an export to S3: a timestamp before each line (`framing`).

CloudWatch Logs keeps at most 256 KB of an event
(https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/cloudwatch_limits_cwl.html); a
longer Event's message is cut there, no longer JSON. Such a message is imported as far as
it goes (`_cut`): the Event's members before the cut (Go writes them in the order of its
struct: kind, apiVersion, level, auditID, stage, requestURI, verb, user, ..., the objects,
then the times and annotations), the member the cut falls in and those after it absent,
said in the record's `absent`; its times, when they came after the cut, are the log
event's `timestamp` (when CloudWatch has it: the API server's write), said in `taken`.
A message cut before its auditID, verb or requestURI is skipped, saying so.

AKS (https://learn.microsoft.com/azure/aks/monitor-aks-reference; categories `kube-audit`
and `kube-audit-admin`):

- Event Hubs and storage accounts (diagnostic settings: resource logs' schema,
  https://learn.microsoft.com/azure/azure-monitor/essentials/resource-logs-schema):
  `{"records": [{"time", "resourceId", "category", "operationName", "properties":
  {"log": "<the Event's JSON>", "stream", "pod"}}]}`, `log` a string or an object;
- Log Analytics' `AzureDiagnostics` rows
  (https://learn.microsoft.com/azure/azure-monitor/reference/tables/azurediagnostics):
  `Category`, `log_s` (the Event's JSON), `TimeGenerated`, ...;
- the resource-specific `AKSAudit` and `AKSAuditAdmin` rows
  (https://learn.microsoft.com/azure/azure-monitor/reference/tables/aksaudit): the Event's
  fields as columns (`AuditId`, `Verb`, `RequestUri`, `Stage`, `Level`, `User`,
  `SourceIps`, `UserAgent`, `ObjectRef`, `ResponseStatus`, `RequestObject`,
  `ResponseObject`, `RequestReceivedTime`, `StageReceivedTime`, `Annotations`, ...);
  a dynamic column as `az monitor log-analytics query` gives it may be its JSON's text.
  An object too big for the table is the string `skipped-too-big-size-object`: the body is
  absent, said, and no error.

GKE: Cloud Logging's entries (`gke.event_of`), with or without the AuditLog's `@type`, and
its BigQuery export (https://cloud.google.com/logging/docs/export/bigquery: the AuditLog
under `protopayload_auditlog`, its objects as JSON text in `requestJson`, `responseJson`),
made an entry first (`_bigquery`).
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import re
from typing import Any

from k8s_wiretap.capture import jsonfast
from k8s_wiretap.importers import framing, gke, limits
from k8s_wiretap.importers.shapes.base import (
    Shape,
    Unfit,
    lacks,
    loaded,
    nested,
    register,
    timed,
    took,
)

__all__ = ["CUT", "TOO_BIG"]

CUT = 256 * 1024  # CloudWatch Logs' largest event, bytes (26 of them its own)
TOO_BIG = "skipped-too-big-size-object"  # AKSAudit's object when it was too big
AUDIT_CATEGORIES = ("kube-audit", "kube-audit-admin")
DECODER = json.JSONDecoder()


# -- EKS: CloudWatch Logs -------------------------------------------------------------------
def _iso(millis: Any) -> str | None:
    if not isinstance(millis, int) or isinstance(millis, bool):
        return None
    try:
        when = dt.datetime.fromtimestamp(millis / 1000, dt.UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return when.isoformat().replace("+00:00", "Z")


def _message(item: Any, what: str) -> list[Any]:
    """The Events of one CloudWatch log event (`message`, `timestamp`)."""
    if not isinstance(item, dict) or not isinstance(item.get("message"), str):
        raise Unfit(f"{what} without a message")
    text = item["message"]
    try:
        value = jsonfast.loads(text)
    except RecursionError:
        raise Unfit(f"{what}'s message is nested too deep to read") from None
    except ValueError as error:
        if not text.lstrip().startswith("{") or not _ends_short(text, error):
            raise Unfit(f"{what}'s message is not JSON ({error})") from None
        return [_cut(text, _iso(item.get("timestamp")))]
    stamp = _iso(item.get("timestamp"))
    return timed(nested(value, f"{what}'s message"), stamp, "the CloudWatch log event's timestamp")


def _ends_short(text: str, error: ValueError) -> bool:
    """Whether the JSON `text` is no JSON only because it ends too soon (it was cut)."""
    position = getattr(error, "pos", -1)
    if str(getattr(error, "msg", "")).startswith("Unterminated string"):
        return True  # a string the cut fell in (the error is at where it starts)
    return isinstance(position, int) and position >= len(text.rstrip()) - 1


def _cut(text: str, when: str | None) -> dict[str, Any]:
    """The members of the Event `text` holds before its cut (module docstring)."""
    event: dict[str, Any] = {}
    pos = len(text) - len(text.lstrip()) + 1
    cut_in = ""
    while True:
        try:
            pos = _space(text, pos)
            key, pos = DECODER.raw_decode(text, pos)
            pos = _space(text, pos)
            if text[pos] != ":":
                break
            cut_in = str(key)
            value, pos = DECODER.raw_decode(text, _space(text, pos + 1))
        except (ValueError, IndexError, RecursionError):
            break
        event[str(key)] = value
        cut_in = ""
        pos = _space(text, pos)
        if pos >= len(text) or text[pos] != ",":
            break
        pos += 1
    size = len(text.encode())
    said = f"cut at {size:,} bytes by CloudWatch Logs (256 KB an event)"
    if not all(isinstance(event.get(k), str) for k in ("auditID", "verb", "requestURI")):
        raise Unfit(f"the message is {said}, before its auditID, verb and requestURI")
    lacks(event, f"the Event's members from {cut_in or 'the cut'} on (the message was {said})")
    for key in ("requestReceivedTimestamp", "stageTimestamp"):
        if key not in event and when is not None:
            event[key] = when
            took(event, key, "the CloudWatch log event's timestamp (the message was cut)")
    return event


def _space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _events_score(filtered: bool) -> Any:
    def score(value: Any) -> int:
        if not isinstance(value, dict) or not isinstance(value.get("events"), list):
            return 0
        events = value["events"]
        first = events[0] if events else {}
        if not isinstance(first, dict) or (events and "message" not in first):
            return 0
        has = "eventId" in first or "logStreamName" in first or "searchedLogStreams" in value
        return (11 if has else 0) if filtered else 10

    return score


def _log_events(value: Any, key: str = "events") -> list[Any]:
    events = value.get(key) if isinstance(value, dict) else None
    if not isinstance(events, list):
        raise Unfit(f"no list of {key}")
    return [e for n, item in enumerate(events) for e in _message(item, f"log event {n}")]


register(Shape("EKS CloudWatch filter-log-events", _events_score(True), _log_events, "EKS"))
register(Shape("EKS CloudWatch get-log-events", _events_score(False), _log_events, "EKS"))


def _payload_score(value: Any) -> int:
    return 15 if isinstance(value, dict) and "messageType" in value else 0


def _payload(value: Any) -> list[Any]:
    kind = value.get("messageType")
    if kind != "DATA_MESSAGE":
        raise Unfit(f"a CloudWatch Logs {kind} (no log events)")
    return _log_events(value, "logEvents")


register(Shape("EKS CloudWatch subscription payloads", _payload_score, _payload, "EKS"))


def _lambda_score(value: Any) -> int:
    awslogs = value.get("awslogs") if isinstance(value, dict) else None
    return 15 if isinstance(awslogs, dict) and "data" in awslogs else 0


def _lambda(value: Any) -> list[Any]:
    data = value["awslogs"].get("data")
    if not isinstance(data, str):
        raise Unfit("awslogs.data is no string")
    try:
        zipped = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise Unfit("awslogs.data is no base64") from None
    inflated = framing.inflate(zipped, limits.MAX_LINE, "awslogs.data")
    if isinstance(inflated, framing.BadEntry):
        raise Unfit(str(inflated))
    return nested(inflated, "awslogs.data")


register(
    Shape("EKS CloudWatch subscription payloads (Lambda's awslogs)", _lambda_score, _lambda, "EKS")
)


def _insights_score(value: Any) -> int:
    results = value.get("results") if isinstance(value, dict) else None
    if isinstance(results, list) and results and isinstance(results[0], list):
        return 10
    return 0


def _insights(value: Any) -> list[Any]:
    events: list[Any] = []
    for n, row in enumerate(value.get("results") or []):
        fields = {f.get("field"): f.get("value") for f in row if isinstance(f, dict)}
        if "@message" not in fields:
            raise Unfit(f"result {n} without @message (the query's fields must include it)")
        events.extend(nested(fields["@message"], f"result {n}'s @message"))
    return events


register(Shape("CloudWatch Logs Insights results", _insights_score, _insights, "EKS"))


# -- AKS: Azure Monitor ------------------------------------------------------------------
def _records_score(value: Any) -> int:
    records = value.get("records") if isinstance(value, dict) else None
    return 15 if isinstance(records, list) else 0


def _records(value: Any) -> list[Any]:
    events: list[Any] = []
    for n, record in enumerate(value["records"]):
        if not isinstance(record, dict):
            raise Unfit(f"record {n} is no object")
        category = record.get("category")
        if category not in AUDIT_CATEGORIES:
            raise Unfit(f"a record of category {category!r}, not kube-audit or kube-audit-admin")
        properties = record.get("properties")
        if not isinstance(properties, dict) or "log" not in properties:
            raise Unfit(f"record {n} without properties.log")
        inner = nested(properties["log"], "properties.log")
        events.extend(timed(inner, record.get("time"), "the record's time"))
    return events


register(Shape("AKS diagnostic records (Event Hubs, storage)", _records_score, _records, "AKS"))


def _diagnostics_score(value: Any) -> int:
    return 15 if isinstance(value, dict) and "log_s" in value and "Category" in value else 0


def _diagnostics(value: Any) -> list[Any]:
    category = value.get("Category")
    if category not in AUDIT_CATEGORIES:
        raise Unfit(f"a row of Category {category!r}, not kube-audit or kube-audit-admin")
    return timed(nested(value["log_s"], "log_s"), value.get("TimeGenerated"), "TimeGenerated")


register(Shape("AKS AzureDiagnostics rows", _diagnostics_score, _diagnostics, "AKS"))

# AKSAudit's columns that are not the Event's field with its first letter lowered
COLUMNS = {
    "AuditId": "auditID",
    "RequestUri": "requestURI",
    "SourceIps": "sourceIPs",
    "RequestReceivedTime": "requestReceivedTimestamp",
    "StageReceivedTime": "stageTimestamp",
}
DYNAMIC = ("User", "ImpersonatedUser", "SourceIps", "ObjectRef", "ResponseStatus", "Annotations")
OBJECTS = ("RequestObject", "ResponseObject")


def _table_score(value: Any) -> int:
    return 15 if isinstance(value, dict) and "AuditId" in value and "Verb" in value else 0


def _table(value: Any) -> list[Any]:
    event: dict[str, Any] = {}
    for column, item in value.items():
        if column.startswith("_") or column in ("TenantId", "SourceSystem", "Type", "PodName"):
            continue
        field = COLUMNS.get(column) or column[:1].lower() + column[1:]
        if column in DYNAMIC or column in OBJECTS:
            if item == TOO_BIG:
                lacks(event, f"the {field} (AKS: {TOO_BIG})")
                continue
            if item in (None, ""):
                continue
            if isinstance(item, str) and item[:1] in ("{", "["):
                item = loaded(item, column)
        event[field] = item
    for key in ("requestReceivedTimestamp", "stageTimestamp"):
        if key not in event and isinstance(value.get("TimeGenerated"), str):
            event[key] = value["TimeGenerated"]
            took(event, key, "TimeGenerated")
    event.setdefault("kind", "Event")
    return [event]


register(Shape("AKS AKSAudit/AKSAuditAdmin rows", _table_score, _table, "AKS"))


# -- GKE: Cloud Logging ------------------------------------------------------------------
def _entry_score(value: Any) -> int:
    return 20 if isinstance(value, dict) and gke.is_entry(value) else 0


def _entry(value: Any) -> list[Any]:
    try:
        return [gke.event_of(value)]
    except gke.BadEntry as error:
        raise Unfit(str(error)) from None


register(Shape("GKE Cloud Logging entries", _entry_score, _entry, "GKE"))

BQ_TIME = re.compile(r"^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?)(?: UTC)?$")


def _bigquery_score(value: Any) -> int:
    if not isinstance(value, dict):
        return 0
    return (
        20 if "protopayload_auditlog" in value or "protopayload_auditlog.methodName" in value else 0
    )


def _bq_time(value: Any) -> Any:
    """BigQuery's TIMESTAMP as `bq --format=json` prints it (`2024-01-01 00:00:00.123 UTC`,
    or seconds since the epoch), in RFC 3339."""
    if isinstance(value, str) and (match := BQ_TIME.match(value)):
        return f"{match[1]}T{match[2]}Z"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return dt.datetime.fromtimestamp(float(value), dt.UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, str):
        try:
            return _bq_time(float(value))
        except (ValueError, OverflowError, OSError):
            return value
    return value


def _bigquery(value: Any) -> list[Any]:
    """A BigQuery export row made the LogEntry it was (the AuditLog's JSON columns parsed),
    then an Event as any entry."""
    row = dict(value)
    for key in [k for k in row if k.startswith("protopayload_auditlog.")]:
        payload = row.setdefault("protopayload_auditlog", {})
        if isinstance(payload, dict):
            payload[key.split(".", 1)[1]] = row.pop(key)
    payload = dict(row.pop("protopayload_auditlog") or {})
    payload.setdefault("@type", gke.AUDIT_LOG)
    for text, field in (("requestJson", "request"), ("responseJson", "response")):
        if isinstance(payload.get(text), str):
            payload[field] = loaded(payload.pop(text), f"protopayload_auditlog.{text}")
    labels = row.get("labels")
    if isinstance(labels, list):  # a repeated key/value record
        row["labels"] = {i.get("key"): i.get("value") for i in labels if isinstance(i, dict)}
    for key in ("timestamp", "receiveTimestamp"):
        if key in row:
            row[key] = _bq_time(row[key])
    row["protoPayload"] = payload
    events = _entry(row)
    took(events[0], "everything", "the BigQuery export's columns (protopayload_auditlog.*)")
    return events


register(Shape("GKE BigQuery export rows", _bigquery_score, _bigquery, "GKE"))
