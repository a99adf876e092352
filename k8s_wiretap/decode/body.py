"""Decode one body, whatever it is: JSON, YAML, Kubernetes protobuf, CBOR, text — never raising.

Decoders are small objects in mitmproxy's contentview style: `priority(media, data)` says
how well a decoder can read a body (0: not at all) and `decode(data, media)` reads it. The
best one wins; if it fails, the body is reported undecodable with the reason and a short hex
preview, and nothing is lost.
"""

from __future__ import annotations

import gzip
import json
import zlib
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from k8s_wiretap.decode.gnostic_v3 import OpenApiV3Decoder
from k8s_wiretap.decode.proto_scalars import no_long_digit_run
from k8s_wiretap.kube.media import GNOSTIC_OPENAPI, media_type
from k8s_wiretap.kube.release import ReleaseLike
from k8s_wiretap.once import once
from k8s_wiretap.wire import yamltext
from k8s_wiretap.wire.cborseq import self_described
from k8s_wiretap.wire.envelope import MAGIC
from k8s_wiretap.wire.media import is_cbor

__all__ = ["DECODERS", "EMPTY", "Decoded", "decode_body", "undecodable"]

PREVIEW_BYTES = 24
GZIP_MAGIC = b"\x1f\x8b"
_PRINTABLE_ASCII = bytes(range(0x20, 0x7F))  # what str.isprintable() accepts of ASCII


@dataclass(frozen=True)
class Decoded:
    """What a body is: `format` ("json", "yaml", "protobuf", "cbor", "openapi-protobuf",
    "text", "empty", "binary") and its `value`, or `error` ("undecodable: ...") when it could not be
    read."""

    format: str
    value: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @once
    def json_bytes(self) -> bytes | None:
        """The value as compact JSON (orjson), made once: a body that repeats is one
        Decoded, shared through the decode cache, so it is serialized once however many
        lines print it. None where orjson refuses the value (an integer past 64 bits, a
        key that is not a string)."""
        try:
            return orjson.dumps(self.value)
        except TypeError:  # orjson.JSONEncodeError
            return None


EMPTY = Decoded("empty")  # no body: one value for all of them (a Decoded never changes)


def undecodable(reason: str, data: bytes) -> str:
    preview = data[:PREVIEW_BYTES].hex(" ")
    more = "…" if len(data) > PREVIEW_BYTES else ""
    return f"undecodable: {reason} [{len(data)} bytes: {preview}{more}]"


class Decoder(Protocol):
    format: str
    top: int  # the highest priority it gives: a decoder is not asked when another ranks higher

    def priority(self, media: str, data: bytes) -> int: ...

    def decode(self, data: bytes, media: str, release: ReleaseLike = None) -> Any: ...


class ProtobufDecoder:
    format = "protobuf"
    top = 100

    def priority(self, media: str, data: bytes) -> int:
        return 100 if data[:4] == MAGIC else 0

    def decode(self, data: bytes, media: str, release: ReleaseLike = None) -> Any:
        from k8s_wiretap.decode.protobuf import decode_object

        return decode_object(data, release=release)


class CborDecoder:
    """apimachinery's CBOR (`application/cbor`, `application/apply-patch+cbor`), decoded to
    the JSON the server would send. Its self-described tag (d9 d9 f7) says CBOR whatever the
    Content-Type; a body labelled CBOR without it is still read as CBOR."""

    format = "cbor"
    top = 100

    def priority(self, media: str, data: bytes) -> int:
        if self_described(data):
            return 100
        return 85 if is_cbor(media) else 0

    def decode(self, data: bytes, media: str, release: ReleaseLike = None) -> Any:
        from k8s_wiretap.decode.cbor import decode_cbor

        return decode_cbor(data, release=release)


class OpenApiDecoder:
    """kubectl's `/openapi/v2` in gnostic's protobuf form (not a Kubernetes type)."""

    format = "openapi-protobuf"
    top = 90

    def priority(self, media: str, data: bytes) -> int:
        return 90 if media == GNOSTIC_OPENAPI else 0

    def decode(self, data: bytes, media: str, release: ReleaseLike = None) -> Any:
        from k8s_wiretap.decode.gnostic import openapi_from_gnostic

        return openapi_from_gnostic(data)


class JsonDecoder:
    format = "json"
    top = 80

    def priority(self, media: str, data: bytes) -> int:
        if media.endswith("json"):
            return 80
        return 40 if data.lstrip()[:1] in (b"{", b"[") else 0

    def decode(self, data: bytes, media: str, release: ReleaseLike = None) -> Any:
        return loads_json(data)


def loads_json(data: bytes) -> Any:
    """`json.loads(data)`: the same value, or the same error, at orjson's speed where orjson
    surely reads alike (see `no_long_digit_run`); `json` for the rest (kubectl's OpenAPI v3
    documents, half the JSON a recording holds, parse about three times faster)."""
    if no_long_digit_run(data):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return json.loads(data)


class YamlDecoder:
    format = "yaml"
    top = 70

    def priority(self, media: str, data: bytes) -> int:
        return 70 if "yaml" in media else 0

    def decode(self, data: bytes, media: str, release: ReleaseLike = None) -> Any:
        return yamltext.load(data)


class TextDecoder:
    format = "text"
    top = 60

    def priority(self, media: str, data: bytes) -> int:
        if media.startswith("text/"):
            return 60
        if data.isascii():  # the same answer as below, several times faster
            return 10 if b"\n" in data or not data.translate(None, _PRINTABLE_ASCII) else 0
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return 0
        return 10 if text.isprintable() or "\n" in text else 0

    def decode(self, data: bytes, media: str, release: ReleaseLike = None) -> Any:
        return data.decode("utf-8")


DECODERS: tuple[Decoder, ...] = (
    ProtobufDecoder(),
    CborDecoder(),
    OpenApiDecoder(),
    OpenApiV3Decoder(),
    JsonDecoder(),
    YamlDecoder(),
    TextDecoder(),
)


def _inflate(data: bytes) -> bytes:
    """A gzip body that was recorded (or given) still compressed."""
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as error:
        raise ValueError(f"bad gzip data: {error}") from error


def _best_decoder(media: str, data: bytes) -> Decoder | None:
    """The decoder of highest priority (the first of equals), None if every one says 0.

    A decoder whose `top` cannot beat the best so far is not asked: text, the last resort,
    would decode the whole body to answer.
    """
    best, rank = None, 0
    for decoder in DECODERS:
        if decoder.top > rank:
            priority = decoder.priority(media, data)
            if priority > rank:
                best, rank = decoder, priority
    return best


def decode_body(
    data: bytes, content_type: str = "", *, truncated: bool = False, release: ReleaseLike = None
) -> Decoded:
    """Decode `data` as well as any decoder can; never raises. `release` is the server's
    Kubernetes release (`v1.20.2`): protobuf is read with that release's schema (newest if
    None)."""
    if not data:
        return EMPTY
    if truncated:
        return Decoded("binary", error=undecodable("truncated by the recording's size cap", data))
    media = media_type(content_type)
    best: Decoder | None = None
    try:
        if data[:2] == GZIP_MAGIC:
            data = _inflate(data)
        best = _best_decoder(media, data)
        if best is None:
            return Decoded("binary", error=undecodable("no decoder for this content", data))
        return Decoded(best.format, best.decode(data, media, release))
    except Exception as error:  # a decoder must never take the caller down with it
        reason = f"{type(error).__name__}: {error}"
        format_ = best.format if best else "binary"
        return Decoded(format_, error=undecodable(reason[:200], data))
