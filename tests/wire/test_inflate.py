"""Streams inflated as they come: several gzip members (the default release's compressed
watch lists), awkward splits, deflate, and bytes that are not compressed at all."""

from __future__ import annotations

import gzip
import zlib

from k8s_wiretap.wire.inflate import Inflater

EVENTS = [b'{"type":"ADDED"}\n', b'{"type":"BOOKMARK"}\n', b'{"type":"MODIFIED"}\n' * 3]


def members() -> bytes:
    """What apiserver's perFlushGzipWriter sends: one whole gzip member per flush."""
    return b"".join(gzip.compress(event) for event in EVENTS)


def test_every_member_is_inflated_not_only_the_first() -> None:
    assert Inflater("gzip").feed(members()) == b"".join(EVENTS)


def test_members_split_anywhere_inflate_the_same() -> None:
    stream = members()
    for size in (1, 2, 3, 7, 10, 19, 64):
        inflater = Inflater("gzip")
        out = b"".join(inflater.feed(stream[i : i + size]) for i in range(0, len(stream), size))
        assert out == b"".join(EVENTS), size
        assert inflater.error is None


def test_a_member_split_at_its_end_waits_for_the_next() -> None:
    first, second = gzip.compress(EVENTS[0]), gzip.compress(EVENTS[1])
    inflater = Inflater("gzip")
    assert inflater.feed(first + second[:5]) == EVENTS[0]
    assert inflater.feed(second[5:]) == EVENTS[1]


def test_deflate() -> None:
    compressor = zlib.compressobj()
    stream = compressor.compress(b"".join(EVENTS)) + compressor.flush()
    assert Inflater("deflate").feed(stream) == b"".join(EVENTS)


def test_bytes_that_do_not_inflate_are_handed_on_with_a_reason() -> None:
    inflater = Inflater("gzip")
    assert inflater.feed(gzip.compress(EVENTS[0])) == EVENTS[0]
    assert inflater.feed(b"not gzip at all") == b"not gzip at all"
    assert inflater.error is not None and inflater.error.startswith("not gzip data")
    assert inflater.feed(b"more") == b"more"  # from then on, as they come
