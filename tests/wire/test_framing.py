"""Watch framing is independent of chunk boundaries."""

from __future__ import annotations

import itertools
import json
import struct

from hypothesis import given
from hypothesis import strategies as st

from k8s_wiretap.wire.framing import JsonFramer, LengthPrefixFramer, framer_for

JSON_EVENTS = [
    json.dumps({"type": "ADDED", "object": {"kind": "Pod", "metadata": {"name": f"p{i}"}}}).encode()
    for i in range(3)
] + [b'{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"12"}}}']
JSON_STREAM = b"".join(e + b"\n" for e in JSON_EVENTS)
PROTO_EVENTS = [b"\x0a\x05ADDED\x12\x03abc", b"", b"\x0a\x08MODIFIED" + bytes(range(256))]
PROTO_STREAM = b"".join(struct.pack(">I", len(e)) + e for e in PROTO_EVENTS)


def feed_all(framer: JsonFramer | LengthPrefixFramer, chunks: list[bytes]) -> list[bytes]:
    frames = []
    for chunk in chunks:
        frames += framer.feed(chunk)
    return frames + framer.flush()


def splits(data: bytes, points: list[int]) -> list[bytes]:
    bounds = [0, *sorted(points), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def test_json_every_split_point() -> None:
    for point in range(len(JSON_STREAM) + 1):
        assert feed_all(JsonFramer(), splits(JSON_STREAM, [point])) == JSON_EVENTS


def test_protobuf_every_split_point_including_inside_the_length_prefix() -> None:
    for point in range(len(PROTO_STREAM) + 1):
        assert feed_all(LengthPrefixFramer(), splits(PROTO_STREAM, [point])) == PROTO_EVENTS


def test_one_byte_at_a_time_with_empty_chunks() -> None:
    json_chunks = [b""] + [JSON_STREAM[i : i + 1] for i in range(len(JSON_STREAM))] + [b""]
    assert feed_all(JsonFramer(), json_chunks) == JSON_EVENTS
    proto_chunks = [PROTO_STREAM[i : i + 1] for i in range(len(PROTO_STREAM))]
    assert feed_all(LengthPrefixFramer(), proto_chunks) == PROTO_EVENTS


@given(st.lists(st.integers(min_value=0, max_value=len(JSON_STREAM)), max_size=20))
def test_json_random_splits(points: list[int]) -> None:
    assert feed_all(JsonFramer(), splits(JSON_STREAM, points)) == JSON_EVENTS


@given(st.lists(st.integers(min_value=0, max_value=len(PROTO_STREAM)), max_size=20))
def test_protobuf_random_splits(points: list[int]) -> None:
    assert feed_all(LengthPrefixFramer(), splits(PROTO_STREAM, points)) == PROTO_EVENTS


def test_an_incomplete_tail_comes_out_of_flush() -> None:
    framer = LengthPrefixFramer()
    assert framer.feed(PROTO_STREAM[:-3]) == PROTO_EVENTS[:2]
    assert framer.flush() == [PROTO_STREAM[-(len(PROTO_EVENTS[2]) + 4) : -3]]
    json_framer = JsonFramer()
    assert json_framer.feed(b'{"type":"ADDED"') == []
    assert json_framer.flush() == [b'{"type":"ADDED"']


@given(st.binary(max_size=2000), st.lists(st.integers(min_value=0, max_value=2000), max_size=8))
def test_random_bytes_never_raise_and_never_lose_bytes(data: bytes, points: list[int]) -> None:
    points = [p for p in points if p <= len(data)]
    framer = LengthPrefixFramer()
    frames = [frame for chunk in splits(data, points) for frame in framer.feed(chunk)]
    tail = framer.flush()
    # Every byte fed comes out exactly once, in order: each frame with its length prefix,
    # then the incomplete rest (which is not a whole frame, or feed would have cut it).
    assert b"".join(struct.pack(">I", len(f)) + f for f in frames) + b"".join(tail) == data
    assert len(tail) <= 1
    if tail:
        assert len(tail[0]) < 4 or struct.unpack(">I", tail[0][:4])[0] > len(tail[0]) - 4
    assert feed_all(LengthPrefixFramer(), [data]) == frames + tail  # whatever the splits
    # JSON: every line that is not blank comes out whole, in order; only newlines and blank
    # lines are dropped.
    json_frames = feed_all(JsonFramer(), splits(data, points))
    assert json_frames == [line for line in data.split(b"\n") if line.strip()]


def test_framer_follows_the_content_type() -> None:
    assert isinstance(framer_for("application/json"), JsonFramer)
    assert isinstance(
        framer_for("application/vnd.kubernetes.protobuf;stream=watch"), LengthPrefixFramer
    )
