"""`capture.jsonfast`: the same values and bytes as `json`, wherever orjson would differ."""

from __future__ import annotations

import json
import math
import random
import struct
from typing import Any

import orjson
import pytest

from k8s_wiretap.capture import jsonfast

# Texts orjson reads otherwise than `json` does, or refuses where `json` reads them
TEXTS = [
    b'{"n": 123456789012345678901234567890}',  # orjson: a float; json: the integer
    b'{"n": -123456789012345678901}',
    b'{"n": 18446744073709551615}',  # the largest unsigned 64-bit integer
    b'{"n": -9223372036854775809}',  # one below the smallest signed one: 19 digits
    b'{"n": [-9999999999999999999, -1000000000000000000]}',
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
        assert writer.line(value) == jsonfast.exact_line(value) == jsonfast.exact(value) + b"\n"
    assert jsonfast.exact({"a": [1, 0.5]}) == b'{"a":[1,0.5]}'


def test_a_writer_writes_with_json_once_json_read_a_value() -> None:
    """NaN and the infinities orjson writes as null: only `json` reads them (orjson refuses
    them), and from then on a writer made before writes as `json` does."""
    writer = jsonfast.Writer()
    value = jsonfast.loads(b'{"n": NaN, "m": -Infinity}')
    assert writer(value) == b'{"n":NaN,"m":-Infinity}' == jsonfast.exact(value)
    assert writer.line(value) == b'{"n":NaN,"m":-Infinity}\n'
    assert jsonfast.Writer()(value) != jsonfast.exact(value)  # orjson's null, were it asked


def _float_texts(value: float) -> list[str]:
    """Spellings of `value` JSON allows: json's and orjson's, fixed-point, exponents of both
    cases and signs, and the exponent's digits padded."""
    texts = [json.dumps(value), orjson.dumps(value).decode()]
    texts += [f"{value:.30f}", f"{value:e}", f"{value:E}", f"{value:.3e}".replace("e-0", "e-")]
    texts += [f"{value * 10:.2f}e-1", f"{value * 1e5:.17f}E-005"]
    return [t for t in texts if "inf" not in t and "nan" not in t]


def test_loads_finds_every_text_of_a_float_under_1e_4() -> None:
    """A text that holds a float under 1e-4 (orjson spells it otherwise than json) is
    counted, in every spelling and place (or read by json: a run of 20 digits); a time's
    fraction and a UUID's `4e-4` are not."""
    rng = random.Random(31)
    small = [rng.uniform(-1, 1) * 10.0 ** rng.randint(-300, -5) for _ in range(1000)]
    small += [1e-5, 9.99e-5, -1e-5, 5e-324, 2.5e-10, 1.5e-300]
    for value in small:
        assert 0 < abs(value) < 1e-4
        for text in _float_texts(value):
            if json.loads(text) == 0:  # a fixed-point spelling too short for it: 0.0
                continue
            assert abs(json.loads(text)) < 1e-4, text
            for document in (
                text,
                f"[{text}]",
                f'{{"a":{text}}}',
                f'{{"a": {text} }}',
                f"[1,{text},2]",
            ):
                before = jsonfast.small_texts() + jsonfast.read_by_json()
                jsonfast.loads(document.encode())
                assert jsonfast.small_texts() + jsonfast.read_by_json() == before + 1, document
    plain = [
        b'{"t":"2026-12-03T19:46:40.000034Z","u":"75d9644c-4e78-4e97-98e9-00000000005e"}',
        b'{"id":"a6b6a816-2df3-45e5-bc78-15a7f964005e","ip":"10.0.0.1","v":"5e-4123-9"}',
        b'{"n":[1,2.5,1e16,0.0001,100,-0.5],"s":"kube-system node-1e-5x"}',
    ]
    for line in plain:
        before = jsonfast.small_texts()
        jsonfast.loads(line)
        assert jsonfast.small_texts() == before, line


def test_a_writer_of_read_values_writes_the_bytes_json_writes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`Writer(read=True)` writes orjson's bytes unlooked-at until `loads` reads a text that
    may hold a float under 1e-4: every value read and written gives json's bytes."""
    rng = random.Random(32)
    floats = [rng.uniform(-1, 1) * 10.0 ** rng.randint(-12, 20) for _ in range(2000)]
    floats += [1e-5, 1e-6, 9.99e-5, 1e-4, 1e16, 1e22, -0.0]
    texts = [b'{"kind":"Pod","n":1,"f":2.5,"t":"2026-12-03T19:46:40.000034Z"}']
    texts += [f'{{"a":[{t}],"s":"kube-system"}}'.encode() for f in floats for t in _float_texts(f)]
    for text in texts:
        monkeypatch.setattr(jsonfast, "_small_texts", 0)  # each text judged on its own
        writer = jsonfast.Writer(read=True)  # (one that saw json read a text writes as json)
        assert writer(jsonfast.loads(text)) == jsonfast.exact(json.loads(text)), text
        assert writer.line(jsonfast.loads(text)) == jsonfast.exact_line(json.loads(text)), text
    assert jsonfast.small_texts() > 0  # the small floats were seen, and written as json does
