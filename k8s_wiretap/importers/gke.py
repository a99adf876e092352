"""GKE's Kubernetes audit entries, as Cloud Logging exports them, made audit.k8s.io `Event`s
(docs/importing.md, "GKE's Cloud Logging entries").

GKE's API server writes its audit events to a backend GKE manages, which writes them to the
project's Admin Activity and Data Access logs as Cloud Logging `LogEntry`s
(https://cloud.google.com/kubernetes-engine/docs/concepts/audit-policy). What an entry holds
(https://cloud.google.com/logging/docs/reference/v2/rest/v2/LogEntry; googleapis/googleapis
google/cloud/audit/audit_log.proto; GKE's own schema note, GoogleCloudPlatform/gke-mcp
pkg/tools/logging/schemas/k8s_audit_logs.md):

- `protoPayload`: an AuditLog (`@type` `type.googleapis.com/google.cloud.audit.AuditLog`),
  `serviceName` `k8s.io`, `methodName` `io.k8s.<group>.<version>.<resource>.<verb>`
  (`io.k8s.core.v1.configmaps.get`; a subresource before the verb:
  `io.k8s.core.v1.pods.exec.create`), `resourceName` `<group>/<version>/namespaces/<ns>/
  <resource>/<name>[/<subresource>]` or `<group>/<version>/<resource>/<name>` (`core` for the
  core group; the group written out: `coordination.k8s.io/v1/...`),
  `authenticationInfo.principalEmail` (the Kubernetes user name: `system:kube-scheduler`, a
  Google account's or IAM service account's email), `requestMetadata.callerIp` and
  `.callerSuppliedUserAgent`, `status` (a google.rpc.Status), `request` and `response` (the
  objects, each with an `@type` such as `core.k8s.io/v1.Pod` added), `authorizationInfo`.
- `labels`: the Kubernetes event's annotations (`authorization.k8s.io/decision` and
  `/reason`, `mutation.webhook.admission.k8s.io/round_0_index_4`, `audit.k8s.io/truncated`:
  KHI reads them there, GoogleCloudPlatform/khi
  pkg/task/inspection/googlecloudlogk8saudit/contract/extractor.go, `ExtractGCPK8sAuditLog`;
  real entries carry them, tests/importers/data/README.md).
- `insertId` and `operation.id` (the same value), `operation.first` and `.last` (true
  both: one entry a request, gke-mcp says; KHI reads them apart), `timestamp` (when the
  event happened), `receiveTimestamp` (when Logging received it), `resource.labels`
  (`cluster_name`, `location`, `project_id`).

How KHI reads the same entries (GoogleCloudPlatform/khi, `GCPAuditLogFieldExtractor` in
pkg/task/inspection/googlecloudlogk8saudit/impl/fieldextractor, `parseKubernetesOperation`
in contract/extractor.go): the verb is the last dot-separated part of `methodName`, the
object from `resourceName`'s parts, the requestor from `principalEmail`, an error from a
`status.code` other than 0, which it calls a gRPC code, not an HTTP one. falcosecurity/plugins
plugins/k8saudit-gke (convert.go) rebuilds an audit Event from the same fields, taking
`insertId` as the auditID and `/` + `resourceName` as the request URI.

The Event made of an entry (`event_of`), then read as any other (`audit.Event.of`):

- auditID: `operation.id` (or `insertId`: the same value); stage ResponseComplete, or
  ResponseStarted for an entry that is `operation.first` and not `.last` (KHI reads the two
  apart: a request logged in two entries is one exchange, its end at the last);
- verb: `methodName`'s last part; requestURI: `/api/<version>/...` for the `core` group,
  `/apis/<group>/<version>/...` for any other, then the rest of `resourceName`. The entry
  keeps no query string: a watch's URI gets `watch=true` (the verb says it is one), a dry
  run's `dryRun=All` (the `command.gke.io/dryRun` label: KHI's `IsDryRun`), and every other
  parameter (selectors, limits, resourceVersion) is absent;
- user: `{"username": principalEmail}` (no groups, uid or extra: absent); sourceIPs:
  `[callerIp]`; userAgent: `callerSuppliedUserAgent`;
- requestReceivedTimestamp and stageTimestamp: both `timestamp` (the entry has one time: how
  long the request took is absent);
- level: RequestResponse with a `response`, Request with only a `request`, else Metadata
  (the entry does not say the level; GKE's policy set it), so that a write without its
  object is marked as lacking its body;
- requestObject and responseObject: `request` and `response` without the `@type` GKE adds;
- responseStatus: the response's own code when the response is a Kubernetes Status (the API
  server's answer, as it sent it), else the google.rpc code's HTTP mapping
  (googleapis/googleapis google/rpc/code.proto: OK 200, PERMISSION_DENIED 403, NOT_FOUND 404,
  ALREADY_EXISTS and ABORTED 409, ...), said in `absent`: a create answered 201 is logged as
  OK, so its status reads 200;
- annotations: `labels`; objectRef: from the request's path.

The entry's own fields go in the Event under `cloudLogging` (a key no audit.k8s.io Event
has), which the importer keeps in the record's `audit` field: logName, insertId, timestamp,
receiveTimestamp, resource, methodName, resourceName, the google.rpc status,
authorizationInfo, the `@type`s of the objects, and `absent`: what the entry does not hold
that an audit Event would.

Not verified, and so decided conservatively: that `operation.id` (and `insertId`) is the
API server's auditID (real entries' are UUIDs, as auditIDs are; falco takes `insertId` so),
how GKE logs a long watch (one entry or a first and a last: its events are absent, as in any
audit log). A non-resource request (GKE's health checks: `io.k8s.get` on `readyz`, as real
entries have it, tests/importers/data/) is `GET /readyz`; any other `resourceName` that is no
GROUP/VERSION/RESOURCE path is skipped, never guessed at. An export that dropped the
AuditLog's `@type` and `serviceName` is read by its `methodName`; one without `insertId`
and `operation` leaves the auditID to the importer (made of the content), one without the
entry's `timestamp` takes `protoPayload.timestamp`, else leaves the time to the importer.

An entry that is no Kubernetes audit entry (another service's AuditLog, such as
`container.googleapis.com`'s cluster operations, or no AuditLog at all), or one without what
an exchange needs, raises `BadEntry`; the importer skips its line and says why.

A JSON array, as `gcloud logging read --format=json` prints it (google-cloud-sdk
googlecloudsdk/core/resource/json_printer.py: `[`, each entry indented, `,` between them,
`]`), is read an item at a time (`framing`), each item with the line it starts on. A sink
writes its hourly files to Cloud Storage one entry a line
(https://cloud.google.com/logging/docs/export/storage names them,
`08:00:00_08:59:59_S0.json`; a user's sample of one, allinurl/goaccess issue 1192, is one
compact entry a line). Entries routed to Pub/Sub are the LogEntry as JSON, a message each
(falco's k8saudit-gke unmarshals them so): written one a line, they read the same.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from k8s_wiretap.capture.format import QUERY_ABSENT
from k8s_wiretap.importers import framing, limits
from k8s_wiretap.kube.requestinfo import parse_request

__all__ = ["AUDIT_LOG", "CLOUD", "BadEntry", "event_of", "is_entry", "numbered"]

AUDIT_LOG = "type.googleapis.com/google.cloud.audit.AuditLog"
SERVICE = "k8s.io"
METHOD_PREFIX = "io.k8s."
CLOUD = "cloudLogging"  # the Event's key for what the entry says beyond an audit Event
TYPE = "@type"
DRY_RUN = "command.gke.io/dryRun"  # a label GKE sets on a dry run (KHI reads it so)
STATUS_KINDS = ("Status",)
# google.rpc.Code's HTTP mapping (googleapis/googleapis google/rpc/code.proto)
RPC_HTTP = {
    0: 200,  # OK
    1: 499,  # CANCELLED
    2: 500,  # UNKNOWN
    3: 400,  # INVALID_ARGUMENT
    4: 504,  # DEADLINE_EXCEEDED
    5: 404,  # NOT_FOUND
    6: 409,  # ALREADY_EXISTS
    7: 403,  # PERMISSION_DENIED
    8: 429,  # RESOURCE_EXHAUSTED
    9: 400,  # FAILED_PRECONDITION
    10: 409,  # ABORTED
    11: 400,  # OUT_OF_RANGE
    12: 501,  # UNIMPLEMENTED
    13: 500,  # INTERNAL
    14: 503,  # UNAVAILABLE
    15: 500,  # DATA_LOSS
    16: 401,  # UNAUTHENTICATED
}
ALWAYS_ABSENT = [
    "user groups, uid and extra",
    QUERY_ABSENT,
    "the response's own time (the entry has one timestamp)",
]
# A line (or an item of a gcloud array) read at most: a larger one is skipped, said, and
# reading goes on (the array's: ends), in bounded memory (`Limits.max_line`).
MAX_LINE = limits.MAX_LINE


# A Cloud Logging entry that is no usable Kubernetes audit entry (the message says why),
# as any part of a log that cannot be read is (`framing.BadEntry`)
BadEntry = framing.BadEntry
CHUNK = framing.CHUNK
numbered = framing.numbered


def is_entry(value: dict[str, Any]) -> bool:
    """Whether a line's object is a Cloud Logging entry with a protoPayload."""
    return "protoPayload" in value


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(payload: dict[str, Any], key: str) -> str:
    value = payload.get(key)
    return value if isinstance(value, str) else ""


def _payload(entry: dict[str, Any]) -> dict[str, Any]:
    payload = entry["protoPayload"]
    if not isinstance(payload, dict):
        raise BadEntry(f"protoPayload is a JSON {type(payload).__name__}, not an AuditLog")
    kind, service = payload.get(TYPE), payload.get("serviceName")
    kubernetes = _str(payload, "methodName").startswith(METHOD_PREFIX)
    if kind != AUDIT_LOG and not (kind is None and kubernetes):
        raise BadEntry(f"protoPayload is a {kind!r}, not an AuditLog ({AUDIT_LOG})")
    if service != SERVICE and not (service is None and kubernetes):
        raise BadEntry(f"an audit entry of {service!r}, not of the Kubernetes API ({SERVICE!r})")
    return payload


def _verb(method: str) -> str:
    """`create` of `io.k8s.core.v1.pods.create` (KHI's parseVerb, falco's getVerb); `get`
    of `io.k8s.get`, a non-resource request's (`/readyz`: the method's name in lower
    case, as the API server's verb for it is)."""
    if not method.startswith(METHOD_PREFIX) or method.count(".") < 2:
        raise BadEntry(f"methodName {method!r} is no Kubernetes method (io.k8s.GROUP...VERB)")
    return method.rsplit(".", 1)[1]


def _path(resource_name: str, method: str = "") -> str:
    """`/api/v1/namespaces/default/pods/x` of `core/v1/namespaces/default/pods/x`; `/readyz`
    of a non-resource request's `readyz` (its method `io.k8s.VERB`: GKE's health checks
    of `readyz`, `livez`, `version` are logged so)."""
    if method.count(".") == 2 and resource_name and " " not in resource_name:
        return "/" + resource_name.lstrip("/")
    parts = resource_name.split("/")
    if len(parts) < 3 or not all(parts):
        raise BadEntry(f"resourceName {resource_name!r} is no GROUP/VERSION/RESOURCE path")
    group, version, rest = parts[0], parts[1], "/".join(parts[2:])
    prefix = f"/api/{version}" if group == "core" else f"/apis/{group}/{version}"
    return f"{prefix}/{rest}"


def _object(payload: dict[str, Any], key: str) -> tuple[Any, str]:
    """The request or response object without the `@type` GKE adds, and that type."""
    value = payload[key]
    if not isinstance(value, dict) or TYPE not in value:
        return value, ""
    kind = value[TYPE]
    return {k: v for k, v in value.items() if k != TYPE}, str(kind)


def _status(payload: dict[str, Any], response: Any) -> tuple[int, str]:
    """The HTTP status, and, when it is the google.rpc code's mapping, what that was."""
    if isinstance(response, dict) and response.get("kind") in STATUS_KINDS:
        code = response.get("code")
        if isinstance(code, int) and not isinstance(code, bool) and 100 <= code <= 999:
            return code, ""
    rpc = _dict(payload.get("status")).get("code", 0)
    if not isinstance(rpc, int) or isinstance(rpc, bool) or rpc not in RPC_HTTP:
        raise BadEntry(f"status.code {rpc!r} is no google.rpc code (0 to 16)")
    http = RPC_HTTP[rpc]
    return http, f"the HTTP status ({http} is google.rpc code {rpc}'s HTTP mapping)"


def _level(payload: dict[str, Any]) -> str:
    if payload.get("response") is not None:
        return "RequestResponse"
    return "Request" if payload.get("request") is not None else "Metadata"


def _object_ref(uri: str) -> dict[str, str]:
    """The objectRef of the request's path (what the path names is the same whatever the
    method)."""
    info = parse_request("GET", uri)
    ref = {
        "resource": info.resource,
        "namespace": info.namespace,
        "name": info.name,
        "apiGroup": info.group,
        "apiVersion": info.version,
        "subresource": info.subresource,
    }
    return {k: v for k, v in ref.items() if v}


def _cloud(entry: dict[str, Any], payload: dict[str, Any], types: dict[str, str]) -> dict[str, Any]:
    """What the entry says beyond an audit Event, kept in the record's `audit` field."""
    entry_keys = ("logName", "insertId", "timestamp", "receiveTimestamp", "resource", "operation")
    cloud: dict[str, Any] = {k: entry[k] for k in entry_keys if k in entry}
    for key in ("methodName", "resourceName", "status", "authorizationInfo", "metadata"):
        if key in payload:
            cloud[key] = payload[key]
    cloud.update(types)
    return cloud


def event_of(entry: dict[str, Any]) -> dict[str, Any]:
    """The audit.k8s.io Event a GKE Kubernetes audit entry stands for (module docstring)."""
    payload = _payload(entry)
    verb = _verb(_str(payload, "methodName"))
    labels = entry.get("labels")
    method = _str(payload, "methodName")
    uri = _uri(verb, _str(payload, "resourceName"), _dict(labels), method)
    audit_id, stage = _operation(entry)
    when = _time(entry, payload)
    event: dict[str, Any] = {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": _level(payload),
        "auditID": audit_id,
        "stage": stage,
        "requestURI": uri,
        "verb": verb,
        "requestReceivedTimestamp": when,
        "stageTimestamp": when,
    }
    if not audit_id:
        del event["auditID"]  # the importer makes one of the content (`audit.normalised`)
    if not when:
        del event["requestReceivedTimestamp"], event["stageTimestamp"]
    _people(event, payload)
    types: dict[str, str] = {}
    for key, field in (("request", "requestObject"), ("response", "responseObject")):
        if payload.get(key) is not None:
            event[field], kind = _object(payload, key)
            if kind:
                types[f"{key}Type"] = kind
    code, derived = _status(payload, event.get("responseObject"))
    event["responseStatus"] = _response_status(payload, code)
    if isinstance(labels, dict):
        event["annotations"] = labels
    event["objectRef"] = _object_ref(uri)
    cloud = _cloud(entry, payload, types)
    cloud["absent"] = ALWAYS_ABSENT + ([derived] if derived else []) + _truncated(labels)
    event[CLOUD] = cloud
    return event


def _uri(verb: str, resource_name: str, labels: dict[str, Any], method: str = "") -> str:
    """The request URI: the path of `resourceName`, and the query parameters the entry
    says otherwise: a watch's `watch`, a dry run's `dryRun` (the `command.gke.io/dryRun`
    label, which KHI reads as one)."""
    query = ["watch=true"] if verb == "watch" else []
    if labels.get(DRY_RUN):
        query.append("dryRun=All")
    return _path(resource_name, method) + (f"?{'&'.join(query)}" if query else "")


def _operation(entry: dict[str, Any]) -> tuple[str, str]:
    """The auditID (`operation.id`, else `insertId`: the same value in an entry of its own)
    and the stage: ResponseStarted for the first of two entries of a request
    (`operation.first` and not `.last`), else ResponseComplete. Two entries of one request
    (KHI reads `first` and `last` apart) are then one exchange, and an entry a sink wrote
    twice is ignored the second time, as a stage seen twice is."""
    operation = _dict(entry.get("operation"))
    audit_id = _str(operation, "id") or _str(entry, "insertId")  # none: made of the content
    first, last = (str(operation.get(k)).lower() for k in ("first", "last"))
    return audit_id, "ResponseStarted" if (first, last) == ("true", "false") else "ResponseComplete"


def _time(entry: dict[str, Any], payload: dict[str, Any]) -> str:
    """The entry's `timestamp` (or, in an export that dropped it, the AuditLog's own),
    checked: RFC 3339 (Cloud Logging writes nanoseconds)."""
    when = _str(entry, "timestamp") or _str(payload, "timestamp")
    if not when:
        return ""  # the importer takes the file's time, said (`audit.normalised`)
    try:
        dt.datetime.fromisoformat(when)
    except ValueError:
        raise BadEntry(f"timestamp {when!r} is not an RFC 3339 time") from None
    return when


def _people(event: dict[str, Any], payload: dict[str, Any]) -> None:
    """The user, source IP and user agent, where the entry has them."""
    email = _str(_dict(payload.get("authenticationInfo")), "principalEmail")
    event["user"] = {"username": email} if email else {}
    metadata = _dict(payload.get("requestMetadata"))
    if ip := _str(metadata, "callerIp"):
        event["sourceIPs"] = [ip]
    if agent := _str(metadata, "callerSuppliedUserAgent"):
        event["userAgent"] = agent


def _response_status(payload: dict[str, Any], code: int) -> dict[str, Any]:
    status: dict[str, Any] = {"metadata": {}, "code": code}
    message = _str(_dict(payload.get("status")), "message")
    if message:
        status["message"] = message
    return status


def _truncated(labels: Any) -> list[str]:
    """GKE cut the objects short (the `audit.k8s.io/truncated` annotation: KHI reads it)."""
    if isinstance(labels, dict) and str(labels.get("audit.k8s.io/truncated")).lower() == "true":
        return ["the whole request and response objects (audit.k8s.io/truncated)"]
    return []
