"""The API server's own shapes, and the wrappers log shippers and stores put them in.

The API server's (k8s.io/apiserver pkg/apis/audit/v1/types.go; v1beta1 and v1alpha1 in
the same folder of older releases): an `Event` (the log backend's line, `--audit-log-path`);
an `EventList` (the webhook backend's POST body), or a batch of `items` without `kind` or
`apiVersion` (as some webhook receivers store it). audit.k8s.io v1beta1 and v1alpha1 events
are Events too: what they hold otherwise (`timestamp`, `metadata.creationTimestamp`) is
mapped by the importer (`audit.normalised`).

Wrappers, each a shape of its own (the inner value may be any shape):

- `log`: Docker's json-file log and Fluent Bit's tail input
  (https://docs.fluentbit.io/manual/pipeline/inputs/tail), the line as a string (with its
  newline) or, parsed by a filter, as an object;
- `message`: Vector's file source (https://vector.dev/docs/reference/configuration/sources/file/),
  Filebeat's log input (https://www.elastic.co/guide/en/beats/filebeat/current/filebeat-input-log.html),
  syslog shippers;
- `msg`: logfmt and zap-style shippers;
- a JSON array a line (`jq -c -s`): its items;
- `properties.log`: cloud exports that nest the line under `properties` (Azure's, below);
- Loki's `logcli query --output jsonl` (https://grafana.com/docs/loki/latest/query/logcli/):
  `{"labels": {...}, "line": "<the line>", "timestamp": "..."}`;
- an Elasticsearch export (elasticdump, a search's hits): `_source` holds the document;
- Elastic's Kubernetes audit logs integration
  (https://www.elastic.co/docs/reference/integrations/kubernetes/audit-logs; its ingest
  pipeline's expected output, elastic/integrations packages/kubernetes/data_stream/audit_logs/
  _dev/test/pipeline): the line read, whole, in `event.original` when kept; else the
  Event's fields under `kubernetes.audit` (nested objects, or dotted keys as `_source` may
  hold them), without empty fields and `responseStatus.metadata`, annotation keys' dots
  written `_` (made `.` again); the time, when the Event's own are not kept, from
  `@timestamp`;
- ClickHouse `FORMAT JSONEachRow` (https://clickhouse.com/docs/interfaces/formats/JSONEachRow):
  one row an object, its columns its keys; a row whose column (any one) holds an Event's
  JSON, as a string or an object, is that Event.
"""

from __future__ import annotations

from typing import Any

from k8s_wiretap.importers.shapes.base import Shape, Unfit, lacks, nested, register, timed, took

__all__ = ["EVENT_KEYS"]

# An Event's fields, of every version (a value with three of them is taken for an Event)
EVENT_KEYS = frozenset(
    (
        "auditID",
        "stage",
        "verb",
        "requestURI",
        "level",
        "user",
        "sourceIPs",
        "objectRef",
        "requestReceivedTimestamp",
        "stageTimestamp",
        "responseStatus",
        "userAgent",
    )
)


def _event_score(value: Any) -> int:
    if not isinstance(value, dict):
        return 0
    if value.get("kind") == "Event":
        return 20
    found = sum(1 for key in EVENT_KEYS if key in value)
    return 10 + found if found >= 3 else 0


def _event(value: Any) -> list[Any]:
    return [value]


register(Shape("audit.k8s.io Events", _event_score, _event, "Kubernetes"))


def _array_score(value: Any) -> int:
    return 1 if isinstance(value, list) else 0


def _array(value: Any) -> list[Any]:
    """A JSON array on one line (`jq -c -s`, a store's export): its items, each an object
    in any shape."""
    if not value:
        raise Unfit("an empty JSON array")
    events: list[Any] = []
    for n, item in enumerate(value):
        if not isinstance(item, dict):
            raise Unfit(
                f"a JSON array whose item {n} is a JSON {type(item).__name__}, not an object"
            )
        events.extend(nested(item, f"the array's item {n}"))
    return events


register(Shape("JSON arrays of audit values, one a line", _array_score, _array, "Kubernetes"))


def _list_score(value: Any) -> int:
    if not isinstance(value, dict):
        return 0
    if value.get("kind") == "EventList":
        return 20
    items = value.get("items")
    return 15 if "kind" not in value and isinstance(items, list) else 0


def _list(value: Any) -> list[Any]:
    items = value.get("items")
    if not isinstance(items, list):
        raise Unfit("an EventList without a list of items")
    return items


register(Shape("audit.k8s.io EventLists (webhook batches)", _list_score, _list, "Kubernetes"))


def _wrapper(key: str, name: str, score: int) -> None:
    def scored(value: Any) -> int:
        return score if isinstance(value, dict) and key in value else 0

    def events(value: Any) -> list[Any]:
        if key not in value:
            raise Unfit(f"no {key}")
        return nested(value[key], f"the value under {key}")

    register(Shape(name, scored, events, "shippers"))


_wrapper("log", "a shipper's lines under log (Docker json-file, Fluent Bit, Fluentd)", 5)
_wrapper("message", "a shipper's lines under message (Vector, Filebeat, syslog)", 4)
_wrapper("msg", "a shipper's lines under msg", 3)
_wrapper("_source", "an Elasticsearch export (_source)", 6)


def _properties_score(value: Any) -> int:
    if not isinstance(value, dict):
        return 0
    properties = value.get("properties")
    return 5 if isinstance(properties, dict) and "log" in properties else 0


def _properties(value: Any) -> list[Any]:
    properties = value.get("properties")
    if not isinstance(properties, dict) or "log" not in properties:
        raise Unfit("no properties.log")
    return nested(properties["log"], "properties.log")


register(
    Shape("an export's lines under properties.log", _properties_score, _properties, "shippers")
)


def _loki_score(value: Any) -> int:
    if isinstance(value, dict) and "line" in value and "labels" in value:
        return 9
    return 0


def _loki(value: Any) -> list[Any]:
    if "line" not in value:
        raise Unfit("a Loki entry without its line")
    return timed(nested(value["line"], "Loki's line"), value.get("timestamp"), "Loki's timestamp")


register(Shape("Loki logcli --output jsonl", _loki_score, _loki, "stores"))


def _elastic_audit(value: dict[str, Any]) -> Any:
    """The `kubernetes.audit` object of an Elastic document: nested, or dotted keys."""
    kubernetes = value.get("kubernetes")
    if isinstance(kubernetes, dict) and isinstance(kubernetes.get("audit"), dict):
        return kubernetes["audit"]
    prefix = "kubernetes.audit."
    if not any(key.startswith(prefix) for key in value):
        return value.get("kubernetes.audit")
    audit: dict[str, Any] = {}
    for key, item in value.items():
        if key.startswith(prefix):
            _put(audit, key[len(prefix) :].split("."), item)
    return audit


def _put(into: dict[str, Any], path: list[str], value: Any) -> None:
    for part in path[:-1]:
        into = into.setdefault(part, {}) if isinstance(into.get(part, {}), dict) else {}
    into[path[-1]] = value


def _elastic_score(value: Any) -> int:
    return 12 if isinstance(value, dict) and _elastic_audit(value) is not None else 0


def _original(value: dict[str, Any]) -> Any:
    """`event.original`: the line Elastic read, when its pipeline kept it."""
    event = value.get("event")
    original = event.get("original") if isinstance(event, dict) else value.get("event.original")
    return original if isinstance(original, str) and original.lstrip().startswith("{") else None


def _annotations(annotations: Any) -> Any:
    """Annotations with their keys as the API server wrote them: Elastic's pipeline writes
    the dots of a key's prefix as `_` (`authorization_k8s_io/decision`)."""
    if not isinstance(annotations, dict):
        return annotations
    keys = {}
    for key, item in annotations.items():
        prefix, slash, name = str(key).partition("/")
        keys[prefix.replace("_", ".") + slash + name if slash else key] = item
    return keys


def _elastic(value: Any) -> list[Any]:
    """The Event of an Elastic document: the line it was read from (`event.original`),
    whole, when the pipeline kept it; else the `kubernetes.audit` fields (less: the pipeline
    drops empty fields and `responseStatus.metadata`, renames annotation keys)."""
    original = _original(value)
    if original is not None:
        try:
            events = nested(original, "event.original")
        except Unfit:
            events = []
        for event in events:
            if isinstance(event, dict):
                took(event, "the Event", "event.original (the line Elastic read)")
        if events:
            return events
    audit = _elastic_audit(value)
    if not isinstance(audit, dict):
        raise Unfit("kubernetes.audit is no object")
    event = dict(audit)
    if "annotations" in event:
        event["annotations"] = _annotations(event["annotations"])
        took(event, "annotations", "kubernetes.audit.annotations, keys' _ made . again")
    stamp = value.get("@timestamp")
    for key in ("requestReceivedTimestamp", "stageTimestamp"):
        if key not in event and isinstance(stamp, str):
            event[key] = stamp
            took(event, key, "@timestamp (the document's)")
    agent = value.get("user_agent")
    if "userAgent" not in event and isinstance(agent, dict) and "original" in agent:
        event["userAgent"] = agent["original"]
        took(event, "userAgent", "user_agent.original")
    source = value.get("source")
    if "sourceIPs" not in event and isinstance(source, dict) and "ip" in source:
        event["sourceIPs"] = [source["ip"]]
        took(event, "sourceIPs", "source.ip")
    lacks(event, "what Elastic's pipeline dropped (empty fields, responseStatus.metadata)")
    return [event]


register(
    Shape(
        "Elastic's Kubernetes audit documents (kubernetes.audit)",
        _elastic_score,
        _elastic,
        "stores",
    )
)


MARKS = ('"auditID"', '"requestURI"', '"objectRef"')  # in an Event's JSON, one at least


def _column(value: Any) -> str | None:
    """The column of a row that holds an Event (its JSON, or the object)."""
    if not isinstance(value, dict):
        return None
    for key, item in value.items():
        if isinstance(item, str) and item.startswith("{") and any(m in item for m in MARKS):
            return str(key)
        if isinstance(item, dict) and _event_score(item):
            return str(key)
    return None


def _row_score(value: Any) -> int:
    return 2 if _column(value) is not None else 0


def _row(value: Any) -> list[Any]:
    column = _column(value)
    if column is None:
        raise Unfit("a row with no column holding an Event")
    return nested(value[column], f"column {column}")


register(
    Shape("rows with an Event in a column (ClickHouse JSONEachRow)", _row_score, _row, "stores")
)
