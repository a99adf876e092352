"""Fuzzing the recording reader (capture/reader.py): the first lines of the lab's recording,
some mutated (bytes flipped, cut short; a field's value replaced by another JSON value),
plain or gzip-compressed, cut anywhere. `load` returns a Recording, whose exchanges answer
what the views ask, or raises RecordingError; nothing else.
"""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from k8s_wiretap.capture.reader import RecordingError, load
from tests.fuzz.seeds import FUZZ, mutated, seeds

ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**65), 2**65),
    st.floats(allow_nan=False),
    st.text(max_size=6),
    st.lists(st.text(max_size=4), max_size=2),
    st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=2),
)


@st.composite
def odd_field(draw: st.DrawFn, line: bytes) -> bytes:
    """`line` with one of its fields (or a field of its body or client) set to an odd value."""
    try:
        record = json.loads(line)
    except ValueError:
        return line  # mutated before: not JSON any more
    if not isinstance(record, dict) or not record:
        return line
    holder = record
    nested = [k for k, v in record.items() if isinstance(v, dict) and v]
    if bool(nested) and draw(st.booleans()):
        holder = record[draw(st.sampled_from(nested))]
    key = draw(st.sampled_from(sorted(holder)))
    holder[key] = draw(ODD_VALUES)
    return json.dumps(record).encode() + b"\n"


@st.composite
def recordings(draw: st.DrawFn) -> bytes:
    lines = list(seeds().lines)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(lines) - 1))
        if draw(st.booleans()) and lines[at].startswith(b"{") and lines[at].endswith(b"}\n"):
            lines[at] = draw(odd_field(lines[at]))
        else:
            lines[at] = draw(mutated(lines[at]))
    data = b"".join(lines)
    data = data[: draw(st.integers(len(data) // 2, len(data)))]
    return gzip.compress(data, mtime=0) if draw(st.booleans()) else data


@FUZZ
@given(recordings(), st.booleans())
def test_load_reads_or_refuses(data: bytes, cut_gzip: bool) -> None:
    if cut_gzip and data[:2] == b"\x1f\x8b":
        data = data[: len(data) * 3 // 4]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.jsonl"
        path.write_bytes(data)
        try:
            recording = load(path)
        except RecordingError:
            return
    for exchange in recording.exchanges:
        exchange.response_header("content-type")
        exchange.watch_events()
        assert isinstance(exchange.request.path, str)
