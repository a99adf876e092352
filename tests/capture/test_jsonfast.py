"""`capture.jsonfast`: the same values and bytes as `json`, wherever orjson would differ."""

from __future__ import annotations

import json
import math
import random
import struct
from typing import Any

import pytest

from k8s_wiretap.capture import jsonfast

# Texts orjson reads otherwise than `json` does, or refuses where `json` reads them
TEXTS = [
    b'{"n": 123456789012345678901234567890}',  # orjson: a float; json: the integer
    b'{"n": -123456789012345678901}',
    b'{"n": 18446744073709551615}',  # the largest unsigned 64-bit integer
    b'{"n": NaN, "m": Infinity, "o": -Infinity}',
    b'{"n": 1e400}',  # json: infinity
    b'{"s": "\\ud800"}',  # a lone surrogate
    b'\xef\xbb\xbf{"bom": true}',
    b'{"a": 1, "a": 2}',
    b'{"f": 1e-7, "g": 0.00001, "h": 1.5e-300, "i": 1e16, "j": -0.0}',
    '{"s": "é"}'.encode("utf-16"),
]


def _same(a: Any, b: Any) -> bool:
    """Equal, with the same types all the way down (1 and 1.0 differ), NaN equal to NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


@pytest.mark.parametrize("text", TEXTS)
def test_loads_reads_as_json_reads(text: bytes) -> None:
    assert _same(jsonfast.loads(text), json.loads(text))


def _outcome(loads: Any, text: bytes) -> tuple[str, Any]:
    try:
        return "value", loads(text)
    except (ValueError, RecursionError) as error:
        return type(error).__name__, str(error)


@pytest.mark.parametrize(
    "text", [b'{"a": ', b"[1,]", b'"\x01"', b"\xff", b"[" * 100_000 + b"]" * 100_000]
)
def test_loads_raises_as_json_raises(text: bytes) -> None:
    said = _outcome(json.loads, text)
    assert said[0] != "value"
    assert _outcome(jsonfast.loads, text) == said


def test_a_writer_writes_the_bytes_json_writes() -> None:
    writer = jsonfast.Writer()
    rng = random.Random(30)
    floats = [struct.unpack("d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(2000)]
    floats += [rng.uniform(-1, 1) * 10.0 ** rng.randint(-12, 20) for _ in range(2000)]
    floats += [1e-5, 1e-6, 9.99e-5, 1e-4, 1e16, 1e22, -0.0, 5e-324]
    finite = [f for f in floats if math.isfinite(f)]
    values: list[Any] = [*finite, [finite[:50]], *({"f": f, "s": "x"} for f in finite)]
    values += [
        2**64,  # past orjson's integers
        {1: "a key that is no string"},
        'control \x00\x1f\x7f\u2028 and quotes " \\ and é',
        {"list": [1, 2.5, None, True, "x"], "tuple": (1, 2)},
        {"e-6": "a name e-6, not a number", "n": "kube-system"},
    ]
    for value in values:
        assert writer(value) == jsonfast.exact(value), value
    assert jsonfast.exact({"a": [1, 0.5]}) == b'{"a":[1,0.5]}'


def test_a_writer_writes_with_json_once_json_read_a_value() -> None:
    """NaN and the infinities orjson writes as null: only `json` reads them (orjson refuses
    them), and from then on a writer made before writes as `json` does."""
    writer = jsonfast.Writer()
    value = jsonfast.loads(b'{"n": NaN, "m": -Infinity}')
    assert writer(value) == b'{"n":NaN,"m":-Infinity}' == jsonfast.exact(value)
    assert jsonfast.Writer()(value) != jsonfast.exact(value)  # orjson's null, were it asked
