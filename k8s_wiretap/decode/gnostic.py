"""`/openapi/v2` as kubectl fetches it (gnostic protobuf), turned into the JSON document.

kubectl asks for `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf` and gets
an `openapi.v2.Document` (github.com/googleapis/gnostic/openapiv2/OpenAPIv2.proto, the version
Kubernetes 1.20 vendors). `openapi_from_gnostic(data)` reads it with the schemaless reader in
k8s_wiretap.wire.protowire and the field numbers below, and returns what `/openapi/v2` serves
as JSON for the parts patching needs: `swagger`, `info` and every definition with all its
schema keywords (`$ref`, `type`, `format`, `items`, `additionalProperties`, `allOf`,
`properties`, `required`, `default`, `enum`, bounds, ...) and vendor extensions (NamedAny
whose value is YAML text). Paths, parameters, responses and security are not converted.
"""

from __future__ import annotations

import copy
import functools
import struct
from collections.abc import Callable
from typing import Any

from k8s_wiretap.wire import yamltext
from k8s_wiretap.wire.protowire import BYTES, FIXED64, VARINT, Field, ProtoError, parse

__all__ = ["ACCEPT", "openapi_from_gnostic"]

ACCEPT = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"

Reader = Callable[[Field], Any]
OMIT: Any = object()  # what a reader returns for a field the JSON form does not have


def _bytes(field: Field) -> bytes:
    if field.wire_type != BYTES or not isinstance(field.value, bytes):
        raise ProtoError(f"field {field.number}: expected length-delimited")
    return field.value


def _string(field: Field) -> str:
    return _bytes(field).decode()


def _varint(field: Field) -> int:
    if field.wire_type != VARINT or not isinstance(field.value, int):
        raise ProtoError(f"field {field.number}: expected a varint")
    return field.value


def _bool(field: Field) -> bool:
    return _varint(field) != 0


def _int64(field: Field) -> int:
    value = _varint(field)
    return value - (1 << 64) if value >= 1 << 63 else value


def _double(field: Field) -> float | int:
    if field.wire_type != FIXED64 or not isinstance(field.value, bytes):
        raise ProtoError(f"field {field.number}: expected a double")
    number: float = struct.unpack("<d", field.value)[0]
    return int(number) if number.is_integer() else number


def _any(field: Field) -> Any:
    """openapi.v2.Any: its `yaml` (2) parsed; a google.protobuf.Any alone is not readable."""
    for inner in parse(_bytes(field)):
        if inner.number == 2:
            return copy.deepcopy(_yaml(_string(inner)))
    return None


@functools.lru_cache(maxsize=4096)
def _yaml(text: str) -> Any:
    """The few distinct extension values (`merge`, `atomic`, `- type`) parsed once each;
    callers get copies."""
    return yamltext.load(text)


def _named(value: Reader) -> Reader:
    """A NamedX message (name=1, value=2) as a (name, value) pair."""

    def read(field: Field) -> tuple[str, Any]:
        name, result = "", None
        for inner in parse(_bytes(field)):
            if inner.number == 1:
                name = _string(inner)
            elif inner.number == 2:
                result = value(inner)
        return name, result

    return read


def _pairs(value: Reader) -> Reader:
    """A message of `repeated NamedX additional_properties = 1` as a dict."""
    named = _named(value)

    def read(field: Field) -> dict[str, Any]:
        return dict(named(inner) for inner in parse(_bytes(field)) if inner.number == 1)

    return read


def _strings_at(number: int) -> Reader:
    def read(field: Field) -> list[str]:
        return [_string(inner) for inner in parse(_bytes(field)) if inner.number == number]

    return read


def _type(field: Field) -> str | list[str]:
    values = [_string(inner) for inner in parse(_bytes(field)) if inner.number == 1]
    return values[0] if len(values) == 1 else values


def _items(field: Field) -> Any:
    schemas = [_schema(inner) for inner in parse(_bytes(field)) if inner.number == 1]
    return schemas[0] if len(schemas) == 1 else schemas


def _additional(field: Field) -> Any:
    for inner in parse(_bytes(field)):
        if inner.number == 1:
            return _schema(inner)
        if inner.number == 2:
            return _bool(inner)
    return None


def _message(fields: dict[int, tuple[str, Reader, bool]]) -> Callable[[Field], dict[str, Any]]:
    """A reader for a message: field number → (JSON name, reader, repeated)."""

    def read(field: Field) -> dict[str, Any]:
        out: dict[str, Any] = {}
        extensions: dict[str, Any] = {}
        for inner in parse(_bytes(field)):
            spec = fields.get(inner.number)
            if spec is None:
                continue
            name, reader, repeated = spec
            value = reader(inner)
            if value is OMIT:
                continue
            if name == "":  # vendor extensions
                extensions[value[0]] = value[1]
            elif repeated:
                out.setdefault(name, []).append(value)
            else:
                out[name] = value
        out.update(extensions)
        return out

    return read


def _schema(field: Field) -> dict[str, Any]:
    return _SCHEMA(field)


_EXTENSION = ("", _named(_any), True)
_EXTERNAL_DOCS = _message({1: ("description", _string, False), 2: ("url", _string, False)})
_XML = _message(
    {
        1: ("name", _string, False),
        2: ("namespace", _string, False),
        3: ("prefix", _string, False),
        4: ("attribute", _bool, False),
        5: ("wrapped", _bool, False),
        6: _EXTENSION,
    }
)
_SCHEMA = _message(
    {
        1: ("$ref", _string, False),
        2: ("format", _string, False),
        3: ("title", _string, False),
        4: ("description", _string, False),
        5: ("default", _any, False),
        6: ("multipleOf", _double, False),
        7: ("maximum", _double, False),
        8: ("exclusiveMaximum", _bool, False),
        9: ("minimum", _double, False),
        10: ("exclusiveMinimum", _bool, False),
        11: ("maxLength", _int64, False),
        12: ("minLength", _int64, False),
        13: ("pattern", _string, False),
        14: ("maxItems", _int64, False),
        15: ("minItems", _int64, False),
        16: ("uniqueItems", _bool, False),
        17: ("maxProperties", _int64, False),
        18: ("minProperties", _int64, False),
        19: ("required", _string, True),
        20: ("enum", _any, True),
        21: ("additionalProperties", _additional, False),
        22: ("type", _type, False),
        23: ("items", _items, False),
        24: ("allOf", _schema, True),
        25: ("properties", _pairs(_schema), False),
        26: ("discriminator", _string, False),
        27: ("readOnly", _bool, False),
        28: ("xml", _XML, False),
        29: ("externalDocs", _EXTERNAL_DOCS, False),
        30: ("example", _any, False),
        31: _EXTENSION,
    }
)
# Contact and License are the same messages in gnostic's OpenAPIv2.proto and OpenAPIv3.proto
# (extensions: vendor_extension in v2, specification_extension in v3): gnostic_v3 uses these
_CONTACT = _message(
    {
        1: ("name", _string, False),
        2: ("url", _string, False),
        3: ("email", _string, False),
        4: _EXTENSION,
    }
)
_LICENSE = _message({1: ("name", _string, False), 2: ("url", _string, False), 3: _EXTENSION})
_INFO = _message(
    {
        1: ("title", _string, False),
        2: ("version", _string, False),
        3: ("description", _string, False),
        4: ("termsOfService", _string, False),
        5: ("contact", _CONTACT, False),
        6: ("license", _LICENSE, False),
        7: _EXTENSION,
    }
)
_DOCUMENT = _message(
    {
        1: ("swagger", _string, False),
        2: ("info", _INFO, False),
        3: ("host", _string, False),
        4: ("basePath", _string, False),
        5: ("schemes", _string, True),
        6: ("consumes", _string, True),
        7: ("produces", _string, True),
        9: ("definitions", _pairs(_schema), False),
        16: _EXTENSION,
    }
)


def openapi_from_gnostic(data: bytes) -> dict[str, Any]:
    """The JSON form of a gnostic `openapi.v2.Document` (see the module docstring)."""
    try:
        return _DOCUMENT(Field(0, BYTES, data))
    except (ProtoError, UnicodeDecodeError, yamltext.YAMLError) as error:
        raise ProtoError(f"not a gnostic OpenAPI v2 document: {error}") from error
