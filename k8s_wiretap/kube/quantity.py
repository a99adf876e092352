"""resource.Quantity as the API server reads and writes it: ParseQuantity and String().

The one Quantity parser: the protobuf decoder renders quantities with it (a Quantity travels
in protobuf as its string; JSON writes `q.String()`, the value canonicalized in its format:
DecimalSI "1500m", BinarySI "1Gi", DecimalExponent "12e6"; ParseQuantity keeps the string as
is when it is already canonical), and patch comparison compares quantities by value with it
(`same_value`: "0.5" and "500m" are one value, as the server stores them).
Ported from apimachinery pkg/api/resource (quantity.go, amount.go, suffix.go) with exact
integer arithmetic; the int64 and inf.Dec code paths differ only where ParseQuantity makes
them (rounding to nano units, the BinarySI cap at 2^63-1), and those rules are kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Quantity", "QuantityError", "canonical_quantity", "parse_quantity", "same_value"]

DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT = "DecimalSI", "BinarySI", "DecimalExponent"
MAX_INT64 = (1 << 63) - 1
NANO = -9
MAX_INT64_FACTORS = 18
MAX_DIGITS = 4000  # Python's int() refuses longer decimal strings; Go would take them
SUFFIX_CHARS = frozenset("eEinumkKMGTP")
DIGITS = frozenset("0123456789")
EXPONENT = re.compile(r"[+-]?[0-9]+")

DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12}
DECIMAL_SUFFIXES |= {"P": 15, "E": 18}
BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
DECIMAL_BY_EXPONENT = {exponent: suffix for suffix, exponent in DECIMAL_SUFFIXES.items()}
BINARY_BY_EXPONENT = {exponent: suffix for suffix, exponent in BINARY_SUFFIXES.items()}


class QuantityError(ValueError):
    """A string that is not a Quantity (Go's ParseQuantity refuses it)."""


@dataclass(frozen=True)
class Quantity:
    """unscaled * 10**exponent, in `format`; `text` when ParseQuantity kept the string."""

    unscaled: int
    exponent: int
    format: str
    text: str | None = None

    def value(self) -> tuple[int, int]:
        """(unscaled, exponent) without trailing zeros: equal values have equal pairs.

        Exact, and cheap even for exponents of millions (nothing is raised to them).
        """
        unscaled, zeros = _strip_factors(self.unscaled, 10)
        return (unscaled, self.exponent + zeros) if unscaled else (0, 0)


@dataclass(frozen=True)
class Parts:
    positive: bool
    value: str
    num: str
    denom: str
    suffix: str


def _split(text: str) -> Parts:
    """Go's parseQuantityString: sign, numerator, denominator and suffix."""
    end, pos = len(text), 0
    positive = True
    if text[:1] in ("-", "+"):
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return Parts(positive, "0", "0", "", "")
    start = pos
    while pos < end and text[pos] in DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    if pos >= end:
        return Parts(positive, text, num, "", "")
    denom = ""
    if text[pos] == ".":
        start = pos = pos + 1
        while pos < end and text[pos] in DIGITS:
            pos += 1
        denom = text[start:pos]
        if pos >= end:
            return Parts(positive, text, num, denom, "")
    value, suffix_start = text[:pos], pos
    while pos < end and text[pos] in SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "-+":
        pos += 1
    while pos < end and text[pos] in DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(f"quantity {text!r} does not parse")
    return Parts(positive, value, num, denom, text[suffix_start:])


def _interpret(suffix: str) -> tuple[int, int, str]:
    """(base, exponent, format) of a suffix."""
    if suffix in DECIMAL_SUFFIXES:
        return 10, DECIMAL_SUFFIXES[suffix], DECIMAL_SI
    if suffix in BINARY_SUFFIXES:
        return 2, BINARY_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE" and EXPONENT.fullmatch(suffix[1:]):
        exponent = int(suffix[1:])
        if -(1 << 63) <= exponent <= MAX_INT64:
            return 10, _int32(exponent), DECIMAL_EXPONENT
    raise QuantityError(f"quantity suffix {suffix!r} unknown")


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _parse_decimal(value: str) -> tuple[int, int]:
    """inf.Dec's SetString: (unscaled, scale) of "[+-]digits[.digits]"."""
    sign = value[:1] if value[:1] in "+-" else ""
    body = value[len(sign) :]
    whole, _, fraction = body.partition(".")
    digits = whole + fraction
    if not digits or not digits.isdigit() or not digits.isascii():
        raise QuantityError(f"quantity number {value!r} does not parse")
    if len(digits) > MAX_DIGITS:
        raise QuantityError(f"quantity of {len(digits)} digits is too long")
    unscaled = int(digits)
    return (-unscaled if sign == "-" else unscaled), len(fraction)


def _round_up(unscaled: int, scale: int, to_scale: int) -> tuple[int, int]:
    """inf.Dec.Round(to_scale, RoundUp): away from zero."""
    if scale <= to_scale:
        return unscaled, scale
    if scale - to_scale > len(str(abs(unscaled))):  # |value| < one unit: 0 or ±1
        return (unscaled > 0) - (unscaled < 0), to_scale
    divisor = 10 ** (scale - to_scale)
    quotient, remainder = divmod(abs(unscaled), divisor)
    quotient += 1 if remainder else 0
    return (-quotient if unscaled < 0 else quotient), to_scale


def _int64_path(parts: Parts, text: str, exponent: int, fmt: str) -> Quantity | None:
    """ParseQuantity's fast path (int64Amount), or None when it does not apply."""
    mantissa = 1
    if fmt in (DECIMAL_EXPONENT, DECIMAL_SI):
        scale = exponent
        precision = MAX_INT64_FACTORS - (len(parts.num) + len(parts.denom))
    elif exponent >= 0 and not parts.denom:
        scale, mantissa = 0, 1 << exponent
        precision = 15 - len(parts.num) - int(exponent * 3 / 10) - 1
    else:
        return None
    scale -= len(parts.denom)
    if precision < 0 or scale < NANO:
        return None
    shifted = parts.num + parts.denom
    result = int(shifted) * mantissa
    if result > MAX_INT64:
        return None
    result = result if parts.positive else -result
    if fmt == BINARY_SI:
        canonical = exponent % 10 == 0 and (int(shifted) & 7) != 0
    else:
        canonical = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
    return Quantity(result, scale, fmt, text if canonical else None)


def _dec_path(parts: Parts, base: int, exponent: int, fmt: str) -> Quantity:
    """ParseQuantity's arbitrary-precision path (inf.Dec)."""
    unscaled, scale = _parse_decimal(parts.value)
    if base == 10:
        scale -= exponent
    else:
        unscaled <<= exponent
    negative = unscaled < 0
    unscaled = abs(unscaled)
    if unscaled != 0:
        unscaled, scale = _round_up(unscaled, scale, -NANO)
    if fmt == BINARY_SI and _compare(unscaled, scale, MAX_INT64) > 0:
        unscaled, scale = MAX_INT64, 0
    if fmt == BINARY_SI and unscaled and _compare(unscaled, scale, 1) < 0:
        fmt = DECIMAL_SI
    return Quantity(-unscaled if negative else unscaled, -scale, fmt)


def _compare(unscaled: int, scale: int, other: int) -> int:
    """Sign of (unscaled * 10**-scale) - other."""
    left, right = (unscaled, other * 10**scale) if scale >= 0 else (unscaled * 10**-scale, other)
    return (left > right) - (left < right)


def parse_quantity(text: str) -> Quantity:
    """Go's ParseQuantity; QuantityError if it refuses `text`."""
    if not text:
        raise QuantityError("empty quantity")
    if text == "0":
        return Quantity(0, 0, DECIMAL_SI, text)
    parts = _split(text)
    base, exponent, fmt = _interpret(parts.suffix)
    fast = _int64_path(parts, text, exponent, fmt)
    return fast if fast is not None else _dec_path(parts, base, exponent, fmt)


def _strip_factors(value: int, factor: int) -> tuple[int, int]:
    times = 0
    while value and value % factor == 0:
        value //= factor
        times += 1
    return value, times


def _decimal_text(quantity: Quantity, fmt: str) -> str:
    amount, times = _strip_factors(abs(quantity.unscaled), 10)
    amount = -amount if quantity.unscaled < 0 else amount
    exponent = quantity.exponent + times
    while exponent % 3:
        amount *= 10
        exponent -= 1
    if fmt == DECIMAL_SI:
        return f"{amount}{DECIMAL_BY_EXPONENT.get(exponent, '')}"
    return f"{amount}e{exponent}" if exponent else str(amount)


def _binary_text(whole: int) -> str:
    amount, times = _strip_factors(abs(whole), 1024)
    amount = -amount if whole < 0 else amount
    return f"{amount}{BINARY_BY_EXPONENT.get(times * 10, '')}"


def _as_whole(quantity: Quantity) -> tuple[int, bool]:
    """AsScale(0): the value rounded away from zero to an integer, and whether exactly."""
    if quantity.exponent >= 0:
        return quantity.unscaled * 10**quantity.exponent, True
    whole = _round_up(quantity.unscaled, -quantity.exponent, 0)[0]
    return whole, whole * 10**-quantity.exponent == quantity.unscaled


def canonicalize(quantity: Quantity) -> str:
    """Go's Quantity.String() of a parsed quantity."""
    if quantity.text is not None:
        return quantity.text
    if quantity.unscaled == 0:
        return "0"
    fmt = quantity.format
    if fmt == BINARY_SI:
        magnitude = _compare(abs(quantity.unscaled), -quantity.exponent, 1024)
        whole, exact = _as_whole(quantity)
        if magnitude < 0 or not exact:
            fmt = DECIMAL_SI
        else:
            return _binary_text(whole)
    return _decimal_text(quantity, fmt)


def canonical_quantity(text: str) -> str:
    """The JSON string of a Quantity whose protobuf string is `text`; QuantityError if invalid."""
    return canonicalize(parse_quantity(text))


def same_value(left: str, right: str) -> bool:
    """Whether two strings parse as quantities of the same value (False if either does not)."""
    try:
        return parse_quantity(left).value() == parse_quantity(right).value()
    except QuantityError:
        return False
