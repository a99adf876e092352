"""The one protobuf wire reader reads what it writes, checks bounds, and raises only ProtoError."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from k8s_wiretap.wire import envelope
from k8s_wiretap.wire.protowire import (
    BYTES,
    FIXED32,
    FIXED64,
    MASK64,
    VARINT,
    Field,
    ProtoError,
    encode,
    encode_varint,
    iter_fields,
    parse,
    read_value,
    read_varint,
)

FIELDS = st.lists(
    st.one_of(
        st.builds(Field, st.integers(1, 2**29 - 1), st.just(VARINT), st.integers(0, 2**64 - 1)),
        st.builds(Field, st.integers(1, 2**29 - 1), st.just(BYTES), st.binary(max_size=64)),
        st.builds(Field, st.integers(1, 100), st.just(FIXED32), st.binary(min_size=4, max_size=4)),
        st.builds(Field, st.integers(1, 100), st.just(FIXED64), st.binary(min_size=8, max_size=8)),
    ),
    max_size=20,
)


@given(FIELDS)
def test_round_trip(fields: list[Field]) -> None:
    assert parse(encode(fields)) == fields


def test_varints() -> None:
    assert encode_varint(300) == b"\xac\x02"
    assert read_varint(b"\xac\x02", 0) == (300, 2)
    assert read_varint(b"\x00\x05\x7f", 1) == (5, 2)
    assert encode_varint(-1) == b"\xff" * 9 + b"\x01"
    assert read_varint(encode_varint(-1), 0) == (MASK64, 10)


@given(st.integers(0, 2**64 - 1))
def test_every_64_bit_varint_round_trips(value: int) -> None:
    encoded = encode_varint(value)
    assert len(encoded) <= 10
    assert read_varint(b"\x01" + encoded + b"\x01", 1) == (value, 1 + len(encoded))


def test_a_10_byte_varint_wraps_to_64_bits_as_go_does() -> None:
    # The 10th byte holds bit 63 and six bits past it, which Go's uint64 shift drops.
    assert read_varint(b"\x80" * 9 + b"\x02", 0) == (0, 10)  # 2**64 → 0
    assert read_varint(b"\xff" * 9 + b"\x7f", 0) == (MASK64, 10)
    assert read_varint(b"\x81" + b"\x80" * 8 + b"\x7e", 0) == (1, 10)
    # ... and so does a field's value, and a key.
    assert parse(b"\x08" + b"\xff" * 9 + b"\x7f") == [Field(1, VARINT, MASK64)]
    key = (1 << 64) + (5 << 3 | VARINT)  # field 5 with bits past 64
    assert parse(encode_varint(key) + b"\x07") == [Field(5, VARINT, 7)]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\x80", "truncated varint"),
        (b"\xff" * 9, "truncated varint"),
        (b"\xff" * 10 + b"\x01", "longer than 10 bytes"),
        (b"\x80" * 10 + b"\x00", "longer than 10 bytes"),  # non-canonical zero, 11 bytes
    ],
)
def test_bad_varints(data: bytes, reason: str) -> None:
    with pytest.raises(ProtoError, match=reason):
        read_varint(data, 0)
    with pytest.raises(ProtoError, match=reason):
        parse(b"\x08" + data)  # as a value
    with pytest.raises(ProtoError, match=reason):
        parse(data)  # as a key


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\x0a\x05abc", "field 1 runs past the end"),  # a length past the end
        (b"\x0a\xff\xff\xff\xff\x0fabc", "field 1 runs past the end"),  # a huge one
        (b"\x0a", "truncated varint"),  # no length at all
        (b"\x09\x01\x02\x03", "field 1 runs past the end"),  # fixed64 with 3 bytes
        (b"\x15\x01\x02", "field 2 runs past the end"),  # fixed32 with 2 bytes
        (b"\x08", "truncated varint"),  # a key and no value
        (b"\x00\x01", "field number 0"),
        (b"\x02\x00", "field number 0"),  # length-delimited field 0
        (b"\x0b", "wire type 3"),  # start group
        (b"\x0c", "wire type 4"),  # end group
        (b"\x0e\x00", "wire type 6"),
        (b"\x0f\x00", "wire type 7"),
        (b"\x08\x01\x13", "wire type 3"),  # after a good field
    ],
)
def test_malformed_messages_raise_proto_error_with_a_reason(data: bytes, reason: str) -> None:
    with pytest.raises(ProtoError, match=reason):
        parse(data)


def test_bounds_are_the_message_not_the_buffer() -> None:
    # Field 1 is a message of 2 bytes holding field 2 with a length of 3: inside the buffer,
    # past the end of the message it is in.
    outer = encode([Field(1, BYTES, b"\x12\x03"), Field(3, BYTES, b"abc")])
    assert parse(outer)[0] == Field(1, BYTES, b"\x12\x03")
    with pytest.raises(ProtoError, match="runs past the end"):
        list(iter_fields(outer, 2, 4))
    with pytest.raises(ProtoError, match="runs past the end"):
        read_value(outer, 0x12, 3, 4)
    # A varint value running past the end of its message, though not of the buffer.
    with pytest.raises(ProtoError, match="runs past the end"):
        read_value(b"\x08\x96\x01", 0x08, 1, 2)
    assert read_value(b"\x08\x96\x01", 0x08, 1, 3) == (150, 3)
    assert list(iter_fields(b"\xff\x08\x01\xff", 1, 3)) == [Field(1, VARINT, 1)]


def test_values_are_bytes_even_from_a_memoryview() -> None:
    data = encode([Field(1, BYTES, b"abc"), Field(2, FIXED32, b"\x01\x00\x00\x00")])
    fields = list(iter_fields(memoryview(data)))  # type: ignore[arg-type]
    assert fields == parse(data)
    assert all(type(f.value) is bytes for f in fields)


@given(st.binary(max_size=512))
def test_garbage_raises_only_proto_error(data: bytes) -> None:
    with contextlib.suppress(ProtoError):
        parse(data)


@given(FIELDS, st.integers(0, 400))
def test_a_cut_message_is_refused_or_parses_as_the_fields_before_the_cut(
    fields: list[Field], cut: int
) -> None:
    data = encode(fields)
    cut = min(cut, len(data))
    try:
        got = parse(data[:cut])
    except ProtoError:
        return
    assert got == fields[: len(got)]  # a cut on a field boundary
    assert encode(got) == data[:cut]


def test_proto_error_is_a_value_error() -> None:
    assert issubclass(ProtoError, ValueError)


def test_envelope_round_trip_keeps_other_fields() -> None:
    type_meta = encode([Field(1, BYTES, b"v1"), Field(2, BYTES, b"Secret")])
    body = envelope.MAGIC + encode(
        [Field(1, BYTES, type_meta), Field(2, BYTES, b"\x0a\x00"), Field(4, BYTES, b"")]
    )
    wrapped = envelope.unwrap(body)
    assert (wrapped.api_version, wrapped.kind, wrapped.raw) == ("v1", "Secret", b"\x0a\x00")
    rewritten = envelope.with_raw(body, b"\x0a\x01x")
    assert envelope.unwrap(rewritten).raw == b"\x0a\x01x"
    assert envelope.unwrap(rewritten).kind == "Secret"
    with pytest.raises(ProtoError):
        envelope.unwrap(b'{"kind":"Secret"}')


def type_meta(api_version: bytes, kind: bytes) -> Field:
    return Field(1, BYTES, encode([Field(1, BYTES, api_version), Field(2, BYTES, kind)]))


def test_envelope_fields_as_gogo_reads_them() -> None:
    body = envelope.MAGIC + encode(
        [
            type_meta(b"v1", b"Pod"),
            Field(2, BYTES, b"first"),
            Field(9, VARINT, 5),  # unknown: skipped
            Field(1, BYTES, encode([Field(2, BYTES, b"Secret"), Field(7, BYTES, b"?")])),
            Field(2, BYTES, b"last"),
            Field(3, BYTES, b""),
            Field(4, BYTES, b"application/vnd.kubernetes.protobuf"),
        ]
    )
    # typeMeta seen twice merges (kind replaced, apiVersion kept), the last raw wins.
    assert envelope.unwrap(body) == envelope.Envelope(
        "v1", "Secret", b"last", "", "application/vnd.kubernetes.protobuf"
    )
    assert envelope.unwrap_fields(body) == (
        "v1",
        "Secret",
        b"last",
        "",
        "application/vnd.kubernetes.protobuf",
    )
    assert envelope.unwrap(envelope.MAGIC) == envelope.Envelope("", "", b"")


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ([Field(2, VARINT, 1)], "field 2: wire type 0"),
        ([Field(3, FIXED32, b"gzip")], "field 3: wire type 5"),
        ([Field(1, BYTES, encode([Field(2, VARINT, 1)]))], "typeMeta field 2: wire type 0"),
        ([Field(1, BYTES, b"\x12\x05Pod")], "typeMeta field 2 runs past the end"),
        ([type_meta(b"v1", b"Secret\xff")], "not UTF-8"),
        ([Field(4, BYTES, b"\xc3")], "not UTF-8"),
    ],
)
def test_a_bad_envelope_is_a_proto_error(fields: list[Field], reason: str) -> None:
    with pytest.raises(ProtoError, match=reason):
        envelope.unwrap(envelope.MAGIC + encode(fields))


@pytest.mark.parametrize(
    "tail",
    [b"\x0a", b"\x12", b"\x12\x80", b"\x12\x05ab", b"\x0a\x03\x0a\x05v", b"\x00", b"\x0b"],
)
def test_a_truncated_or_malformed_envelope_is_a_proto_error(tail: bytes) -> None:
    with pytest.raises(ProtoError):
        envelope.unwrap(envelope.MAGIC + tail)
