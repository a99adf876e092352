"""Compile schema messages into plans (proto_plan.py), once each, on first use; decode objects.

One `Compiled` per Kubernetes release (`compiled(release)`: the schema of that release, see
k8s_wiretap.kube.schema), each with plans of its own. Asking it for one message compiles it
and every message it reaches (recursion included) in one go, under a lock, and publishes them
together: a plan another thread can see is complete.

`decode_envelope` decodes a whole `k8s\\0` object: the envelope (read by wire/envelope.py,
the one parser of it), its kind looked up in the release's schema, its raw message by that
kind's plan or schemaless. Objects nest (a RawExtension, an unknown field, holds another
envelope), so the compiler gives every plan `nested_object`, the same decoding as a guarded
call by the same release: the knot is tied here, by passing the decoder down, rather than by
modules importing each other back.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from k8s_wiretap.decode.proto_map import MapEntry
from k8s_wiretap.decode.proto_plan import (
    M_DEFAULT,
    M_INLINE,
    M_INLINE_PTR,
    M_MAP,
    M_MAP_NULL,
    M_MESSAGE,
    M_MESSAGE_NULL,
    M_MESSAGE_PTR,
    M_MESSAGE_SLICE,
    M_OMIT,
    M_OMIT_NULL,
    M_PRESENT,
    M_TYPE_META,
    OP_BOOL,
    OP_BYTES,
    OP_FIXED,
    OP_INT64,
    OP_MAP,
    OP_MESSAGE,
    OP_PACKED,
    OP_RAW_BYTES,
    OP_REP_BYTES,
    OP_REP_MESSAGE,
    OP_REP_STRING,
    OP_REP_VARINT,
    OP_STRING,
    OP_VARINT,
    Plan,
    Typed,
)
from k8s_wiretap.decode.proto_scalars import CONVERTERS, FIXED_LAYOUTS, ZERO
from k8s_wiretap.decode.proto_schemaless import decode_schemaless
from k8s_wiretap.decode.proto_special import (
    REPLACED_ON_DUPLICATE,
    SPECIALS,
    SlicePlan,
    SpecialPlan,
)
from k8s_wiretap.kube import schema
from k8s_wiretap.kube.release import Release, ReleaseLike
from k8s_wiretap.wire.envelope import unwrap_fields
from k8s_wiretap.wire.protowire import BYTES, FIXED32, FIXED64, VARINT, ProtoError

__all__ = ["SCHEMALESS", "Compiled", "compiled", "guarded"]

TYPE_META = "k8s.io.apimachinery.pkg.apis.meta.v1.TypeMeta"
# The API server's list handler sets a nil items to [] (setObjectSelfLink) before responses
# are transformed; a PartialObjectMetadataList is built after that, by appending: its empty
# items stay null.
ITEMS_STAY_NULL = {
    "k8s.io.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataList",
    "k8s.io.apimachinery.pkg.apis.meta.v1beta1.PartialObjectMetadataList",
}
SCHEMALESS = "$schemaless"
KIND_CACHE_LIMIT = 1024
RenderEntry = tuple[str, int, int, Any]

# What a damaged body can make the reading code trip over besides ProtoError, reported as
# ProtoError (the wire reader and the plans check bounds themselves; this is the safety net).
_BROKEN = (IndexError, struct.error, OverflowError)
T = TypeVar("T")


def guarded[T](function: Callable[..., T], *args: Any) -> T:
    """`function(*args)`, raising ProtoError and nothing else."""
    try:
        return function(*args)
    except ProtoError:
        raise
    except RecursionError:
        raise ProtoError("nested too deeply") from None
    except _BROKEN as error:
        reason = "truncated" if isinstance(error, IndexError) else str(error)[:80]
        raise ProtoError(reason or type(error).__name__) from None


class Compiled:
    """The plans of one release's schema, compiled on first use, and its object decoder.

    Each release has plans of its own: a message of the same name renders differently where
    releases differ (a field added, `omitzero` on creationTimestamp from 1.34), and a nested
    object (a RawExtension) is decoded by the same release as the object holding it.
    """

    def __init__(self, release: str) -> None:
        self.release = release
        self.messages = schema.messages(release)
        self._published: dict[str, Plan] = {}
        # (apiVersion, kind) → its plan: the schema's lookup, once per kind
        self._kinds: dict[tuple[str, str], Plan] = {}
        self._lock = threading.Lock()

    def plan_for(self, name: str) -> Plan:
        """The compiled plan of message `name`; ProtoError if the schema has no such message."""
        plan = self._published.get(name)
        if plan is None:
            with self._lock:
                plan = self._published.get(name) or self._compile(name)
        return plan

    def _compile(self, name: str) -> Plan:
        compiling: dict[str, Plan] = {}
        pending: list[str] = []

        def declare(full_name: str) -> Plan:
            known = self._published.get(full_name) or compiling.get(full_name)
            if known is not None:
                return known
            entry = self.messages.get(full_name)
            if entry is None:
                raise ProtoError(f"no message {full_name} in the {self.release} schema")
            special = entry.get("special")
            plan = SPECIALS[special](full_name) if special else Plan(full_name)
            plan.merge = special not in REPLACED_ON_DUPLICATE
            plan.nested = self.nested_object
            compiling[full_name] = plan
            pending.append(full_name)
            return plan

        root = declare(name)
        while pending:
            full_name = pending.pop()
            _fill(compiling[full_name], self.messages[full_name]["fields"], declare)
        self._published.update(compiling)
        return root

    def decode_envelope(self, data: bytes, api_version: str = "", kind: str = "") -> Any:
        """An enveloped object → its JSON form, kind and apiVersion first.

        `api_version` and `kind` stand in for an envelope that leaves them empty.
        """
        given_version, given_kind, raw, encoding, _content_type = unwrap_fields(data)
        api_version, kind = given_version or api_version, given_kind or kind
        if encoding:
            raise ProtoError(f"content encoding {encoding!r} is not supported")
        type_meta = (kind, api_version)
        plan = self._kinds.get(type_meta)
        if plan is None:
            name = schema.lookup_kind(api_version, kind, self.release)
            if name is None:
                fields = decode_schemaless(raw, self.nested_object)
                return {"kind": kind, "apiVersion": api_version, SCHEMALESS: True, **fields}
            plan = self._remember_kind(type_meta, self.plan_for(name))
        return plan.decode_object(raw, 0, len(raw), type_meta)

    def _remember_kind(self, type_meta: tuple[str, str], plan: Plan) -> Plan:
        """Keep the plan of a kind found (a bounded cache: any apiVersion with a meta.k8s.io
        kind such as Status finds one)."""
        if len(self._kinds) >= KIND_CACHE_LIMIT:
            self._kinds.clear()
        self._kinds[type_meta] = plan
        return plan

    def nested_object(self, raw: bytes) -> Any:
        """A `k8s\\0` object inside another (guarded: ProtoError and nothing else)."""
        return guarded(self.decode_envelope, raw)


_compiled: dict[Release | str, Compiled] = {}  # by the release asked for, and the chosen
_compiled_lock = threading.Lock()


def compiled(release: ReleaseLike = None) -> Compiled:
    """The decoder of the schema `release` stands for (kube.schema.release_for: a Release, a
    minor such as "1.29", a server's gitVersion such as "v1.29.3-gke.1", None for the
    newest)."""
    found = _compiled.get(release or "")
    if found is None:
        chosen = schema.release_for(release)
        with _compiled_lock:
            found = _compiled.get(chosen) or Compiled(chosen)
            _compiled[chosen] = _compiled[release or ""] = found
    return found


Declare = Callable[[str], Plan]
Target = Plan | Typed | None


def _target(field: dict[str, Any], declare: Declare) -> Target:
    """The plan of a message field: Typed when the server gives its elements a TypeMeta."""
    if field["type"] != "message":
        return None
    plan = declare(field["message"])
    type_meta = field.get("typeMeta")
    return Typed(plan, type_meta["kind"], type_meta["apiVersion"]) if type_meta else plan


def _is_list_items(plan: Plan, field: dict[str, Any]) -> bool:
    listed = field["json"] == "items" and field["go"] == "slice" and not field["omitempty"]
    return listed and plan.name not in ITEMS_STAY_NULL


def _fill(plan: Plan, fields: list[dict[str, Any]], declare: Declare) -> None:
    render: list[RenderEntry] = []
    for slot, field in enumerate(fields):
        target = _target(field, declare)
        if _is_list_items(plan, field):
            plan.items = slot
        if field["number"]:
            _read(plan, slot, field, target, declare)
        render.append(_render(slot, field, target))
    plan.size = len(fields)
    plan.render = tuple(render)
    plan.seal()


def _read(plan: Plan, slot: int, field: dict[str, Any], target: Target, declare: Declare) -> None:
    """Add the dispatch entries of one field."""
    number, proto_type = field["number"], field["type"]
    if isinstance(plan, SpecialPlan):
        plan.numbers[number] = slot
        if isinstance(target, Plan):
            plan.subs[number] = target
    if proto_type == "map":
        value = field["value"]
        value_plan = declare(value["message"]) if isinstance(value, dict) else None
        entry = MapEntry(field["key"], "" if value_plan else value, value_plan)
        plan.dispatch[number << 3 | BYTES] = (OP_MAP, slot, entry)
    elif target is not None:
        repeated = field["go"] == "slice" and not isinstance(target, SlicePlan)
        op = OP_REP_MESSAGE if repeated else OP_MESSAGE
        plan.dispatch[number << 3 | BYTES] = (op, slot, target)
    elif field["go"] == "slice" and proto_type != "bytes":
        _read_repeated(plan.dispatch, slot, number, proto_type)
    else:
        _read_scalar(plan, slot, number, proto_type)


def _read_scalar(plan: Plan, slot: int, number: int, proto_type: str) -> None:
    if proto_type in ("string", "bytes"):
        raw = isinstance(plan, SpecialPlan)  # specials read their bytes as they are
        op = OP_STRING if proto_type == "string" else OP_RAW_BYTES if raw else OP_BYTES
        plan.dispatch[number << 3 | BYTES] = (op, slot, None)
    elif proto_type in FIXED_LAYOUTS:
        layout = FIXED_LAYOUTS[proto_type]
        wire = FIXED64 if layout.size == 8 else FIXED32
        plan.dispatch[number << 3 | wire] = (OP_FIXED, slot, (layout, False))
    else:
        op = {"bool": OP_BOOL, "int64": OP_INT64}.get(proto_type, OP_VARINT)
        plan.dispatch[number << 3 | VARINT] = (op, slot, CONVERTERS[proto_type])


def _read_repeated(dispatch: dict[int, Any], slot: int, number: int, proto_type: str) -> None:
    """A repeated scalar: one entry per element, or packed (proto3 style, which gogo accepts)."""
    if proto_type == "string":
        dispatch[number << 3 | BYTES] = (OP_REP_STRING, slot, None)
    elif proto_type == "bytes":
        dispatch[number << 3 | BYTES] = (OP_REP_BYTES, slot, None)
    elif proto_type in FIXED_LAYOUTS:
        layout = FIXED_LAYOUTS[proto_type]
        wire = FIXED64 if layout.size == 8 else FIXED32
        dispatch[number << 3 | wire] = (OP_FIXED, slot, (layout, True))
        dispatch[number << 3 | BYTES] = (OP_PACKED, slot, (layout, True))
    else:
        dispatch[number << 3 | VARINT] = (OP_REP_VARINT, slot, CONVERTERS[proto_type])
        dispatch[number << 3 | BYTES] = (OP_PACKED, slot, CONVERTERS[proto_type])


def _render(slot: int, field: dict[str, Any], target: Target) -> RenderEntry:
    """The render entry of one field: encoding/json's rule for its Go kind."""
    key, go, omitempty = field["json"], field["go"], field["omitempty"]
    if field.get("inline"):
        if field["number"] == 0 and field["message"] == TYPE_META:
            return ("", slot, M_TYPE_META, None)
        return (str(field["number"]), slot, M_INLINE_PTR if go == "pointer" else M_INLINE, target)
    if field["type"] == "map":
        return (key, slot, M_MAP if omitempty else M_MAP_NULL, None)
    if isinstance(target, SlicePlan):  # a named slice wrapped in a message (Verbs)
        return (key, slot, M_MESSAGE_SLICE if omitempty else M_MESSAGE_NULL, target)
    if target is not None and go == "value" and field.get("omitzero"):  # a Time: when set
        return (key, slot, M_OMIT_NULL, target)
    if target is not None and go == "value":  # a struct: never omitted
        return (key, slot, M_MESSAGE, target)
    if target is not None and go == "pointer":
        return (key, slot, M_MESSAGE_PTR if omitempty else M_MESSAGE_NULL, target)
    if go == "value":  # a scalar
        zero = ZERO[field["type"]]
        return (key, slot, M_OMIT, None) if omitempty else (key, slot, M_DEFAULT, zero)
    if go == "pointer":
        return (key, slot, M_PRESENT, None) if omitempty else (key, slot, M_DEFAULT, None)
    return (key, slot, M_OMIT, None) if omitempty else (key, slot, M_DEFAULT, None)  # slices
