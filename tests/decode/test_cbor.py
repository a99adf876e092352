"""CBOR as apimachinery writes it, decoded to the JSON the API server would send.

Real bytes come from the default release's lab (a watch list of its leases, fetched as CBOR:
tests/wire/fixtures/leases-watch-list.cbor-seq); single data items built here pin each rule
of apimachinery's encoder and decoder (runtime/serializer/cbor/internal/modes) that the lab's
objects do not show: tag 22 around []byte, shortest floats, what is refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from k8s_wiretap.decode.body import decode_body
from k8s_wiretap.decode.cbor import cbor_value, decode_cbor, decode_cbor_watch_event
from k8s_wiretap.decode.watch import decode_frame, decode_stream
from k8s_wiretap.kube.release import CURRENT
from k8s_wiretap.wire.cborseq import item_end
from k8s_wiretap.wire.framing import CborSeqFramer
from tests.decode.same import assert_same

STREAM = (
    Path(__file__).parents[1] / "wire" / "fixtures" / "leases-watch-list.cbor-seq"
).read_bytes()
SEQ = "application/cbor-seq"
RELEASE = CURRENT.minor_version  # the fixture is the default release's lab's
SELF = "d9d9f7"


def frames() -> list[bytes]:
    framer = CborSeqFramer()
    return framer.feed(STREAM) + framer.flush()


def item(hex_item: str) -> bytes:
    return bytes.fromhex(SELF + hex_item.replace(" ", ""))


def test_a_real_watch_event_is_a_lease_in_the_servers_json_order() -> None:
    event = decode_cbor_watch_event(frames()[0], release=RELEASE)
    assert list(event) == ["type", "object"] and event["type"] == "ADDED"
    lease = event["object"]
    assert list(lease) == ["kind", "apiVersion", "metadata", "spec"]
    assert list(lease["metadata"])[:4] == ["name", "namespace", "uid", "resourceVersion"]
    spec = lease["spec"]
    assert isinstance(spec["leaseDurationSeconds"], int)
    assert spec["renewTime"].endswith("Z") and "." in spec["renewTime"]  # a MicroTime
    managed = lease["metadata"]["managedFields"][0]
    assert list(managed["fieldsV1"]) == ["f:metadata", "f:spec"]  # structured-merge-diff's


def test_byte_strings_are_go_strings_and_tag_22_is_base64() -> None:
    # {"a": h'00 01 02 ff' in tag 22, "b": "text" as a byte string, "c": a text string}
    value = cbor_value(item("a3 4161 d6 4400 0102ff 4162 4474657874 4163 6474657874"))
    assert value == {"a": "AAEC/w==", "b": "text", "c": "text"}
    assert cbor_value(item("42 c328")) == "\ufffd("  # invalid UTF-8 in a Go string: U+FFFD
    assert cbor_value(item("d5 4401020304")) == "AQIDBA"  # tag 21: base64url, unpadded
    assert cbor_value(item("d7 420aff")) == "0aff"  # tag 23: base16


def test_numbers_are_what_encoding_json_writes() -> None:
    assert cbor_value(item("f93c00")) == 1 and isinstance(cbor_value(item("f93c00")), int)
    assert cbor_value(item("f93e00")) == 1.5  # float16
    assert cbor_value(item("fb4415af1d78b58c40")) == 1e20
    assert cbor_value(item("3903e7")) == -1000
    assert cbor_value(item("1b7fffffffffffffff")) == 2**63 - 1


def test_times_are_strings_whatever_their_tag() -> None:
    assert cbor_value(item("c0 74 323031332d30332d32315432303a30343a30305a")) == (
        "2013-03-21T20:04:00Z"
    )
    assert cbor_value(item("c1 1a514b67b0")) == "2013-03-21T20:04:00Z"
    assert cbor_value(item("d9 0100 41 61")) == "a"  # an unknown tag (256): its content


@pytest.mark.parametrize(
    ("hex_item", "reason"),
    [
        ("", "cut short"),
        ("a1 4161", "cut short"),
        ("01 02", "1 bytes after the data item"),
        ("f97e00", "float nan is not allowed"),
        ("f97c00", "float inf is not allowed"),
        ("c2 4101", "a bignum is not allowed"),
        ("1bffffffffffffffff", "overflows int64"),
        ("f7", "undefined is not allowed"),
        ("a2 4161 01 4161 02", "uplicate"),
        ("a2 4161 01 6161 02", "duplicate map key 'a'"),
        ("a1 01 02", "map key 1 is not a string"),
        ("62 c328", "malformed CBOR"),  # invalid UTF-8 in a text string
        ("1c", "reserved additional information"),
    ],
)
def test_what_apimachinery_refuses_is_undecodable_with_a_reason(hex_item: str, reason: str) -> None:
    decoded = decode_body(item(hex_item), "application/cbor")
    assert decoded.format == "cbor" and decoded.value is None
    assert decoded.error is not None and decoded.error.startswith("undecodable: ")
    assert reason in decoded.error and "d9 d9 f7" in decoded.error


def test_the_self_described_tag_says_cbor_whatever_the_content_type() -> None:
    event = frames()[0]
    assert decode_body(event, "application/octet-stream").format == "cbor"
    assert decode_body(event, "").format == "cbor"
    plain = bytes.fromhex("a1 4161 01".replace(" ", ""))  # no tag, but labelled CBOR
    assert decode_body(plain, "application/cbor").value == {"a": 1}


def test_real_bytes_cut_or_corrupted_are_undecodable_never_raised() -> None:
    event = frames()[0]
    for broken in (event[:-1], event[: len(event) // 2], event[:3] + b"\x1c" + event[4:]):
        decoded = decode_body(broken, "application/cbor")
        assert decoded.error is not None and decoded.error.startswith("undecodable: ")
        watched = decode_frame(broken, SEQ)
        assert watched.error is not None and watched.error.startswith("undecodable: ")
    decoded = decode_body(event, "application/cbor")
    assert decoded.ok and decoded.value["type"] == "ADDED"


def test_a_watch_list_marks_initial_events_their_end_and_changes() -> None:
    events = list(decode_stream(STREAM, SEQ, RELEASE))
    assert [(e.type, e.phase) for e in events] == [
        ("ADDED", "initial"),
        ("ADDED", "initial"),
        ("ADDED", "initial"),
        ("BOOKMARK", "initial-end"),
        ("MODIFIED", "change"),
        ("MODIFIED", "change"),
        ("BOOKMARK", "change"),
    ]
    assert events[3].ends_initial_events and not events[6].ends_initial_events
    assert events[0].summary()["phase"] == "initial"
    assert [e.kind for e in events] == ["Lease"] * 7
    plain = list(decode_stream(STREAM, SEQ, RELEASE, watch_list=False))
    assert all(e.phase is None and "phase" not in e.summary() for e in plain)


def test_an_object_body_and_its_watch_event_agree() -> None:
    frame = frames()[4]
    event = decode_cbor_watch_event(frame, release=RELEASE)
    # the embedded object is a self-described item of its own: decode it alone
    start = frame.index(bytes.fromhex(SELF), 3)
    end = item_end(frame, start)
    assert end is not None
    assert_same(decode_cbor(frame[start:end], release=RELEASE), event["object"])
