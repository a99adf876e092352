"""CBOR watch streams (application/cbor-seq) split into events whatever the chunk boundaries.

The stream is a real watch list of the default release's lab's leases, fetched as CBOR
(tests/wire/fixtures/leases-watch-list.cbor-seq): three ADDED events, the bookmark that ends
the initial events, then changes.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from k8s_wiretap.wire.cborseq import item_end
from k8s_wiretap.wire.framing import CborSeqFramer, JsonFramer, LengthPrefixFramer, framer_for

STREAM = (Path(__file__).parent / "fixtures" / "leases-watch-list.cbor-seq").read_bytes()


def cut(data: bytes) -> list[bytes]:
    frames, offset = [], 0
    while offset < len(data):
        end = item_end(data, offset)
        assert end is not None
        frames.append(data[offset:end])
        offset = end
    return frames


EVENTS = cut(STREAM)


def feed_all(framer: CborSeqFramer, chunks: list[bytes]) -> list[bytes]:
    frames = []
    for chunk in chunks:
        frames += framer.feed(chunk)
    return frames + framer.flush()


def splits(data: bytes, points: list[int]) -> list[bytes]:
    bounds = [0, *sorted(points), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def test_the_media_types_pick_their_framers() -> None:
    assert isinstance(framer_for("application/cbor-seq"), CborSeqFramer)
    assert isinstance(framer_for("application/cbor"), CborSeqFramer)
    assert isinstance(framer_for("application/json"), JsonFramer)
    assert isinstance(
        framer_for("application/vnd.kubernetes.protobuf;stream=watch"), LengthPrefixFramer
    )


def test_every_split_point_including_inside_a_head() -> None:
    assert len(EVENTS) == 7
    for point in range(len(STREAM) + 1):
        assert feed_all(CborSeqFramer(), splits(STREAM, [point])) == EVENTS


def test_one_byte_at_a_time_with_empty_chunks() -> None:
    chunks = [b""] + [STREAM[i : i + 1] for i in range(len(STREAM))] + [b"", b""]
    assert feed_all(CborSeqFramer(), chunks) == EVENTS


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=30))
def test_random_splits(points: list[int]) -> None:
    assert feed_all(CborSeqFramer(), splits(STREAM, points)) == EVENTS


def test_a_stream_cut_short_leaves_its_tail_to_flush() -> None:
    framer = CborSeqFramer()
    assert framer.feed(STREAM[:-5]) == EVENTS[:-1]
    assert framer.flush() == [EVENTS[-1][:-5]]
    assert framer.flush() == []


def test_bytes_that_are_not_cbor_end_the_framing_in_one_last_frame() -> None:
    framer = CborSeqFramer()
    garbage = b"\xff\x00garbage"
    assert framer.feed(EVENTS[0] + garbage) == [EVENTS[0]]
    assert framer.feed(EVENTS[1]) == []  # no way to find the next item's start again
    assert framer.flush() == [garbage + EVENTS[1]]
