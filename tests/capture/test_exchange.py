"""The typed exchange: what later stages read from a record."""

from __future__ import annotations

import base64
import binascii

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from k8s_wiretap.capture import records
from k8s_wiretap.capture.exchange import Body, Request, Response
from k8s_wiretap.capture.format import body_bytes


def test_a_header_is_found_in_any_case_and_the_first_of_a_name_wins() -> None:
    headers = [["User-Agent", "kubectl"], ["user-agent", "later"], ["X", "1"]]
    request = Request.from_record(
        records.request(id="a", time=1, method="GET", path="/", headers=headers)
    )
    assert request.header("user-agent") == request.header("USER-AGENT") == "kubectl"
    assert request.header("accept") == ""
    response = Response(1.0, 200, headers=(("Content-Type", "application/json"),))
    assert response.header("content-type") == "application/json"
    assert Response(1.0, 200).header("content-type") == ""


def test_a_body_holds_its_text_or_its_base64() -> None:
    assert body_bytes({"text": "ünïcode"}) == "ünïcode".encode()
    assert body_bytes({"base64": base64.b64encode(b"\x00\xff").decode()}) == b"\x00\xff"
    assert body_bytes({"base64": "AP8=\n"}) == b"\x00\xff"
    assert body_bytes(None) == body_bytes({}) == b""
    body = Body.from_record({"base64": "AP8=", "size": 9, "truncated": True})
    assert body == Body(b"\x00\xff", 9, truncated=True)


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("not base64 ✗", "ValueError('string argument should contain only ASCII characters')"),
        ("YQ", "Error('Incorrect padding')"),
        (5, "TypeError(\"argument should be a bytes-like object or ASCII string, not 'int'\")"),
    ],
)
def test_bytes_that_are_not_base64_are_refused_in_base64s_words(value: object, error: str) -> None:
    with pytest.raises((ValueError, TypeError)) as caught:
        body_bytes({"base64": value})
    assert repr(caught.value) == error


@given(
    st.text(
        alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\n !-_é",
        max_size=40,
    )
)
@example("000=0")  # data after the padding: binascii stops, pybase64 read on
@example("AP8=\n")
def test_base64_reads_as_binascii_reads_it(text: str) -> None:
    """pybase64 does the reading; what it takes and refuses is binascii's, in its words."""
    try:
        expected: object = binascii.a2b_base64(text)
    except ValueError as error:
        expected = repr(error)
    try:
        got: object = body_bytes({"base64": text})
    except ValueError as error:
        got = repr(error)
    assert got == expected
