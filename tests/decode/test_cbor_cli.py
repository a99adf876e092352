"""`k8s-wiretap decode` on CBOR: a cbor-seq watch stream from standard input, a cut body."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from k8s_wiretap.wire.cborseq import item_end

STREAM = Path(__file__).parents[1] / "wire" / "fixtures" / "leases-watch-list.cbor-seq"


def decode(data: bytes, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "k8s_wiretap", "decode", *args, "-"],
        input=data,
        capture_output=True,
        check=False,
    )


def test_a_cbor_watch_stream_decodes_event_by_event() -> None:
    result = decode(STREAM.read_bytes(), "--content-type", "application/cbor-seq")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["type"] for line in lines] == ["ADDED"] * 3 + ["BOOKMARK"] + ["MODIFIED"] * 2 + [
        "BOOKMARK"
    ]
    assert list(lines[0]["object"])[:2] == ["kind", "apiVersion"]
    annotations = lines[3]["object"]["metadata"]["annotations"]
    assert annotations == {"k8s.io/initial-events-end": "true"}


def test_one_cbor_object_and_a_cut_one() -> None:
    data = STREAM.read_bytes()
    event = data[: item_end(data)]  # the first event alone
    result = decode(event, "-o", "json")  # no content type: the self-described tag says CBOR
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["type"] == "ADDED"
    cut = decode(event[:-4], "--content-type", "application/cbor")
    assert cut.returncode != 0
    assert b"undecodable: CborDecodeError" in cut.stderr and b"cut short" in cut.stderr
