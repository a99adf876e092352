"""The Kubernetes protobuf envelope: `k8s\\0` + runtime.Unknown.

apimachinery pkg/runtime/serializer/protobuf: a body (and an etcd value) is the 4-byte magic
followed by `runtime.Unknown {typeMeta=1 {apiVersion=1, kind=2}, raw=2, contentEncoding=3,
contentType=4}`; `raw` holds the object's own message, without type information.
"""

from __future__ import annotations

from dataclasses import dataclass

from k8s_wiretap.wire.protowire import BYTES, Field, ProtoError, encode, parse

__all__ = ["MAGIC", "Envelope", "is_protobuf", "unwrap", "with_raw"]

MAGIC = b"k8s\x00"


@dataclass(frozen=True)
class Envelope:
    api_version: str
    kind: str
    raw: bytes
    content_encoding: str = ""
    content_type: str = ""


def is_protobuf(data: bytes) -> bool:
    return data[:4] == MAGIC


def _text(value: int | bytes) -> str:
    if not isinstance(value, bytes):
        raise ProtoError("expected a string field")
    return value.decode("utf-8")


def unwrap(data: bytes) -> Envelope:
    """Split an enveloped body; ProtoError if it is not one."""
    if not is_protobuf(data):
        raise ProtoError("no k8s\\0 magic")
    api_version = kind = encoding = content_type = ""
    raw = b""
    for field in parse(data[4:]):
        if field.number == 1 and isinstance(field.value, bytes):
            for meta in parse(field.value):
                if meta.number == 1:
                    api_version = _text(meta.value)
                elif meta.number == 2:
                    kind = _text(meta.value)
        elif field.number == 2 and isinstance(field.value, bytes):
            raw = field.value
        elif field.number == 3:
            encoding = _text(field.value)
        elif field.number == 4:
            content_type = _text(field.value)
    return Envelope(api_version, kind, raw, encoding, content_type)


def with_raw(data: bytes, raw: bytes) -> bytes:
    """The same envelope with `raw` replaced, every other field kept as it was."""
    fields = parse(data[4:])
    rewritten = [Field(2, BYTES, raw) if f.number == 2 else f for f in fields]
    return MAGIC + encode(rewritten)
