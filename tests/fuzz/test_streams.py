"""Fuzzing what cuts and inflates a watch stream as it arrives (wire/framing.py,
wire/inflate.py): real frames, mutated, in chunks cut anywhere. Neither raises, and neither
loses a byte: what the framer hands on (frames, then the flushed rest) is the stream, less
only its framing; what the inflater hands on is the stream inflated, or from a bad byte on
the bytes as they came, with `error` saying why.
"""

from __future__ import annotations

import gzip
import zlib

from hypothesis import example, given
from hypothesis import strategies as st

from k8s_wiretap.wire.framing import CborSeqFramer, JsonFramer, LengthPrefixFramer
from k8s_wiretap.wire.inflate import Inflater
from tests.fuzz.seeds import FUZZ, chunked, fuzzed, seeds

FRAMES = fuzzed(lambda: seeds().proto_frames)
JSON_FRAMES = fuzzed(lambda: seeds().json_frames)
CBOR = fuzzed(lambda: seeds().cbor_bodies)


@FUZZ
@given(st.lists(FRAMES, max_size=4), st.binary(max_size=6), st.data())
def test_length_prefixed(frames: list[bytes], tail: bytes, data: st.DataObject) -> None:
    stream = b"".join(len(f).to_bytes(4, "big") + f for f in frames) + tail
    framer = LengthPrefixFramer()
    out = [frame for chunk in data.draw(chunked(stream)) for frame in framer.feed(chunk)]
    assert out == frames
    assert b"".join(framer.flush()) == tail


@FUZZ
@given(st.lists(st.one_of(JSON_FRAMES, FRAMES), max_size=4), st.data())
def test_json_lines(frames: list[bytes], data: st.DataObject) -> None:
    stream = b"".join(frame + b"\n" for frame in frames)
    framer = JsonFramer()
    out = [frame for chunk in data.draw(chunked(stream)) for frame in framer.feed(chunk)]
    out += framer.flush()
    lines = [line for line in stream.split(b"\n") if line.strip()]
    assert out == lines


@FUZZ
@given(st.lists(CBOR, max_size=4), st.data())
def test_cbor_sequence(items: list[bytes], data: st.DataObject) -> None:
    stream = b"".join(items)
    framer = CborSeqFramer()
    out = [frame for chunk in data.draw(chunked(stream)) for frame in framer.feed(chunk)]
    out += framer.flush()
    assert b"".join(out) == stream  # cut into items, or the rest as one last frame


@FUZZ
@given(st.lists(fuzzed(lambda: seeds().json_bodies), min_size=1, max_size=3), st.data())
@example([b""], None)  # an empty member
def test_gzip_members(bodies: list[bytes], data: st.DataObject | None) -> None:
    """Several gzip members (a compressed watch list), in chunks: the bodies, whole."""
    stream = b"".join(gzip.compress(body) for body in bodies)
    chunks = data.draw(chunked(stream)) if data else [stream]
    inflater = Inflater("gzip")
    assert b"".join(inflater.feed(chunk) for chunk in chunks) == b"".join(bodies)
    assert inflater.error is None


@FUZZ
@given(st.sampled_from(("gzip", "deflate")), fuzzed(lambda: seeds().json_bodies), st.data())
def test_broken_compression(encoding: str, body: bytes, data: st.DataObject) -> None:
    """Compressed bytes mutated: never raises; either inflates or says why and hands on."""
    compressed = gzip.compress(body) if encoding == "gzip" else zlib.compress(body)
    broken = data.draw(fuzzed(lambda: (compressed,)))
    inflater = Inflater(encoding)
    out = b"".join(inflater.feed(chunk) for chunk in data.draw(chunked(broken)))
    assert isinstance(out, bytes)
    if inflater.error is not None:
        assert inflater.error.startswith(f"not {encoding} data")
