"""Kubernetes protobuf bodies as the API server's JSON of the same object.

    decode_object(body)           k8s\\0 envelope → {"kind", "apiVersion", ...} in Go field order
    decode_watch_event(frame)     one watch frame (meta/v1 WatchEvent) → {"type", "object"}
    render_message(name, raw)     one message by full name (e.g. "k8s.io.api.core.v1.Pod")
    decode_schemaless(raw)        any message without a schema, keyed by field number

The result equals what the API server writes as JSON for the object: keys in Go struct order,
omitempty and null as encoding/json does them, map keys sorted, []byte as base64, and the Go
types with their own JSON (times, quantities, int-or-strings, embedded raw JSON) rendered as
they render themselves. A kind the schema does not know decodes schemaless, marked with
"$schemaless": true; fields a message does not declare are kept under "$unknownFields".
Anything that is not such a body raises DecodeError, and nothing else.

Which schema: the server's release, named by `release=` (its `/version` gitVersion or a
minor, see k8s_wiretap.kube.schema.release_for), on every function here; without one, the
newest release's. Releases render the same bytes differently, not only in the kinds and
fields they know: from 1.34 an unset creationTimestamp is left out rather than null,
omitempty changed on some fields, others were removed (kube/schema/__init__.py lists them,
with the measurements that chose one schema per release).

The modules below this one, in the order they build on each other: the wire reader
(k8s_wiretap.wire.protowire, and wire/envelope.py for the `k8s\\0` envelope), Go's scalars
(proto_scalars), schemaless reading (proto_schemaless), plans and their hot loop (proto_plan),
maps (proto_map), the Go types with their own JSON (proto_special, proto_gotime, and
k8s_wiretap.kube.quantity), the compiler and the object decoder (proto_compile). None imports
one above it: nested objects reach the object decoder through the plans (proto_compile.py).

DecodeError is ProtoError, the wire reader's error: one class, under the name the decoder's
callers know. Most reasons to refuse a body are found by the wire reader (a truncated varint,
a length past the end, a bad wire type), which sits below decode and serves redaction and
gnostic too; the rest (an IntOrString of type 7, JSON that does not parse) by the decoder.
With one class, `except DecodeError` catches both wherever they were raised, and the reader's
errors need no wrapping on their way up (a subclass would need every reader error translated,
in the hot loop, or else let ProtoError escape a decoder that promises DecodeError).
"""

from __future__ import annotations

from typing import Any

from k8s_wiretap.decode.proto_compile import SCHEMALESS, compiled, guarded
from k8s_wiretap.decode.proto_schemaless import decode_schemaless as _schemaless
from k8s_wiretap.kube.release import ReleaseLike
from k8s_wiretap.wire.protowire import ProtoError

__all__ = [
    "SCHEMALESS",
    "WATCH_EVENT",
    "DecodeError",
    "decode_object",
    "decode_schemaless",
    "decode_watch_event",
    "render_message",
]

DecodeError = ProtoError
WATCH_EVENT = "k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent"


def decode_object(
    data: bytes, *, api_version: str = "", kind: str = "", release: ReleaseLike = None
) -> dict[str, Any]:
    """An enveloped body (or etcd value) → the JSON-equivalent object, kind and apiVersion first.

    `api_version` and `kind` stand in for an envelope that leaves them empty (an object without
    TypeMeta, such as a WatchEvent), as the default kind given to Go's protobuf serializer does.
    `release` is the server's: its gitVersion ("v1.29.3") or minor ("1.29"); None: the newest
    (a `release` that names no Kubernetes 1.x release is the caller's mistake: ValueError).
    """
    decoder = compiled(release)
    result: dict[str, Any] = guarded(decoder.decode_envelope, bytes(data), api_version, kind)
    return result


def render_message(full_name: str, raw: bytes, *, release: ReleaseLike = None) -> Any:
    """The JSON value of one message of type `full_name` (no envelope)."""
    raw = bytes(raw)
    plan_for = compiled(release).plan_for
    return guarded(lambda: plan_for(full_name).decode(raw, 0, len(raw)))


def decode_watch_event(frame: bytes, *, release: ReleaseLike = None) -> dict[str, Any]:
    """One frame of a protobuf watch stream (a WatchEvent, no magic) → {"type", "object"}."""
    event = render_message(WATCH_EVENT, frame, release=release)
    if not isinstance(event, dict):
        raise DecodeError("not a watch event")
    return event


def decode_schemaless(raw: bytes, *, release: ReleaseLike = None) -> dict[str, Any]:
    """Any message without a schema: {"<field number>": value or [values]} (a nested `k8s\\0`
    object in it is decoded with `release`'s schema)."""
    return guarded(_schemaless, bytes(raw), compiled(release).nested_object)
