"""Scalars as Go holds them: integer conversions, Go's UTF-8, []byte, floats, embedded JSON.

The wire format itself (varints, field keys, bounds) is k8s_wiretap.wire.protowire's; these are
the pieces gogo-generated Unmarshal code and Go's encoding/json add on top:

- a varint (64 bits, wrapped) as int64 is two's complement, as int32 keeps the low 32 bits,
  as bool is "not zero";
- a string is any bytes; JSON writes each byte of an invalid UTF-8 sequence as U+FFFD (the
  `GO_UTF8` error handler does the same when decoding);
- raw JSON held in a field (RawExtension, FieldsV1, apiextensions JSON) is embedded as is.
"""

from __future__ import annotations

import base64
import codecs
import json
import struct
from typing import Any

import orjson

from k8s_wiretap.wire.protowire import (
    BYTES,
    FIXED32,
    FIXED64,
    MASK64,
    VARINT,
    ProtoError,
    read_varint,
)

__all__ = [
    "CONVERTERS",
    "FIXED_LAYOUTS",
    "GO_UTF8",
    "ZERO",
    "Reader",
    "as_int32",
    "as_int64",
    "b64",
    "embedded_json",
    "go_float",
    "no_long_digit_run",
    "read_string",
    "scalar_reader",
]

SIGN64 = 1 << 63
GO_UTF8 = "k8s-wiretap.go-utf8"
DOUBLE = struct.Struct("<d")
FLOAT = struct.Struct("<f")


def _replace_per_byte(error: UnicodeError) -> tuple[str, int]:
    """Like Go: each byte of an invalid sequence becomes one U+FFFD."""
    if not isinstance(error, UnicodeDecodeError):
        raise error
    return "\ufffd", error.start + 1


codecs.register_error(GO_UTF8, _replace_per_byte)


def as_int64(value: int) -> int:
    return value - (1 << 64) if value & SIGN64 else value


def as_int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def b64(data: bytes) -> str:
    """[]byte in JSON: standard base64 with padding."""
    return base64.b64encode(data).decode("ascii")


def _reject_constant(name: str) -> Any:
    raise ProtoError(f"{name} is not JSON")


_JSON = json.JSONDecoder(parse_constant=_reject_constant)


# A run of 19 digits may be an integer beyond 64 bits, which orjson reads as a float: found as
# a run of "0"s once every digit is one (faster than a regular expression, at C speed).
_DIGITS_AS_ZERO = bytes.maketrans(b"0123456789", b"0" * 10)
_LONG_RUN = b"0" * 19


def no_long_digit_run(raw: bytes) -> bool:
    """No run of 19 digits in `raw`: orjson, when it accepts such JSON, reads it as `json`
    does (it refuses what it would read otherwise: invalid UTF-8, lone surrogates, NaN, an
    overflowing float, a byte-order mark)."""
    return _LONG_RUN not in raw.translate(_DIGITS_AS_ZERO)


def embedded_json(raw: bytes) -> Any:
    """Raw JSON bytes a Go MarshalJSON would embed verbatim; ProtoError if not JSON.

    The value is `json`'s (Go's UTF-8, no NaN or Infinity, integers of any size) at orjson's
    speed (FieldsV1 in every object's managedFields): orjson reads it when it surely reads it
    alike, `json` what orjson refuses (invalid UTF-8, lone surrogates, an overflowing float
    or constant) and anything with a long run of digits.
    """
    if _LONG_RUN not in raw.translate(_DIGITS_AS_ZERO):  # no_long_digit_run, inline: hot
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    try:
        return _JSON.decode(raw.decode("utf-8", GO_UTF8))
    except (ValueError, RecursionError) as error:
        raise ProtoError(f"embedded JSON does not parse: {str(error)[:80]}") from None


# Varint conversions by proto type, as gogo assigns them to Go fields.
CONVERTERS: dict[str, Any] = {
    "int64": as_int64,
    "int32": as_int32,
    "bool": lambda value: value != 0,
    "uint64": lambda value: value & MASK64,
    "uint32": lambda value: value & 0xFFFFFFFF,
}
FIXED_LAYOUTS = {"double": DOUBLE, "float": FLOAT}
Reader = tuple[int, Any]  # (wire type, read(buf, pos, end) -> (value, pos))


def go_float(value: float) -> float | int:
    """A float as Go's JSON writes it: integral values below 1e21 without a fraction."""
    if value.is_integer() and abs(value) < 1e21:
        return int(value)
    return value


def read_string(buf: bytes, pos: int, end: int) -> tuple[str, int]:
    """A length-delimited string at `pos` and the position after it."""
    size, pos = read_varint(buf, pos)
    if pos + size > end:
        raise ProtoError("string runs past the end")
    return buf[pos : pos + size].decode("utf-8", GO_UTF8), pos + size


def _read_bytes(buf: bytes, pos: int, end: int) -> tuple[str, int]:
    size, pos = read_varint(buf, pos)
    if pos + size > end:
        raise ProtoError("bytes run past the end")
    return b64(buf[pos : pos + size]), pos + size


def _varint_reader(convert: Any) -> Reader:
    def read(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
        value, pos = read_varint(buf, pos)
        return convert(value), pos

    return VARINT, read


def _fixed_reader(layout: Any) -> Reader:
    def read(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
        if pos + layout.size > end:
            raise ProtoError("fixed-size value runs past the end")
        return go_float(layout.unpack_from(buf, pos)[0]), pos + layout.size

    return (FIXED64 if layout.size == 8 else FIXED32), read


def scalar_reader(proto_type: str) -> Reader:
    """How to read one scalar of `proto_type` on its own (map keys and values)."""
    if proto_type == "string":
        return BYTES, read_string
    if proto_type == "bytes":
        return BYTES, _read_bytes
    if proto_type in FIXED_LAYOUTS:
        return _fixed_reader(FIXED_LAYOUTS[proto_type])
    return _varint_reader(CONVERTERS[proto_type])


# Go's zero value of each scalar, in JSON.
ZERO: dict[str, Any] = {
    "string": "",
    "bytes": "",
    "bool": False,
    "double": 0.0,
    "float": 0.0,
    "int32": 0,
    "int64": 0,
    "uint32": 0,
    "uint64": 0,
}
