"""Whatever the bytes, protobuf decoding returns a value or raises DecodeError, nothing else.

Random bytes, random but well-formed messages of every schema type, and real bodies (the
compatibility fixtures) with bytes flipped, inserted, deleted or cut off.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from k8s_wiretap.decode.protobuf import (
    DecodeError,
    decode_object,
    decode_schemaless,
    decode_watch_event,
    render_message,
)
from k8s_wiretap.kube import schema
from k8s_wiretap.wire.envelope import MAGIC, unwrap
from k8s_wiretap.wire.protowire import BYTES, FIXED32, FIXED64, VARINT, Field, encode

HEAD = Path(__file__).parent / "fixtures" / "testdata-HEAD"
BODIES = [path.read_bytes() for path in sorted(HEAD.glob("*.pb"))]
MESSAGES = sorted(schema.messages())


def decodes_or_refuses(call: Callable[[], Any]) -> None:
    with contextlib.suppress(DecodeError):
        call()


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


@given(st.binary(max_size=2048))
def test_random_bytes_after_the_magic(data: bytes) -> None:
    decodes_or_refuses(lambda: decode_object(MAGIC + data))


@given(st.binary(max_size=2048))
def test_random_watch_frames(data: bytes) -> None:
    decodes_or_refuses(lambda: decode_watch_event(data))


@given(st.binary(max_size=1024))
def test_random_schemaless(data: bytes) -> None:
    decodes_or_refuses(lambda: decode_schemaless(data))


@settings(max_examples=300)
@given(st.sampled_from(MESSAGES), wire_messages())
def test_well_formed_messages_of_every_type(name: str, raw: bytes) -> None:
    decodes_or_refuses(lambda: render_message(name, raw))


@settings(max_examples=300)
@given(mutated())
def test_mutated_real_bodies(body: bytes) -> None:
    decodes_or_refuses(lambda: decode_object(body))


@settings(max_examples=200)
@given(mutated())
def test_mutated_real_bodies_inside_watch_frames(body: bytes) -> None:
    extension = encode([Field(1, BYTES, body)])
    frame = encode([Field(1, BYTES, b"MODIFIED"), Field(2, BYTES, extension)])
    decodes_or_refuses(lambda: decode_watch_event(frame))


@settings(max_examples=200)
@given(st.sampled_from(BODIES), st.data())
def test_mutated_raw_messages_by_type(body: bytes, data: st.DataObject) -> None:
    envelope = unwrap(body)
    name = schema.lookup_kind(envelope.api_version, envelope.kind) or MESSAGES[0]
    raw = bytearray(envelope.raw)
    at = data.draw(st.integers(0, max(len(raw) - 1, 0)))
    if raw:
        raw[at] = data.draw(st.integers(0, 255))
    decodes_or_refuses(lambda: render_message(name, bytes(raw)))
