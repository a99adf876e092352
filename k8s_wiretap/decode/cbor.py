"""Kubernetes CBOR bodies as the API server's JSON of the same object.

    decode_cbor(body)               an `application/cbor` body → {"kind", "apiVersion", ...}
    decode_cbor_watch_event(frame)  an item of a `cbor-seq` watch → {"type", "object"}
    cbor_value(data)                the JSON value of any CBOR data item, keys as they came

How apimachinery writes CBOR (runtime/serializer/cbor, its internal/modes/encode.go, and the
MarshalCBOR methods of meta/v1 Time, MicroTime, FieldsV1, runtime.RawExtension, Quantity and
IntOrString), and what the same value is in the server's JSON:

- every encoded object starts with tag 55799, self-described CBOR (`d9 d9 f7`), also the
  object embedded in a watch event; the tag means nothing more and is dropped;
- Go strings and struct field names are *byte* strings (major type 2), not text strings:
  decoded as UTF-8 (invalid bytes become U+FFFD, as encoding/json writes them); text strings
  (from the default cbor.Marshal of Time, Quantity and raw objects) must be valid UTF-8;
- []byte is a byte string inside tag 22, "expected later base64 encoding": its JSON is the
  base64 string (tag 21 would be base64url, tag 23 base16);
- times are strings (RFC 3339, no time tag; a zero time is null); a tag 0 or 1 from another
  encoder is read as apimachinery reads it, as an RFC 3339 string; other unknown tags are
  their content (UnrecognizedTagContentToAny);
- integers are integers, floats the shortest IEEE width that keeps the value (float16 for
  1.0): a float with an integral value is what encoding/json writes as an integer; NaN,
  infinities, bignums, integers past int64, undefined and other simple values are refused,
  as apimachinery refuses them, and so are duplicate map keys and non-string map keys;
- maps are sorted bytewise (shorter keys first), or shuffled (the API server's
  nondeterministic encoding of responses and watch events): key order carries nothing, and
  the server's JSON order is put back from the release's schema (decode/cbor_order.py).

Anything that is not such a body raises CborDecodeError (a ValueError), nothing else.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import cbor2

from k8s_wiretap.decode.cbor_order import served_order, served_order_event
from k8s_wiretap.kube.release import ReleaseLike
from k8s_wiretap.wire.cborseq import CborError, item_end

__all__ = [
    "CborDecodeError",
    "cbor_value",
    "decode_cbor",
    "decode_cbor_watch_event",
]

INT64 = (-(2**63), 2**63 - 1)
MAX_DEPTH = 10_000  # apimachinery's MaxNestedLevels
_LATER_ENCODINGS = {21: "base64url", 22: "base64", 23: "base16"}


class CborDecodeError(CborError):
    """Not CBOR as apimachinery reads it; the message says why."""


class _Later:
    """A byte string under an expected-later-encoding tag, until it is turned into text."""

    __slots__ = ("data", "encoding")

    def __init__(self, data: bytes, encoding: str) -> None:
        self.data, self.encoding = data, encoding

    def text(self) -> str:
        if self.encoding == "base64":
            return base64.b64encode(self.data).decode()
        if self.encoding == "base64url":
            return base64.urlsafe_b64encode(self.data).decode().rstrip("=")
        return self.data.hex()


def _content(value: Any, immutable: bool) -> Any:
    return value


def _time_string(value: Any, immutable: bool) -> Any:
    """Tag 0 (a date-time string) stays the string; tag 1 (epoch seconds) becomes one."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        moment = datetime.fromtimestamp(value, UTC)
        text = moment.strftime("%Y-%m-%dT%H:%M:%S")
        if moment.microsecond:
            text += f".{moment.microsecond:06d}".rstrip("0")
        return text + "Z"
    return value


def _refuse(what: str) -> Any:
    def refuse(value: Any, immutable: bool) -> Any:
        raise CborDecodeError(f"{what} is not allowed")

    return refuse


# Tags cbor2 would give a meaning of its own (datetimes, decimals, sets, shared values...):
# apimachinery gives most of them none, so their content is taken as it is.
_SEMANTIC: dict[int, Any] = {
    tag: _content for tag in (4, 5, 25, 28, 29, 30, 35, 36, 37, 256, 258, 260, 261, 55799)
}
_SEMANTIC.update({0: _time_string, 1: _time_string, 2: _refuse("a bignum"), 3: _refuse("a bignum")})


def _tag_hook(tag: cbor2.CBORTag, immutable: bool) -> Any:
    encoding = _LATER_ENCODINGS.get(tag.tag)
    if encoding and isinstance(tag.value, bytes):
        return _Later(tag.value, encoding)
    return tag.value


def _load(data: bytes) -> Any:
    """One data item and nothing after it (Go's cbor.Unmarshal refuses extraneous data)."""
    stream = io.BytesIO(data)
    decoder = cbor2.CBORDecoder(
        stream,
        tag_hook=_tag_hook,
        semantic_decoders=_SEMANTIC,
        allow_duplicate_keys=False,
        max_depth=MAX_DEPTH,
        str_errors="strict",
        read_size=1,  # read no further than the item: what is left is extraneous
    )
    try:
        value = decoder.decode()
    except CborDecodeError:
        raise
    except (cbor2.CBORDecodeError, ValueError, RecursionError, OverflowError) as error:
        if isinstance(error.__cause__, CborDecodeError):  # one of ours, from a tag's decoder
            raise error.__cause__ from None
        raise CborDecodeError(_malformed(data, error)) from error
    if stream.tell() != len(data):
        raise CborDecodeError(f"{len(data) - stream.tell()} bytes after the data item")
    return value


def _malformed(data: bytes, error: Exception) -> str:
    """Why cbor2 could not read `data`: in the words of the item's structure when it is the
    structure that is wrong (cut short, a reserved head), else in cbor2's."""
    try:
        end = item_end(data)
    except CborError as structural:
        return f"malformed CBOR: {structural}"
    if end is None:
        return "malformed CBOR: the data item is cut short"
    return f"malformed CBOR: {error}"


def _json(value: Any) -> Any:
    """A decoded item → its JSON value: byte strings as text, tags applied, refusals raised."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, str) or value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not INT64[0] <= value <= INT64[1]:
            raise CborDecodeError(f"integer {value} overflows int64")
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise CborDecodeError(f"float {value} is not allowed")
        return int(value) if value.is_integer() and abs(value) < 1e21 else value
    if isinstance(value, _Later):
        return value.text()
    if isinstance(value, Mapping):
        result: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, bytes | str):
                raise CborDecodeError(f"map key {key!r} is not a string")
            name = key.decode("utf-8", errors="replace") if isinstance(key, bytes) else key
            if name in result:
                raise CborDecodeError(f"duplicate map key {name!r}")
            result[name] = _json(item)
        return result
    if isinstance(value, list | tuple):
        return [_json(item) for item in value]
    raise CborDecodeError(f"{type(value).__name__} {value!r} is not allowed")


def cbor_value(data: bytes) -> Any:
    """The JSON value of one CBOR data item (map keys in the order they came)."""
    data = bytes(data)
    if not data:
        raise CborDecodeError("empty body")
    return _json(_load(data))


def decode_cbor(data: bytes, *, release: ReleaseLike = None) -> Any:
    """An `application/cbor` body → the server's JSON of it, keys in the order that JSON
    has them (the schema of `release`, the server's gitVersion or minor; None: newest)."""
    return served_order(cbor_value(data), release)


def decode_cbor_watch_event(frame: bytes, *, release: ReleaseLike = None) -> dict[str, Any]:
    """One data item of an `application/cbor-seq` watch → {"type": ..., "object": ...}."""
    event = cbor_value(frame)
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise CborDecodeError("a watch event is a map with a string type")
    return served_order_event(event, release)
