"""Valid protobuf decodes to the values it holds; anything else raises DecodeError, nothing else.

- valid messages of every plain schema type, made from the schema (scalars, repeated
  scalars, maps, nested messages, with the wire types and values Go would write, and fields
  the type does not declare), decode to exactly those values, alone, in an envelope and in a
  watch frame; so do real bodies with undeclared fields added, and watch frames of JSON;
- random bytes are refused exactly when the wire reader refuses them, where the wire format
  is all there is to check (schemaless reading, an envelope of an unknown kind, a frame);
- random but well-formed messages of every schema type, and real bodies (the compatibility
  fixtures) with bytes flipped, inserted, deleted or cut off, decode or raise DecodeError;
  when they decode, kind and apiVersion are the envelope's, and what a mutation left as it
  was (an empty message, a body cut at its end) must decode.

A decoder that always raises, or returns {}, fails these.
"""

from __future__ import annotations

import base64
import contextlib
import json
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from k8s_wiretap.decode.protobuf import (
    DecodeError,
    decode_object,
    decode_schemaless,
    decode_watch_event,
    render_message,
)
from k8s_wiretap.kube import schema
from k8s_wiretap.wire.envelope import MAGIC, unwrap, with_raw
from k8s_wiretap.wire.protowire import (
    BYTES,
    FIXED32,
    FIXED64,
    VARINT,
    Field,
    ProtoError,
    encode,
    parse,
)

# Generating messages from the schema is slow on a loaded 2-core machine: that is no
# finding about the decoder, so Hypothesis's timing health check is off.
SLOW = [HealthCheck.too_slow]
HEAD = Path(__file__).parent / "fixtures" / "testdata-HEAD"
BODIES = [path.read_bytes() for path in sorted(HEAD.glob("*.pb"))]
MESSAGES = sorted(schema.messages())
ENTRIES = schema.messages()
PLAIN = [name for name in MESSAGES if not ENTRIES[name].get("special")]
TYPE_META = "k8s.io.apimachinery.pkg.apis.meta.v1.TypeMeta"


def has_type_meta(name: str) -> bool:
    """The message is a kind with a TypeMeta (all but WatchEvent): it renders kind first."""
    first: dict[str, Any] = (ENTRIES[name]["fields"] or [{}])[0]
    return bool(first.get("message") == TYPE_META and first.get("number") == 0)


KINDS = sorted(
    (api_version, kind, name)
    for api_version, table in schema.kinds().items()
    for kind, name in table.items()
    if has_type_meta(name)
)
MAX_DEPTH = 3
FIELDS_AT_DEPTH = (6, 3, 2, 2)  # fields set in a generated message, by its depth
UNKNOWN = "$unknownFields"


REFUSED: Any = object()  # what decodes_or_refuses returns for a DecodeError (null is a value)


def decodes_or_refuses(call: Callable[[], Any]) -> Any:
    with contextlib.suppress(DecodeError):
        return call()
    return REFUSED


# -- valid messages from the schema, with the JSON values they must decode to ---------------

INT32 = st.integers(-(2**31), 2**31 - 1).filter(bool)
INT64 = st.integers(-(2**63), 2**63 - 1).filter(bool)
DOUBLE = st.floats(allow_nan=False, allow_infinity=False).filter(bool)


def go_json_float(value: float) -> float | int:
    """encoding/json writes an integral float64 below 1e21 without a fraction."""
    return int(value) if value.is_integer() and abs(value) < 1e21 else value


def scalar(draw: st.DrawFn, proto_type: str) -> tuple[int, int | bytes, Any]:
    """(wire type, wire value, JSON value) of a non-zero scalar of `proto_type`."""
    if proto_type == "string":
        text = draw(st.text(min_size=1, max_size=12))
        return BYTES, text.encode(), text
    if proto_type == "bytes":
        raw = draw(st.binary(min_size=1, max_size=12))
        return BYTES, raw, base64.b64encode(raw).decode()
    if proto_type == "bool":
        return VARINT, 1, True
    if proto_type in ("int32", "int64"):
        number = draw(INT32 if proto_type == "int32" else INT64)
        return VARINT, number, number  # negative: ten bytes of two's complement, as Go writes
    assert proto_type == "double", proto_type
    value = draw(DOUBLE)
    return FIXED64, struct.pack("<d", value), go_json_float(value)


SCALARS = ("string", "bytes", "bool", "int32", "int64", "double")


def usable(field: dict[str, Any], depth: int) -> bool:
    """Fields whose JSON is their value: no inlining, no specials, no server-set TypeMeta."""
    if not field["number"] or not field["json"] or field.get("inline") or field.get("typeMeta"):
        return False
    if field["type"] == "message":
        return depth < MAX_DEPTH and not ENTRIES[field["message"]].get("special")
    if field["type"] == "map":
        return field["key"] == "string" and field["value"] in ("string", "bytes")
    return field["type"] in SCALARS


def map_entries(draw: st.DrawFn, number: int, value_type: str) -> tuple[list[Field], Any]:
    """A map<string, string or bytes>: its entry messages, and its JSON (keys sorted)."""
    keys = draw(st.lists(st.text(max_size=6), unique=True, min_size=1, max_size=3))
    wire, as_json = [], {}
    for key in keys:
        _, value, value_json = scalar(draw, value_type)
        entry = [Field(1, BYTES, key.encode()), Field(2, BYTES, value)]
        wire.append(Field(number, BYTES, encode(draw(st.permutations(entry)))))
        as_json[key] = value_json
    return wire, dict(sorted(as_json.items()))


@st.composite
def valid_message(draw: st.DrawFn, name: str, depth: int = 0) -> tuple[bytes, dict[str, Any]]:
    """A message of type `name` with some fields set, and the JSON members they must give."""
    fields = [f for f in ENTRIES[name]["fields"] if usable(f, depth)]
    width = FIELDS_AT_DEPTH[depth]
    chosen = draw(st.lists(st.sampled_from(fields), unique_by=id, max_size=width)) if fields else []
    groups: list[list[Field]] = []  # each field's occurrences, in order
    expected: dict[str, Any] = {}
    for field in chosen:
        number, key, repeated = field["number"], field["json"], field["go"] == "slice"
        if field["type"] == "message":
            count = draw(st.integers(1, 2)) if repeated and depth == 0 else 1
            items = [draw(valid_message(field["message"], depth + 1)) for _ in range(count)]
            groups.append([Field(number, BYTES, raw) for raw, _ in items])
            decoded = [value for _, value in items]
            expected[key] = decoded if repeated else decoded[0]
        elif field["type"] == "map":
            wire, expected[key] = map_entries(draw, number, field["value"])
            groups.append(wire)
        elif repeated and field["type"] != "bytes":  # a repeated scalar ([]byte is one)
            scalars = [scalar(draw, field["type"]) for _ in range(draw(st.integers(1, 3)))]
            groups.append([Field(number, wire_type, value) for wire_type, value, _ in scalars])
            expected[key] = [as_json for _, _, as_json in scalars]
        else:
            wire_type, value, expected[key] = scalar(draw, field["type"])
            groups.append([Field(number, wire_type, value)])
    # Fields in any order (Go writes them in number order; readers take any).
    return encode([f for group in draw(st.permutations(groups)) for f in group]), expected


def assert_holds(got: Any, expected: Any, path: str = "") -> None:
    """`got` has every member of `expected` with its value (and others, Go's zero values)."""
    if isinstance(expected, dict):
        assert isinstance(got, dict), path
        for key, value in expected.items():
            assert key in got, f"{path}.{key} missing"
            assert_holds(got[key], value, f"{path}.{key}")
    elif isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), path
        for index, (left, right) in enumerate(zip(got, expected, strict=True)):
            assert_holds(left, right, f"{path}[{index}]")
    else:
        assert got == expected and type(got) is type(expected), f"{path}: {got!r} != {expected!r}"


@st.composite
def message_of_some_type(draw: st.DrawFn) -> tuple[str, bytes, dict[str, Any]]:
    name = draw(st.sampled_from(PLAIN))
    raw, expected = draw(valid_message(name))
    return name, raw, expected


@st.composite
def object_of_some_kind(draw: st.DrawFn) -> tuple[str, str, bytes, dict[str, Any]]:
    api_version, kind, name = draw(st.sampled_from(KINDS))
    raw, expected = draw(valid_message(name))
    return api_version, kind, raw, expected


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = encode([Field(1, BYTES, api_version.encode()), Field(2, BYTES, kind.encode())])
    return MAGIC + encode([Field(1, BYTES, type_meta), Field(2, BYTES, raw)])


def watch_frame(event_type: bytes, body: bytes) -> bytes:
    extension = encode([Field(1, BYTES, body)])
    return encode([Field(1, BYTES, event_type), Field(2, BYTES, extension)])


@settings(max_examples=400, suppress_health_check=SLOW, deadline=None)
@given(message_of_some_type())
def test_valid_messages_of_every_plain_type_decode_to_their_values(
    case: tuple[str, bytes, dict[str, Any]],
) -> None:
    name, raw, expected = case
    assert_holds(render_message(name, raw), expected)


@settings(max_examples=200, suppress_health_check=SLOW, deadline=None)
@given(object_of_some_kind(), st.sampled_from([b"ADDED", b"MODIFIED", b"DELETED"]))
def test_valid_objects_decode_in_envelopes_and_watch_frames(
    case: tuple[str, str, bytes, dict[str, Any]], event_type: bytes
) -> None:
    api_version, kind, raw, expected = case
    body = envelope(api_version, kind, raw)
    got = decode_object(body)
    assert list(got)[:2] == ["kind", "apiVersion"]
    assert (got["kind"], got["apiVersion"]) == (kind, api_version)
    assert_holds(got, expected)
    event = decode_watch_event(watch_frame(event_type, body))
    assert event == {"type": event_type.decode(), "object": got}


def test_the_generator_makes_values_to_check() -> None:
    """The property above is only as good as its cases: most types have fields it can set."""
    settable = [name for name in PLAIN if any(usable(f, 0) for f in ENTRIES[name]["fields"])]
    assert len(settable) > 0.9 * len(PLAIN)
    assert len(KINDS) > 300


UNDECLARED = st.integers(1, 60)


@st.composite
def undeclared_fields(draw: st.DrawFn, name: str) -> list[Field]:
    """Fields `name` does not declare: varints and printable strings, schemaless as they are."""
    declared = {f["number"] for f in ENTRIES[name]["fields"]}
    numbers = draw(st.lists(UNDECLARED.filter(lambda n: n not in declared), min_size=1, max_size=4))
    values = st.one_of(
        st.integers(0, 2**64 - 1),
        st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=8).map(str.encode),
    )
    return [
        Field(n, VARINT if isinstance(v, int) else BYTES, v)
        for n in numbers
        for v in [draw(values)]
    ]


def as_unknown(fields: list[Field]) -> dict[str, Any]:
    """What the decoder keeps of them under $unknownFields."""
    kept: dict[str, Any] = {}
    for field in fields:
        value = field.value if isinstance(field.value, int) else field.value.decode()
        key = str(field.number)
        if key not in kept:
            kept[key] = value
        elif isinstance(kept[key], list):
            kept[key].append(value)
        else:
            kept[key] = [kept[key], value]
    return kept


@settings(max_examples=200, suppress_health_check=SLOW, deadline=None)
@given(st.data())
def test_undeclared_fields_of_every_plain_type_are_kept(data: st.DataObject) -> None:
    name, raw, expected = data.draw(message_of_some_type())
    extra = data.draw(undeclared_fields(name))
    got = render_message(name, raw + encode(extra))
    assert_holds(got, {**expected, UNKNOWN: as_unknown(extra)})


@settings(max_examples=100, suppress_health_check=SLOW, deadline=None)
@given(st.sampled_from(BODIES), st.data())
def test_undeclared_fields_added_to_real_bodies_are_kept(body: bytes, data: st.DataObject) -> None:
    wrapped = unwrap(body)
    name = schema.lookup_kind(wrapped.api_version, wrapped.kind)
    if name is None or ENTRIES[name].get("special"):
        return
    before = decode_object(body)
    extra = data.draw(undeclared_fields(name))
    after = decode_object(with_raw(body, wrapped.raw + encode(extra)))
    unknown = {**before.get(UNKNOWN, {}), **as_unknown(extra)}
    assert after == {**before, UNKNOWN: unknown}


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(st.text(max_size=10), JSON_VALUES)
def test_watch_frames_holding_json_decode_to_it(event_type: str, value: Any) -> None:
    frame = watch_frame(event_type.encode(), json.dumps(value).encode())
    assert decode_watch_event(frame) == {"type": event_type, "object": value}


# -- random bytes: refused exactly when the wire reader refuses them ---------------------------


def schemaless_view(fields: list[Field]) -> dict[str, list[Field]]:
    grouped: dict[str, list[Field]] = {}
    for field in fields:
        grouped.setdefault(str(field.number), []).append(field)
    return grouped


@given(st.binary(max_size=1024))
@example(b"")
@example(b"\x08\x96\x01\x12\x02hi\x08\x01\x1d\x01\x00\x00\x00")
def test_random_schemaless_is_refused_exactly_when_the_wire_reader_refuses_it(
    data: bytes,
) -> None:
    try:
        fields = parse(data)
    except ProtoError:
        try:
            decode_schemaless(data)
        except DecodeError:
            return
        raise AssertionError("decoded what the wire reader refuses") from None
    got = decode_schemaless(data)
    grouped = schemaless_view(fields)
    assert list(got) == list(grouped)
    for key, group in grouped.items():
        values = got[key] if len(group) > 1 else [got[key]]
        assert len(values) == len(group)
        for field, value in zip(group, values, strict=True):
            if field.wire_type == VARINT:
                assert value == field.value
            elif field.wire_type in (FIXED32, FIXED64):
                assert isinstance(field.value, bytes)
                assert value == int.from_bytes(field.value, "little")


@given(st.binary(max_size=2048))
@example(b"")
@example(b"\x12\x02\x08\x01\x1a\x00")
def test_random_bytes_after_the_magic(data: bytes) -> None:
    body = MAGIC + data
    try:
        wrapped = unwrap(body)
    except ProtoError:
        try:
            decode_object(body)
        except DecodeError:
            return
        raise AssertionError("decoded an envelope the envelope parser refuses") from None
    name = schema.lookup_kind(wrapped.api_version, wrapped.kind)
    if wrapped.content_encoding or name is not None:
        decodes_or_refuses(lambda: decode_object(body))
        return
    try:
        parse(wrapped.raw)
    except ProtoError:
        try:
            decode_object(body)
        except DecodeError:
            return
        raise AssertionError("decoded a raw message the wire reader refuses") from None
    got = decode_object(body)
    head = {"kind": wrapped.kind, "apiVersion": wrapped.api_version, "$schemaless": True}
    assert got == {**head, **decode_schemaless(wrapped.raw)}


@given(st.binary(max_size=2048))
def test_random_watch_frames(data: bytes) -> None:
    try:
        parse(data)
    except ProtoError:
        try:
            decode_watch_event(data)
        except DecodeError:
            return
        raise AssertionError("decoded a frame the wire reader refuses") from None
    event = decodes_or_refuses(lambda: decode_watch_event(data))
    assert event is REFUSED or {"type", "object"} <= set(event) <= {"type", "object", UNKNOWN}


# -- robustness: anything else decodes or raises DecodeError -----------------------------------


def wire_messages() -> st.SearchStrategy[bytes]:
    """Well-formed protobuf with small field numbers: it hits declared fields, wire types vary."""
    scalar = st.one_of(
        st.builds(Field, st.integers(1, 40), st.just(VARINT), st.integers(0, 2**64 - 1)),
        st.builds(Field, st.integers(1, 40), st.just(BYTES), st.binary(max_size=24)),
        st.builds(Field, st.integers(1, 40), st.just(FIXED64), st.binary(min_size=8, max_size=8)),
        st.builds(Field, st.integers(1, 40), st.just(FIXED32), st.binary(min_size=4, max_size=4)),
    )
    return st.recursive(
        st.lists(scalar, max_size=8).map(encode),
        lambda inner: st.lists(
            st.one_of(scalar, st.builds(Field, st.integers(1, 40), st.just(BYTES), inner)),
            max_size=8,
        ).map(encode),
        max_leaves=40,
    )


@settings(max_examples=300, suppress_health_check=SLOW, deadline=None)
@given(st.sampled_from(MESSAGES), wire_messages())
def test_well_formed_messages_of_every_type(name: str, raw: bytes) -> None:
    got = decodes_or_refuses(lambda: render_message(name, raw))
    if raw == b"":
        assert got is not REFUSED


def test_every_type_decodes_from_no_bytes() -> None:
    """An empty message is Go's zero value of every type, which always has a JSON form."""
    for name in MESSAGES:
        render_message(name, b"")


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    body = bytearray(draw(st.sampled_from(BODIES)))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(body)))
        action = draw(st.sampled_from(["flip", "insert", "delete", "truncate"]))
        if action == "flip" and at < len(body):
            body[at] ^= 1 << draw(st.integers(0, 7))
        elif action == "insert":
            body[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif action == "delete":
            del body[at : at + draw(st.integers(1, 16))]
        else:
            del body[at:]
    return bytes(body)


def assert_kind_is_the_envelopes(got: dict[str, Any], body: bytes) -> None:
    wrapped = unwrap(body)  # the decoder read it: so does the envelope parser
    name = schema.lookup_kind(wrapped.api_version, wrapped.kind)
    if name is None or has_type_meta(name):
        assert got.get("kind", "") == wrapped.kind
        assert got.get("apiVersion", "") == wrapped.api_version


UNCHANGED = set(BODIES)  # a mutation can leave a body as it was (a cut at its end, say)


@settings(max_examples=300, suppress_health_check=SLOW, deadline=None)
@given(mutated())
@example(BODIES[0])
def test_mutated_real_bodies(body: bytes) -> None:
    got = decodes_or_refuses(lambda: decode_object(body))
    assert got is not REFUSED or body not in UNCHANGED
    if got is not REFUSED:
        assert_kind_is_the_envelopes(got, body)


@settings(max_examples=200, suppress_health_check=SLOW, deadline=None)
@given(mutated())
@example(BODIES[-1])
def test_mutated_real_bodies_inside_watch_frames(body: bytes) -> None:
    event = decodes_or_refuses(lambda: decode_watch_event(watch_frame(b"MODIFIED", body)))
    assert event is not REFUSED or body not in UNCHANGED
    if event is not REFUSED and isinstance(event["object"], dict) and body[:4] == MAGIC:
        assert_kind_is_the_envelopes(event["object"], body)


@settings(max_examples=200, suppress_health_check=SLOW, deadline=None)
@given(st.sampled_from(BODIES), st.data())
def test_mutated_raw_messages_by_type(body: bytes, data: st.DataObject) -> None:
    wrapped = unwrap(body)
    name = schema.lookup_kind(wrapped.api_version, wrapped.kind) or MESSAGES[0]
    raw = bytearray(wrapped.raw)
    at = data.draw(st.integers(0, max(len(raw) - 1, 0)))
    if raw:
        raw[at] = data.draw(st.integers(0, 255))
    got = decodes_or_refuses(lambda: render_message(name, bytes(raw)))
    assert got is not REFUSED or raw != wrapped.raw
