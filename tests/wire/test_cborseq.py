"""Where a CBOR data item ends: heads are read, values skipped, bad bytes refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from k8s_wiretap.wire.cborseq import MAX_DEPTH, SELF_DESCRIBED, CborError, item_end

# A real watch list of the default release's lab's leases, asked for as CBOR (application/cbor-seq).
STREAM = (Path(__file__).parent / "fixtures" / "leases-watch-list.cbor-seq").read_bytes()


def items(data: bytes) -> list[bytes]:
    found, offset = [], 0
    while offset < len(data):
        end = item_end(data, offset)
        assert end is not None
        found.append(data[offset:end])
        offset = end
    return found


def test_the_server_writes_one_self_described_item_per_event() -> None:
    events = items(STREAM)
    assert len(events) == 7
    assert all(event.startswith(SELF_DESCRIBED) for event in events)
    assert b"".join(events) == STREAM


def test_every_proper_prefix_of_an_item_is_incomplete() -> None:
    first = items(STREAM)[0]
    assert all(item_end(first[:cut]) is None for cut in range(len(first)))


@pytest.mark.parametrize(
    ("hex_item", "size"),
    [
        ("00", 1),
        ("1bffffffffffffffff", 9),  # the largest head
        ("f93c00", 3),  # float16 1.0
        ("5f42010243030405ff", 9),  # indefinite-length byte string in two chunks
        ("9f018202039f0405ffff", 10),  # indefinite arrays, nested
        ("bf6346756ef563416d7421ff", 12),  # indefinite map
        ("d9d9f7d6420001", 7),  # self-described, then tag 22 around a byte string
        ("a0", 1),
        ("80", 1),
    ],
)
def test_items_of_every_shape(hex_item: str, size: int) -> None:
    data = bytes.fromhex(hex_item)
    assert item_end(data + b"\x00") == size
    assert item_end(data[:-1]) is None


@pytest.mark.parametrize(
    ("hex_item", "reason"),
    [
        ("1c", "reserved additional information 28"),
        ("ff", "a break outside an indefinite-length item"),
        ("a1ff", "a break outside"),
        ("1f", "indefinite length for major type 0"),
        ("5f6161ff", "a bad chunk"),  # a text chunk in a byte string
        ("5f5f4101ffff", "a bad chunk"),  # an indefinite chunk
        ("f801", "simple value 1 in two bytes"),
    ],
)
def test_malformed_items_say_why(hex_item: str, reason: str) -> None:
    with pytest.raises(CborError, match=reason):
        item_end(bytes.fromhex(hex_item))


def test_nesting_is_bounded_as_in_apimachinery() -> None:
    deep = b"\x81" * (MAX_DEPTH + 2) + b"\x00"
    with pytest.raises(CborError, match="nested deeper"):
        item_end(deep)
    assert item_end(b"\x81" * 100 + b"\x00") == 101
