"""OpenShift's shapes beyond its API servers' own Events (kube-apiserver, openshift-apiserver
and oauth-apiserver write audit.k8s.io Events, one a line: `oc adm node-logs
--role=master --path=kube-apiserver/audit.log`, `openshift-apiserver/audit.log`,
`oauth-apiserver/audit.log`; https://docs.openshift.com/container-platform/latest/security/audit-log-view.html).

OpenShift Logging's records of them:

- ViaQ (the collector's default data model,
  https://docs.openshift.com/container-platform/4.14/logging/logging-5.8/logging-5-8-exported-fields.html,
  ViaQ/elasticsearch-templates): the Event's fields at the top level, with `log_type:
  "audit"`, `hostname`, `@timestamp`, `openshift` (cluster id, labels), `viaq_msg_id`; the
  Event's `level` renamed `k8s_audit_level` (ViaQ's `level` is the log's severity);
- OTLP (OpenShift Logging 6's `dataModel: Otel`, the OpenTelemetry protocol's JSON,
  https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): `{"resourceLogs":
  [{"resource": {"attributes": [...]}, "scopeLogs": [{"logRecords": [{"timeUnixNano",
  "body": {"stringValue": "<the Event's JSON>"} or {"kvlistValue": {"values": [{"key",
  "value"}]}}, "attributes": [...]}]}]}]}`; an AnyValue made plain JSON (`_plain`).
"""

from __future__ import annotations

from typing import Any

from k8s_wiretap.importers.shapes.base import Shape, Unfit, nested, register, took

__all__ = ["VIAQ_KEYS"]

LEVELS = ("None", "Metadata", "Request", "RequestResponse")
# ViaQ's own fields (what a record holds beyond the Event), kept apart from it
VIAQ_KEYS = (
    "@timestamp",
    "hostname",
    "log_type",
    "log_source",
    "openshift",
    "viaq_msg_id",
    "viaq_index_name",
    "pipeline_metadata",
    "k8s_audit_level",
    "openshift_audit_level",
    "kubernetes",
    "message",
    "timestamp",
)
AUDIT_LEVELS = ("k8s_audit_level", "openshift_audit_level")  # ViaQ's name of the Event's level
MARKS = ("viaq_msg_id", "viaq_index_name", "pipeline_metadata", *AUDIT_LEVELS)


def _viaq_score(value: Any) -> int:
    if not isinstance(value, dict):
        return 0
    if value.get("log_type") != "audit" and not any(k in value for k in MARKS):
        return 0
    return 25 if "auditID" in value or any(k in value for k in AUDIT_LEVELS) else 0


def _viaq(value: Any) -> list[Any]:
    if "auditID" not in value and "requestURI" not in value:
        if "message" in value:
            return nested(value["message"], "the ViaQ record's message")
        raise Unfit("a ViaQ audit record of no Kubernetes API server (no auditID)")
    event = {k: v for k, v in value.items() if k not in VIAQ_KEYS}
    for name in AUDIT_LEVELS:
        level = value.get(name)
        if event.get("level") not in LEVELS and isinstance(level, str):
            event["level"] = level
            took(event, "level", f"{name} (ViaQ)")
    for key in ("requestReceivedTimestamp", "stageTimestamp"):
        if key not in event and isinstance(value.get("@timestamp"), str):
            event[key] = value["@timestamp"]
            took(event, key, "@timestamp (ViaQ)")
    if isinstance(value.get("hostname"), str):
        took(event, "hostname", f"ViaQ's hostname {value['hostname']}")
    return [event]


register(Shape("OpenShift Logging ViaQ records", _viaq_score, _viaq, "OpenShift"))


def _plain(value: Any) -> Any:
    """An OTLP AnyValue as plain JSON (intValue is a string in OTLP's JSON)."""
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return value["intValue"]
    if "doubleValue" in value:
        return value["doubleValue"]
    if "arrayValue" in value:
        return [_plain(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        pairs = (value["kvlistValue"] or {}).get("values", [])
        return {p.get("key"): _plain(p.get("value")) for p in pairs if isinstance(p, dict)}
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def _otlp_score(value: Any) -> int:
    return 15 if isinstance(value, dict) and isinstance(value.get("resourceLogs"), list) else 0


def _otlp(value: Any) -> list[Any]:
    events: list[Any] = []
    for resource in value["resourceLogs"]:
        for scope in (resource or {}).get("scopeLogs") or []:
            for n, record in enumerate((scope or {}).get("logRecords") or []):
                body = _plain((record or {}).get("body"))
                if body is None:
                    raise Unfit(f"log record {n} without a body")
                events.extend(nested(body, f"log record {n}'s body"))
    return events


register(
    Shape("OpenTelemetry OTLP logs (OpenShift Logging's Otel)", _otlp_score, _otlp, "OpenShift")
)
