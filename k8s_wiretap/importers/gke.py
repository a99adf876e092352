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
audit log), and what it writes for
non-resource requests (`/healthz`): a `resourceName` that is no GROUP/VERSION/RESOURCE path
is skipped, never guessed at.

An entry that is no Kubernetes audit entry (another service's AuditLog, such as
`container.googleapis.com`'s cluster operations, or no AuditLog at all), or one without what
an exchange needs, raises `BadEntry`; the importer skips its line and says why.

A file whose first line is `[` alone is one JSON array, as `gcloud logging read
--format=json` prints it (google-cloud-sdk googlecloudsdk/core/resource/json_printer.py:
`[`, each entry indented, `,` between them, `]`): `numbered` gives each item with the line
it starts on. Any other file is one JSON value a line, as sinks write their hourly files to
Cloud Storage (https://cloud.google.com/logging/docs/export/storage names them,
`08:00:00_08:59:59_S0.json`; a user's sample of one, allinurl/goaccess issue 1192, is one
compact entry a line). Entries
routed to Pub/Sub are the LogEntry as JSON, a message each (falco's k8saudit-gke unmarshals
them so): written one a line, they read the same.
"""

from __future__ import annotations

import codecs
import datetime as dt
import io
import json
import re
from collections.abc import Iterator
from typing import IO, Any

from k8s_wiretap.capture.format import QUERY_ABSENT
from k8s_wiretap.importers import limits
from k8s_wiretap.importers.limits import Limits
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
WS = b" \t\r\n"
TOO_DEEP = "an item of the JSON array is nested too deep to read"
# A line (or an item of a gcloud array) read at most: a larger one is skipped, said, and
# reading goes on (the array's: ends), in bounded memory (`Limits.max_line`).
MAX_LINE = limits.MAX_LINE
BLANKS = re.compile(rb"[ \t\r\n]*")  # a run of blank lines (and the white space of one)
CHUNK = 1 << 20  # bytes read at a time
DECODER = json.JSONDecoder()


class BadEntry(ValueError):
    """A Cloud Logging entry that is no usable Kubernetes audit entry; the message says why."""


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
    kind = payload.get(TYPE)
    if kind != AUDIT_LOG:
        raise BadEntry(f"protoPayload is a {kind!r}, not an AuditLog ({AUDIT_LOG})")
    service = payload.get("serviceName")
    if service != SERVICE:
        raise BadEntry(f"an audit entry of {service!r}, not of the Kubernetes API ({SERVICE!r})")
    return payload


def _verb(method: str) -> str:
    """`create` of `io.k8s.core.v1.pods.create` (KHI's parseVerb, falco's getVerb)."""
    if not method.startswith(METHOD_PREFIX) or method.count(".") < 3:
        raise BadEntry(f"methodName {method!r} is no Kubernetes method (io.k8s.GROUP...VERB)")
    return method.rsplit(".", 1)[1]


def _path(resource_name: str) -> str:
    """`/api/v1/namespaces/default/pods/x` of `core/v1/namespaces/default/pods/x`."""
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
    uri = _uri(verb, _str(payload, "resourceName"), _dict(labels))
    audit_id, stage = _operation(entry)
    when = _time(entry)
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


def _uri(verb: str, resource_name: str, labels: dict[str, Any]) -> str:
    """The request URI: the path of `resourceName`, and the query parameters the entry
    says otherwise: a watch's `watch`, a dry run's `dryRun` (the `command.gke.io/dryRun`
    label, which KHI reads as one)."""
    query = ["watch=true"] if verb == "watch" else []
    if labels.get(DRY_RUN):
        query.append("dryRun=All")
    return _path(resource_name) + (f"?{'&'.join(query)}" if query else "")


def _operation(entry: dict[str, Any]) -> tuple[str, str]:
    """The auditID (`operation.id`, else `insertId`: the same value in an entry of its own)
    and the stage: ResponseStarted for the first of two entries of a request
    (`operation.first` and not `.last`), else ResponseComplete. Two entries of one request
    (KHI reads `first` and `last` apart) are then one exchange, and an entry a sink wrote
    twice is ignored the second time, as a stage seen twice is."""
    operation = _dict(entry.get("operation"))
    audit_id = _str(operation, "id") or _str(entry, "insertId")
    if not audit_id:
        raise BadEntry("an entry without an insertId or operation.id (the request's auditID)")
    first, last = (str(operation.get(k)).lower() for k in ("first", "last"))
    return audit_id, "ResponseStarted" if (first, last) == ("true", "false") else "ResponseComplete"


def _time(entry: dict[str, Any]) -> str:
    """The entry's `timestamp`, checked: RFC 3339 (Cloud Logging writes nanoseconds)."""
    when = _str(entry, "timestamp")
    if not when:
        raise BadEntry("an entry without a timestamp")
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


# -- a gcloud JSON array, or JSON lines ---------------------------------------------------
def numbered(
    stream: IO[bytes], bounds: Limits = limits.DEFAULT
) -> Iterator[tuple[int, bytes | BadEntry]]:
    """The values of a log with their line numbers: each line of a file of JSON lines, or
    each item of a file that is one JSON array laid out as gcloud prints it (its first line
    is `[` alone, which no line of JSON lines is: a line there is a whole value), numbered
    by the line it starts on. Either is read a part at a time, in memory bounded by
    `bounds` (`_lines`, `_items`); blank lines are passed over, a buffer at a time. Where
    the array cannot be read on, a `BadEntry` says why, and reading ends."""
    first, newline, _ = _peek(stream).partition(b"\n")
    if not newline or first.strip(WS) != b"[":
        yield from _lines(stream, 1, bounds)
        return
    yield from _items(_Window(stream, bounds), bounds)


def _peek(stream: IO[bytes]) -> bytes:
    peek = getattr(stream, "peek", None)
    return bytes(peek(256)) if peek is not None else b""


def _lines(
    stream: IO[bytes], number: int, bounds: Limits
) -> Iterator[tuple[int, bytes | BadEntry]]:
    """Each line of `stream` but the blank ones, numbered from `number`; a line longer
    than `bounds.max_line` (the rest of it read past, a chunk at a time, never held), or
    of more JSON values than `bounds.max_values`, is a `BadEntry` with its size, and
    reading goes on at the next."""
    longest = bounds.max_line
    while line := stream.readline(longest + 1):
        if len(line) > longest and not line.endswith(b"\n"):
            size = len(line)
            while (rest := stream.readline(CHUNK)) and not rest.endswith(b"\n"):
                size += len(rest)
            size += len(rest.rstrip(b"\r\n"))
            said = f"the line is {size:,} bytes, longer than {longest:,}: not read"
            yield number, BadEntry(said)
        elif not line.strip(WS):
            number += _blanks(stream)
        elif len(line) > bounds.max_values and limits.values(line) > bounds.max_values:
            yield number, BadEntry(_too_many("the line", len(line), bounds))
        else:
            yield number, line
        number += 1


def _too_many(what: str, size: int, bounds: Limits) -> str:
    return (
        f"{what} ({size:,} bytes) holds more than {bounds.max_values:,} JSON values (by "
        "its commas and brackets): not read"
    )


def _blanks(stream: IO[bytes]) -> int:
    """Read past the blank lines (and white space) that come next, a buffer at a time, not
    a line at a time; how many line ends were passed."""
    peek = getattr(stream, "peek", None)
    passed = 0
    while peek is not None and (ahead := peek(CHUNK)):
        end = BLANKS.match(ahead).end()  # type: ignore[union-attr]  # `*`: always a match
        if not end:
            break
        passed += ahead.count(b"\n", 0, end)
        stream.read(end)
    return passed


def _items(window: _Window, bounds: Limits) -> Iterator[tuple[int, bytes | BadEntry]]:
    """The items of the array the window starts with, then what follows its `]`, a line
    at a time (a JSON value there is read as a line of a JSON-lines file would be)."""
    pos, first, end_line = window.skip(window.skip(0) + 1), True, 1
    while not window.text.startswith("]", pos):
        if not first and not window.text.startswith(",", pos):
            where = window.line(pos) if pos < len(window.text) else end_line  # at the end: the last
            yield where, BadEntry(f"after an item of the JSON array, {_cut(window.text, pos)}")
            return
        pos, first = window.skip(pos + (0 if first else 1)), False
        found = _item(window, pos, bounds)
        if isinstance(found, BadEntry):  # at the end of the file: said at its last line
            at = window.start
            yield (window.line(at) if at < len(window.text) else end_line), found
            return
        pos, end = window.start, found
        yield window.line(pos), window.text[pos:end].encode("utf-8", "surrogateescape")
        end_line = window.line(end)
        pos = window.skip(end)
    number = window.line(pos)  # the `]`'s line: what follows it on that line is its rest
    yield from _lines(window.rest(pos + 1), number, bounds)


def _item(window: _Window, pos: int, bounds: Limits) -> int | BadEntry:
    """Where the JSON value at `pos` ends (read on as far as it needs, up to
    `bounds.max_line`; its start is `window.start` after), or why it cannot be read. What
    is parsed never makes more than `bounds.max_values` values (`_parsed`)."""
    window.start, longest = pos, bounds.max_line
    while True:
        held = len(window.text) - window.start
        try:
            end = _parsed(window, bounds)
            if end is None:
                return BadEntry(
                    f"an item of the JSON array holds more than {bounds.max_values:,} JSON "
                    "values (by its commas and brackets); the rest unread"
                )
            if end - window.start > longest:
                break
            if end < len(window.text) or window.eof:  # a number may go on past the window
                return end
        except ValueError as error:
            if window.eof:
                return BadEntry(f"an item of the JSON array is not JSON ({error}); the rest unread")
        except RecursionError:
            return BadEntry(f"{TOO_DEEP}; the rest unread")
        if held > longest:
            break
        window.more()
    return BadEntry(
        f"an item of the JSON array is longer than {longest:,} characters; the rest unread"
    )


def _parsed(window: _Window, bounds: Limits) -> int | None:
    """Where the value at `window.start` ends, parsed (ValueError when the text held does
    not end it); None when it holds more than `bounds.max_values` values. Only text of at
    most that many is parsed: the longest such stretch from the start, when the window
    holds more (what follows the item too), and the value must end inside it."""
    text, start, most = window.text, window.start, bounds.max_values
    if len(text) - start <= most or limits.values(text, start) <= most:
        return int(DECODER.raw_decode(text, start)[1])
    low, high = 0, len(text) - start  # values(low) <= most < values(high)
    while high - low > 1:
        middle = (low + high) // 2
        if limits.values(text, start, start + middle) <= most:
            low = middle
        else:
            high = middle
    try:
        end = int(DECODER.raw_decode(text[: start + low], start)[1])
    except ValueError:
        return None
    return end if end < start + low else None  # at the cut, the value may go on


def _cut(text: str, pos: int) -> str:
    if pos == len(text):
        return "the file ends without the array's ] (cut short?)"
    return f"neither , nor ] but {text[pos]!r}; the rest unread"


class _Window:
    """A stream's text, read as it is asked for: a chunk at a time (more as an item needs:
    twice what is held), what lies before `start` dropped when reading on. Places in
    `text` move back by what is dropped: `skip` and `_item` give them anew."""

    def __init__(self, stream: IO[bytes], bounds: Limits) -> None:
        self.stream, self.text, self.start, self.eof = stream, "", 0, False
        self._longest = bounds.max_line
        self._decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
        self._line, self._counted = 1, 0  # the line number at `_counted`

    def line(self, pos: int) -> int:
        """The line number of `pos` (asked in order, never before `start`)."""
        self._line += self.text.count("\n", self._counted, pos)
        self._counted = pos
        return self._line

    def more(self) -> None:
        """Read on (`eof` at the end), dropping the text before `start` (then 0)."""
        self.line(self.start)
        held = len(self.text) - self.start
        data = b"" if self.eof else self.stream.read(max(CHUNK, min(held, self._longest)))
        self.eof = not data
        self.text = self.text[self.start :] + self._decoder.decode(data, final=self.eof)
        self._counted, self.start = 0, 0

    def skip(self, pos: int) -> int:
        """The place of the first character from `pos` on that is no white space (the
        text's end when none is left); reads on as it needs."""
        while True:
            while pos < len(self.text) and self.text[pos] in " \t\r\n":
                pos += 1
            if pos < len(self.text) or self.eof:
                return pos
            self.start = pos
            self.more()
            pos = 0

    def rest(self, pos: int) -> IO[bytes]:
        """The stream from `pos` of the text on (what is held, then what is unread)."""
        self.line(pos)
        held = self.text[pos:].encode("utf-8", "surrogateescape") + self._decoder.getstate()[0]
        return io.BufferedReader(_Joined(held, self.stream))


class _Joined(io.RawIOBase):
    """`head`, then `stream`: one stream."""

    def __init__(self, head: bytes, stream: IO[bytes]) -> None:
        self._head, self._stream = memoryview(head), stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n], self._head = self._head[:n], self._head[n:]
            return n
        data = self._stream.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)
