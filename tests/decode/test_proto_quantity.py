"""resource.Quantity renders as Go's ParseQuantity + String() do; the table is Go's own output.

The parser is kube/quantity.py, shared by the decoder (here) and patch comparison (by value).
"""

from __future__ import annotations

import pytest

from k8s_wiretap.decode.protobuf import DecodeError, render_message
from k8s_wiretap.kube.quantity import QuantityError, canonical_quantity, parse_quantity, same_value
from k8s_wiretap.wire.protowire import BYTES, Field, encode

QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"

# (protobuf string, JSON string or None when ParseQuantity fails), from apimachinery 1.20.2.
GO = [
    ("0", "0"),
    ("1", "1"),
    ("100m", "100m"),
    ("1000m", "1"),
    ("1500m", "1500m"),
    ("0.5", "500m"),
    ("1.5", "1500m"),
    ("+5", "+5"),  # already "canonical" by ParseQuantity's test: the string is kept
    ("05", "05"),
    ("-3", "-3"),
    ("1000", "1k"),
    ("1024", "1024"),
    ("64Mi", "64Mi"),
    ("1Gi", "1Gi"),
    ("1536Mi", "1536Mi"),
    ("1.5Gi", "1536Mi"),
    ("0.5Gi", "512Mi"),
    ("1Ki", "1Ki"),
    ("1023Ki", "1023Ki"),
    ("1024Ki", "1Mi"),
    ("2048Ki", "2Mi"),
    ("1.1Ki", "1126400m"),
    ("9Ei", "9223372036854775807"),  # BinarySI is capped at 2^63-1
    ("8Ei", "9223372036854775807"),
    ("-9Ei", "-9223372036854775807"),
    ("1E", "1E"),
    ("12e6", "12e6"),
    ("12E6", "12E6"),
    ("1e3", "1e3"),
    ("1e-3", "1e-3"),
    ("1e-12", "1e-9"),  # rounded up to the nano unit
    ("0.000000001", "1n"),
    ("0.0000000001", "1n"),
    ("123456789012345678901234567890", "123456789012345678901234567890"),
    ("1.000000000000000000001", "1000000001n"),
    ("100n", "100n"),
    ("1000n", "1u"),
    ("1u", "1u"),
    ("1.5k", "1500"),
    ("1M", "1M"),
    ("1T", "1T"),
    ("1P", "1P"),
    ("-0", "0"),
    ("000", "0"),
    (".", "0"),
    ("1.", "1."),
    (".5", "500m"),
    ("e3", "0"),
    ("-1Ki", "-1Ki"),
    ("-1025", "-1025"),
    ("-1.5Ki", "-1536"),
    ("2e+3", "2e+3"),
    ("7e-1", "700e-3"),
    ("1K", None),
    ("1Mb", None),
    ("1.2.3", None),
    ("", None),
    ("1 ", None),
    ("1e", None),
]


@pytest.mark.parametrize(("text", "rendered"), GO)
def test_quantity_renders_as_go_does(text: str, rendered: str | None) -> None:
    if rendered is None:
        with pytest.raises(QuantityError):
            canonical_quantity(text)
    else:
        assert canonical_quantity(text) == rendered


@pytest.mark.parametrize(("text", "rendered"), GO)
def test_the_decoder_renders_quantities_with_it(text: str, rendered: str | None) -> None:
    raw = encode([Field(1, BYTES, text.encode())])
    if rendered is None:
        with pytest.raises(DecodeError, match="quantit"):
            render_message(QUANTITY, raw)
    else:
        assert render_message(QUANTITY, raw) == rendered


def test_an_absurdly_long_quantity_is_refused_rather_than_slow() -> None:
    with pytest.raises(QuantityError, match="too long"):
        canonical_quantity("1" * 5000 + ".5")


@pytest.mark.parametrize(
    ("left", "right"),
    [("0.5", "500m"), ("1Gi", "1024Mi"), ("1e3", "1k"), ("1.0000000001", "1000000001n")],
)
def test_same_value_compares_parsed_values(left: str, right: str) -> None:
    assert same_value(left, right) and same_value(right, left)


@pytest.mark.parametrize(
    ("left", "right"), [("1", "2"), ("1Ki", "1k"), ("1", "1K"), ("1_000", "1k"), ("x", "x")]
)
def test_different_or_unparseable_quantities_are_not_the_same(left: str, right: str) -> None:
    assert not same_value(left, right)


def test_a_huge_exponent_compares_without_computing_it() -> None:
    assert same_value("1e2147483647", "10e2147483646")
    assert parse_quantity("1e2147483647").value() == (1, 2147483647)
