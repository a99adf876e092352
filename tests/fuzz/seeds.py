"""Seeds for the fuzz tests: real bodies, watch frames, patches and recording lines from the
committed recording of the lab (tests/recorded.py), and the hypothesis strategies that
mutate them (bytes flipped, inserted, deleted; cut short; two seeds spliced) beside
arbitrary bytes.

`FUZZ` is the settings of every fuzz test: `FUZZ_EXAMPLES` examples (200 by default, which
keeps `make unit` fast; `FUZZ_EXAMPLES=20000` for a long run), derandomized so that CI runs
the same cases every time, and a deadline that a hang cannot pass.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import cache
from typing import Any

import cbor2
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from k8s_wiretap.decode.body import decode_body
from tests.recorded import STORY, story

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "200"))
FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=timedelta(seconds=5),  # a slow shared machine; a hang goes far beyond
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)
LARGEST = 64 * 1024  # bigger seeds make every example slow; the small ones cover the formats
PER_KIND = 24


@dataclass(frozen=True)
class Seeds:
    """Real inputs, by kind, from the committed recording of the lab."""

    json_bodies: tuple[bytes, ...]
    proto_bodies: tuple[bytes, ...]
    proto_frames: tuple[bytes, ...]  # protobuf watch events, no length prefix
    json_frames: tuple[bytes, ...]
    cbor_bodies: tuple[bytes, ...]  # the JSON objects as the API server writes CBOR
    patches: tuple[tuple[str, bytes, dict[str, Any]], ...]  # content type, body, object
    lines: tuple[bytes, ...]  # the recording's first lines, header first


def _some(items: list[bytes]) -> tuple[bytes, ...]:
    """Up to PER_KIND distinct small items, spread over the list."""
    small = list(dict.fromkeys(item for item in items if 0 < len(item) <= LARGEST))
    step = max(1, len(small) // PER_KIND)
    return tuple(small[::step][:PER_KIND])


@cache
def seeds() -> Seeds:
    recording = story()
    json_bodies: list[bytes] = []
    proto_bodies: list[bytes] = []
    proto_frames: list[bytes] = []
    json_frames: list[bytes] = []
    patches: list[tuple[str, bytes, dict[str, Any]]] = []
    for exchange in recording.exchanges:
        for body, content_type in (
            (exchange.request.body, exchange.request.header("content-type")),
            (exchange.end.body if exchange.end else None, exchange.response_header("content-type")),
        ):
            if body is None or body.truncated:
                continue
            if content_type.startswith("application/vnd.kubernetes.protobuf"):
                proto_bodies.append(body.data)
            elif "json" in content_type or "yaml" in content_type:
                json_bodies.append(body.data)
        stream = exchange.response_header("content-type")
        for event in exchange.watch_events()[:4]:
            (json_frames if "json" in stream else proto_frames).append(event.data.data)
        if exchange.request.method == "PATCH" and exchange.request.body and exchange.end:
            after = decode_body(exchange.end.body.data if exchange.end.body else b"")
            if isinstance(after.value, dict):
                content_type = exchange.request.header("content-type")
                patches.append((content_type, exchange.request.body.data, after.value))
    objects = [decode_body(body).value for body in _some(json_bodies)]
    cbor_bodies = [cbor2.dumps(cbor2.CBORTag(55799, value)) for value in objects if value]
    with gzip.open(STORY, "rb") as handle:
        lines = tuple(handle.readline() for _ in range(40))
    return Seeds(
        _some(json_bodies),
        _some(proto_bodies),
        _some(proto_frames),
        _some(json_frames),
        tuple(cbor_bodies),
        tuple(patches[:: max(1, len(patches) // PER_KIND)]),
        lines,
    )


@st.composite
def mutated(draw: st.DrawFn, seed: bytes) -> bytes:
    """`seed` with a few random edits: bytes flipped, set, inserted or deleted, cut short."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(0, 4))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        edit = draw(st.sampled_from(("flip", "set", "insert", "delete", "cut")))
        if edit == "flip":
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif edit == "set":
            data[at] = draw(st.sampled_from((0x00, 0x7F, 0x80, 0xFF, draw(st.integers(0, 255)))))
        elif edit == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif edit == "delete":
            del data[at : at + draw(st.integers(1, 8))]
        else:
            del data[at:]
    return bytes(data)


def fuzzed(pool: Callable[[], tuple[bytes, ...]]) -> st.SearchStrategy[bytes]:
    """A seed from `pool()` as it is, mutated, two spliced, or arbitrary bytes."""
    seed = st.deferred(lambda: st.sampled_from(pool()))
    spliced = st.tuples(seed, seed, st.floats(0, 1)).map(
        lambda t: t[0][: int(len(t[0]) * t[2])] + t[1][int(len(t[1]) * t[2]) :]
    )
    return st.one_of(seed, seed.flatmap(mutated), spliced, st.binary(max_size=256))


def chunked(data: bytes) -> st.SearchStrategy[list[bytes]]:
    """`data` cut into chunks at arbitrary places (a stream's arrival)."""
    cuts = st.lists(st.integers(0, len(data)), max_size=8).map(sorted)
    return cuts.map(
        lambda points: [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    )
