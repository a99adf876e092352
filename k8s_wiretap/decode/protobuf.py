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
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, TypeVar, cast

from k8s_wiretap.decode.proto_compile import plan_for
from k8s_wiretap.decode.proto_errors import DecodeError
from k8s_wiretap.decode.proto_schemaless import decode_schemaless as _schemaless
from k8s_wiretap.decode.proto_special import SpecialPlan
from k8s_wiretap.kube import schema
from k8s_wiretap.wire.envelope import MAGIC, is_protobuf

__all__ = [
    "SCHEMALESS",
    "WATCH_EVENT",
    "DecodeError",
    "decode_object",
    "decode_schemaless",
    "decode_watch_event",
    "render_message",
]

SCHEMALESS = "$schemaless"
# The envelope, runtime.Unknown {typeMeta = 1, raw = 2, contentEncoding = 3, contentType = 4},
# read with the schema's own plans: typeMeta is runtime.TypeMeta {apiVersion = 1, kind = 2}.
UNKNOWN = "k8s.io.apimachinery.pkg.runtime.Unknown"
RUNTIME_TYPE_META = "k8s.io.apimachinery.pkg.runtime.TypeMeta"
WATCH_EVENT = "k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent"
# What a damaged body can make the reading code trip over besides DecodeError (reading past
# the end of the buffer, mostly), reported as DecodeError.
_BROKEN = (IndexError, struct.error, OverflowError)
T = TypeVar("T")


def _guarded(function: Callable[..., T], *args: Any) -> T:
    try:
        return function(*args)
    except DecodeError:
        raise
    except RecursionError:
        raise DecodeError("nested too deeply") from None
    except _BROKEN as error:
        reason = "truncated" if isinstance(error, IndexError) else str(error)[:80]
        raise DecodeError(reason or type(error).__name__) from None


def _object(data: bytes, api_version: str, kind: str) -> dict[str, Any]:
    if not is_protobuf(data):
        raise DecodeError("no k8s\\0 magic")
    envelope = cast(SpecialPlan, plan_for(UNKNOWN))
    slots = envelope.parse(data, len(MAGIC), len(data))[0]
    type_meta, raw, encoding = (envelope.field(slots, number) for number in (1, 2, 3))
    if type_meta is not None:
        meta = plan_for(RUNTIME_TYPE_META).parse(*type_meta)[0]  # slots in Go order
        api_version, kind = meta[0] or api_version, meta[1] or kind
    if encoding:
        raise DecodeError(f"content encoding {encoding!r} is not supported")
    raw = raw or b""
    name = schema.lookup_kind(api_version, kind)
    if name is None:
        return {"kind": kind, "apiVersion": api_version, SCHEMALESS: True, **_schemaless(raw)}
    result: dict[str, Any] = plan_for(name).decode_object(raw, 0, len(raw), (kind, api_version))
    return result


def decode_object(data: bytes, *, api_version: str = "", kind: str = "") -> dict[str, Any]:
    """An enveloped body (or etcd value) → the JSON-equivalent object, kind and apiVersion first.

    `api_version` and `kind` stand in for an envelope that leaves them empty (an object without
    TypeMeta, such as a WatchEvent), as the default kind given to Go's protobuf serializer does.
    """
    return _guarded(_object, bytes(data), api_version, kind)


def render_message(full_name: str, raw: bytes) -> Any:
    """The JSON value of one message of type `full_name` (no envelope)."""
    raw = bytes(raw)
    return _guarded(lambda: plan_for(full_name).decode(raw, 0, len(raw)))


def decode_watch_event(frame: bytes) -> dict[str, Any]:
    """One frame of a protobuf watch stream (a WatchEvent, no magic) → {"type", "object"}."""
    event = render_message(WATCH_EVENT, frame)
    if not isinstance(event, dict):
        raise DecodeError("not a watch event")
    return event


def decode_schemaless(raw: bytes) -> dict[str, Any]:
    """Any message without a schema: {"<field number>": value or [values]}."""
    return _guarded(_schemaless, bytes(raw))
