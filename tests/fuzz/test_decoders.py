"""Fuzzing the decoders: real bodies and watch frames from the lab's recording, mutated, and
arbitrary bytes. Each entry point returns, or raises its module's documented error, and
nothing else (tests/fuzz/seeds.py says how the inputs are made and how long it runs).

- protobuf (`decode_object`, `decode_watch_event`, `decode_schemaless`): DecodeError;
- gnostic OpenAPI documents (v2, v3): DecodeError (ProtoError);
- CBOR (`decode_cbor`, `decode_cbor_watch_event`): CborDecodeError;
- `decode_body`, `decode_frame`, `decode_stream`: never raise; an error they report names a
  documented error type, never a bug's (KeyError, TypeError, AttributeError ...).
"""

from __future__ import annotations

import contextlib
import json

from hypothesis import example, given
from hypothesis import strategies as st

from k8s_wiretap.decode import DecodeError, decode_object, decode_schemaless, decode_watch_event
from k8s_wiretap.decode.body import decode_body
from k8s_wiretap.decode.cbor import CborDecodeError, decode_cbor, decode_cbor_watch_event
from k8s_wiretap.decode.gnostic import openapi_from_gnostic
from k8s_wiretap.decode.gnostic_v3 import openapi_v3_from_gnostic
from k8s_wiretap.decode.watch import WatchEvent, decode_frame, decode_stream
from k8s_wiretap.kube.release import CURRENT
from k8s_wiretap.wire.envelope import MAGIC
from tests.fuzz.seeds import FUZZ, fuzzed, seeds

RELEASES = st.sampled_from((None, "1.20", CURRENT.minor_version))
PROTO = fuzzed(lambda: seeds().proto_bodies)
FRAMES = fuzzed(lambda: seeds().proto_frames)
JSON = fuzzed(lambda: seeds().json_bodies)
CBOR = fuzzed(lambda: seeds().cbor_bodies)
ANY_BODY = st.one_of(PROTO, JSON, CBOR, FRAMES)
CONTENT_TYPES = st.sampled_from(
    (
        "",
        "application/json",
        "application/vnd.kubernetes.protobuf",
        "application/cbor",
        "application/yaml",
        "application/apply-patch+yaml",
        "application/strategic-merge-patch+json",
        "text/plain",
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
        "application/com.github.proto-openapi.spec.v3.v1.0+protobuf",
    )
)
STREAM_TYPES = st.sampled_from(
    (
        "application/json",
        "application/vnd.kubernetes.protobuf;stream=watch",
        "application/cbor-seq",
        "",
    )
)
# The errors a decoder reports on bad input. A reason naming anything else is a bug.
DOCUMENTED = (
    "ProtoError",
    "CborDecodeError",
    "CborError",
    "JSONDecodeError",
    "ValueError",
    "UnicodeDecodeError",
    "YAMLError",
    "ScannerError",
    "ParserError",
    "ComposerError",
    "ConstructorError",
    "ReaderError",
    "EmitterError",
    "RepresenterError",
)


def assert_documented(error: str | None) -> None:
    """An undecodable body's reason ("undecodable: Type: message ...") names a documented
    error type, or none at all (the decoder's own words)."""
    if error is None:
        return
    named = error.split(":", 2)[1].strip() if error.count(":") >= 2 else ""
    if named.isidentifier() and named[0].isupper() and named.endswith("Error"):
        assert named in DOCUMENTED, error


@FUZZ
@given(PROTO, RELEASES)
def test_protobuf_objects(data: bytes, release: str | None) -> None:
    with contextlib.suppress(DecodeError):
        assert isinstance(decode_object(data, release=release), dict)


@FUZZ
@given(FRAMES, RELEASES)
def test_protobuf_watch_events(frame: bytes, release: str | None) -> None:
    try:
        event = decode_watch_event(frame, release=release)
        assert isinstance(event, dict)
    except DecodeError:
        pass


@FUZZ
@given(st.one_of(PROTO, FRAMES, PROTO.map(lambda d: d.removeprefix(MAGIC))))
def test_protobuf_schemaless(data: bytes) -> None:
    with contextlib.suppress(DecodeError):
        assert isinstance(decode_schemaless(data), dict)


@FUZZ
@given(st.one_of(PROTO, FRAMES, st.binary(max_size=512)))
def test_gnostic_openapi(data: bytes) -> None:
    for decoder in (openapi_from_gnostic, openapi_v3_from_gnostic):
        with contextlib.suppress(DecodeError):
            assert isinstance(decoder(data), dict)


@FUZZ
@given(CBOR, RELEASES)
def test_cbor_bodies(data: bytes, release: str | None) -> None:
    with contextlib.suppress(CborDecodeError):
        decode_cbor(data, release=release)


@FUZZ
@given(CBOR)
def test_cbor_watch_events(data: bytes) -> None:
    try:
        event = decode_cbor_watch_event(data)
        assert isinstance(event.get("type"), str)
    except CborDecodeError:
        pass


@FUZZ
@given(ANY_BODY, CONTENT_TYPES, RELEASES)
def test_decode_body_never_raises(data: bytes, content_type: str, release: str | None) -> None:
    decoded = decode_body(data, content_type, release=release)
    assert decoded.ok or decoded.error
    assert_documented(decoded.error)


def summed_up(event: WatchEvent) -> None:
    """What the views and explanations ask of every event: none of it may raise."""
    assert isinstance(event.summary(), dict)
    assert isinstance(event.kind, str) and isinstance(event.name, str)
    assert isinstance(event.partial, bool) and isinstance(event.ends_initial_events, bool)


@FUZZ
@given(st.one_of(FRAMES, JSON, CBOR), STREAM_TYPES, RELEASES)
@example(b"[1]", "application/json", None)  # a JSON frame that is no object: a bug's error
@example(b"{}", "application/json", None)  # an object that is no event: reported, not blank
def test_decode_frame_never_raises(frame: bytes, content_type: str, release: str | None) -> None:
    event = decode_frame(frame, content_type, release=release)
    assert_documented(event.error)
    if event.error is None and content_type == "application/json":
        assert isinstance(json.loads(frame).get("type"), str)  # an event, not any JSON
    summed_up(event)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
OBJECTS = st.fixed_dictionaries(
    {},
    optional={
        "kind": st.sampled_from(("Table", "PartialObjectMetadata", "ConfigMap", "Status")),
        "rows": JSON_VALUES,
        "metadata": JSON_VALUES,
        "code": st.sampled_from((410, "410", None)),
    },
)
EVENT_TYPES = st.sampled_from(("ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR", ""))


@FUZZ
@given(EVENT_TYPES, st.one_of(OBJECTS, JSON_VALUES))
@example("ADDED", {"kind": "Table", "rows": [1]})  # a Table row that is no object
def test_odd_events_are_summed_up(type_: str, obj: object) -> None:
    """Well-formed JSON events with odd objects (a Table whose rows are not rows ...)."""
    frame = json.dumps({"type": type_, "object": obj}).encode()
    event = decode_frame(frame, "application/json")
    assert event.error is None and event.type == type_
    summed_up(event)


@FUZZ
@given(st.lists(st.one_of(FRAMES, JSON, CBOR), max_size=4), STREAM_TYPES, st.data())
def test_decode_stream_never_raises(
    frames: list[bytes], content_type: str, data: st.DataObject
) -> None:
    if "stream=watch" in content_type:
        stream = b"".join(len(f).to_bytes(4, "big") + f for f in frames)
    else:
        stream = b"\n".join(frames)
    cut = data.draw(st.integers(0, len(stream)))
    for event in decode_stream(stream[:cut], content_type):
        assert_documented(event.error)
        summed_up(event)
