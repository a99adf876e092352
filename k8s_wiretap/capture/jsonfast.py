"""JSON read and written exactly as the standard library's `json` reads and writes it, at
orjson's speed where the two agree (what an import of a big log spends most of its time on).

- `loads(data)`: `json.loads(data)`'s value (and its errors); `read(data)`, the same, the
  count of its opening brackets and whether `json` read it. orjson reads it, unless it
  refuses the text (NaN and Infinity, a number too big for a double, a lone surrogate, a
  byte order mark, text that is no UTF-8, a nesting past 1,024: `json` reads what it can
  of those) or the text has a run of 20 digits, or of 19 after a minus sign (orjson reads
  an integer past 64 bits, below -2**63 or above 2**64 - 1, as a float, `json` as an
  integer): then `json` reads it, and it is counted (`Writer`).
- `exact(value)`: `json.dumps(value, separators=(",", ":"), ensure_ascii=False)` as UTF-8,
  the way a recording's lines are written (`capture.outputs`).
- `Writer()(value)`: `exact(value)`, written by orjson where its bytes are the same. orjson
  refuses integers past 64 bits, keys that are no strings and lone surrogates (`json` then
  writes them), and spells some floats differently: under 1e-4 (`0.00001` for `1e-05`,
  `1e-6` for `1e-06`), which a quick look at its bytes finds, and NaN and the infinities
  (`null`), which it cannot: a Writer is for values `loads` read (and numbers its caller
  checked finite), and once `loads` has read any value with `json` since the Writer was
  made, it writes everything with `json`. `Writer(read=True)` is for values whose floats
  all come from `loads` (the numbers its caller makes being integers, or floats of 1e-4
  and more): it writes orjson's bytes unlooked-at as long as no text `loads` has read in
  the process may hold a float under 1e-4 (`0.0000`, or a negative exponent ending a
  number: `loads` looks for them in the text it scans for runs of digits anyway); once
  one has, it looks at every value's bytes.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

__all__ = ["Writer", "exact", "exact_line", "loads", "read", "read_by_json", "small_texts"]

# every digit a 0, an exponent's E an e, every opening bracket a `[` (`read` counts them)
_DIGITS = bytes.maketrans(b"123456789E{", b"000000000e[")
# A run of 19 digits, once every digit is a 0: of 20 and more, or after a minus sign, an
# integer orjson reads past 64 bits (it takes -2**63 to 2**64 - 1)
_LONG = b"0" * 19
_LONGER = _LONG + b"0"
_NEGATIVE_LONG = b"-" + _LONG
# The text of a float under 1e-4 (what `loads` reads of it with orjson, `Writer`): one with
# a negative exponent (once every digit is a 0 and E an e), the number ending after it (a
# UUID's `4e-4f` or `5e-4123-` is no number), or one of `0.0000` and more digits, the
# number starting there (a time's `40.000034Z` is none)
_EXPONENT = b"0e-0"
_NEGATIVE_EXPONENT = re.compile(rb"0e-0+(?:[,\]}\s]|\Z)")
_DECIMAL = b"0.0000"
_SMALL_DECIMAL = re.compile(rb"(?:\A|[^0-9.])-?0\.0000")
# orjson's spelling of a float under 1e-4 that `json` spells otherwise: a one-digit negative
# exponent (`json` writes two digits) ending the number (a `,`, `]`, `}` or the end follow
# it: a string's `node-1"` does not match), or, from 1e-5 to 1e-4, no exponent at all
_SMALL = re.compile(rb"e-[0-9](?:[,\]}]|\Z)")
_read_by_json = 0  # values `loads` gave to `json` to read (see `Writer`)
_small_texts = 0  # texts `loads` gave orjson that may hold a float under 1e-4 (`Writer`)


def loads(data: bytes | str) -> Any:
    """`json.loads(data)`, read by orjson where it reads the same (see the module)."""
    if isinstance(data, bytes):
        return read(data)[0]
    global _read_by_json
    _read_by_json += 1
    return json.loads(data)


def read(data: bytes) -> tuple[Any, int, bool]:
    """`loads(data)`, how many opening brackets (`[`, `{`) its text holds (what a reader
    that bounds a value's nesting looks at first), told from the text `loads` scans anyway,
    and whether `json` read it (orjson refused it, or would read it otherwise)."""
    global _read_by_json, _small_texts
    digits = data.translate(_DIGITS)
    if _LONG not in digits or (_LONGER not in digits and _NEGATIVE_LONG not in digits):
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
        else:
            # a float under 1e-4: a number ending in a negative exponent, looked at where
            # each `0e-0` starts (a UUID's `5e-4` makes one in a fourth of an audit log's
            # lines), not searched for from the start of the text again; or `0.0000`
            at = digits.find(_EXPONENT)
            while at >= 0:
                if _NEGATIVE_EXPONENT.match(digits, at):
                    _small_texts += 1
                    break
                at = digits.find(_EXPONENT, at + 1)
            else:
                if _DECIMAL in data and _SMALL_DECIMAL.search(data):
                    _small_texts += 1
            return value, digits.count(b"["), False
    _read_by_json += 1
    return json.loads(data), digits.count(b"["), True


def read_by_json() -> int:
    """How many values `loads` has given to `json` to read: what orjson refused (a lone
    surrogate, among others) is read there, so a value read while it stays the same holds
    none of that."""
    return _read_by_json


def small_texts() -> int:
    """How many texts `loads` has read with orjson that may hold a float under 1e-4 (whose
    bytes orjson writes otherwise than `json`): while it is 0, a `Writer(read=True)` writes
    orjson's bytes as they are."""
    return _small_texts


def exact(value: Any) -> bytes:
    """`value` as a recording's line holds it (`json`, compact, not ASCII-escaped), UTF-8."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def exact_line(value: Any) -> bytes:
    """`exact(value)` and a newline: a line of a recording."""
    return exact(value) + b"\n"


class Writer:
    """`exact`, written by orjson where its bytes are the same (see the module); `line`,
    `exact_line` so written."""

    def __init__(self, *, read: bool = False) -> None:
        self._reads = _read_by_json
        self._read = read

    def __call__(self, value: Any) -> bytes:
        if _read_by_json != self._reads:
            return exact(value)
        try:
            fast = orjson.dumps(value)
        except TypeError:  # orjson.JSONEncodeError: a big integer, a key, a surrogate
            return exact(value)
        if self._read and not _small_texts:
            return fast  # no float it holds is under 1e-4 (see the module)
        if b"0.0000" in fast or _SMALL.search(fast):
            return exact(value)
        return fast

    def line(self, value: Any) -> bytes:
        """`self(value)` and a newline, orjson's appended as it writes (no copy)."""
        if _read_by_json != self._reads:
            return exact_line(value)
        try:
            fast = orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE)
        except TypeError:
            return exact_line(value)
        if self._read and not _small_texts:
            return fast
        if b"0.0000" in fast or _SMALL.search(fast, 0, len(fast) - 1):
            return exact_line(value)
        return fast
