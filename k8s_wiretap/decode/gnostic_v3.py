"""An OpenAPI v3 document in gnostic's protobuf form, turned into the JSON document.

The API server serves each group version's `/openapi/v3/apis/<group>/<version>` as JSON or,
asked with `Accept: application/com.github.proto-openapi.spec.v3@v1.0+protobuf` (or the
`.v3.v1.0` spelling, which it answers with), as an `openapi.v3.Document`
(github.com/google/gnostic-models/openapiv3/OpenAPIv3.proto; kube-openapi's handler3
marshals the JSON document with `ToV3ProtoBinary`). kubectl 1.37 asks for JSON; other
clients may not. `openapi_v3_from_gnostic(data)` reads it with the schemaless protobuf
reader and the field numbers below, and returns the parts patching needs as the JSON
document has them: `openapi`, `info` and `components.schemas`, every schema with its
keywords (`$ref` from a Reference, `type`, `format`, `items`, `properties`,
`additionalProperties`, `allOf`/`oneOf`/`anyOf`, `default`, `enum`, bounds, ...) and
vendor extensions (NamedAny whose value is YAML text). In protobuf a `default` is a
number, boolean or string only: an object default (`{}`) is not carried. Paths are not
converted.
"""

from __future__ import annotations

from typing import Any

from k8s_wiretap.decode.gnostic import (
    _CONTACT,
    _EXTENSION,
    _EXTERNAL_DOCS,
    _LICENSE,
    _XML,
    OMIT,
    _any,
    _bool,
    _bytes,
    _double,
    _int64,
    _message,
    _pairs,
    _string,
)
from k8s_wiretap.kube.media import GNOSTIC_OPENAPI_V3
from k8s_wiretap.kube.release import ReleaseLike
from k8s_wiretap.wire import yamltext
from k8s_wiretap.wire.protowire import BYTES, Field, ProtoError, parse

__all__ = ["OpenApiV3Decoder", "openapi_v3_from_gnostic"]


def _schema_or_reference(field: Field) -> dict[str, Any]:
    """SchemaOrReference: a Schema (1) or a Reference (2), which is `{"$ref": ...}`."""
    for inner in parse(_bytes(field)):
        if inner.number == 1:
            return _SCHEMA(inner)
        if inner.number == 2:
            return _REFERENCE(inner)
    return {}


def _schema(field: Field) -> dict[str, Any]:
    return _SCHEMA(field)


def _items(field: Field) -> Any:
    members = [_schema_or_reference(inner) for inner in parse(_bytes(field)) if inner.number == 1]
    return members[0] if len(members) == 1 else members


def _additional(field: Field) -> Any:
    for inner in parse(_bytes(field)):
        if inner.number == 1:
            return _schema_or_reference(inner)
        if inner.number == 2:
            return _bool(inner)
    return None


def _default(field: Field) -> Any:
    """DefaultType: a number (1), a boolean (2) or a string (3); an object default (`{}`)
    leaves it empty, and the JSON form here leaves it out."""
    for inner in parse(_bytes(field)):
        if inner.number == 1:
            return _double(inner)
        if inner.number == 2:
            return _bool(inner)
        if inner.number == 3:
            return _string(inner)
    return OMIT


_REFERENCE = _message(
    {
        1: ("$ref", _string, False),
        2: ("summary", _string, False),
        3: ("description", _string, False),
    }
)
_DISCRIMINATOR = _message(
    {1: ("propertyName", _string, False), 2: ("mapping", _pairs(_string), False), 3: _EXTENSION}
)
_SCHEMA = _message(
    {
        1: ("nullable", _bool, False),
        2: ("discriminator", _DISCRIMINATOR, False),
        3: ("readOnly", _bool, False),
        4: ("writeOnly", _bool, False),
        5: ("xml", _XML, False),
        6: ("externalDocs", _EXTERNAL_DOCS, False),
        7: ("example", _any, False),
        8: ("deprecated", _bool, False),
        9: ("title", _string, False),
        10: ("multipleOf", _double, False),
        11: ("maximum", _double, False),
        12: ("exclusiveMaximum", _bool, False),
        13: ("minimum", _double, False),
        14: ("exclusiveMinimum", _bool, False),
        15: ("maxLength", _int64, False),
        16: ("minLength", _int64, False),
        17: ("pattern", _string, False),
        18: ("maxItems", _int64, False),
        19: ("minItems", _int64, False),
        20: ("uniqueItems", _bool, False),
        21: ("maxProperties", _int64, False),
        22: ("minProperties", _int64, False),
        23: ("required", _string, True),
        24: ("enum", _any, True),
        25: ("type", _string, False),
        26: ("allOf", _schema_or_reference, True),
        27: ("oneOf", _schema_or_reference, True),
        28: ("anyOf", _schema_or_reference, True),
        29: ("not", _schema, False),
        30: ("items", _items, False),
        31: ("properties", _pairs(_schema_or_reference), False),
        32: ("additionalProperties", _additional, False),
        33: ("default", _default, False),
        34: ("description", _string, False),
        35: ("format", _string, False),
        36: _EXTENSION,
    }
)
_INFO = _message(
    {
        1: ("title", _string, False),
        2: ("description", _string, False),
        3: ("termsOfService", _string, False),
        4: ("contact", _CONTACT, False),
        5: ("license", _LICENSE, False),
        6: ("version", _string, False),
        7: _EXTENSION,
        8: ("summary", _string, False),
    }
)
_COMPONENTS = _message({1: ("schemas", _pairs(_schema_or_reference), False), 10: _EXTENSION})
_DOCUMENT = _message(
    {
        1: ("openapi", _string, False),
        2: ("info", _INFO, False),
        5: ("components", _COMPONENTS, False),
        9: _EXTENSION,
    }
)


def openapi_v3_from_gnostic(data: bytes) -> dict[str, Any]:
    """The JSON form of a gnostic `openapi.v3.Document` (see the module docstring)."""
    try:
        return _DOCUMENT(Field(0, BYTES, data))
    except (ProtoError, UnicodeDecodeError, yamltext.YAMLError) as error:
        raise ProtoError(f"not a gnostic OpenAPI v3 document: {error}") from error


class OpenApiV3Decoder:
    """A group version's `/openapi/v3` document in gnostic's protobuf form (decode/body.py's
    registry holds it beside the v2 one)."""

    format = "openapi-v3-protobuf"

    def priority(self, media: str, data: bytes) -> int:
        return 90 if media == GNOSTIC_OPENAPI_V3 else 0

    def decode(self, data: bytes, media: str, release: ReleaseLike = None) -> Any:
        return openapi_v3_from_gnostic(data)
