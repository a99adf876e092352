"""`/openapi/v2` as kubectl fetches it (gnostic protobuf), turned into the JSON document.

kubectl asks for `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf` and gets
an `openapi.v2.Document` (github.com/googleapis/gnostic/openapiv2/OpenAPIv2.proto, the version
Kubernetes 1.20 vendors). `openapi_from_gnostic(data)` reads it with the schemaless reader in
k8s_wiretap.wire.protowire and the message table generated from gnostic's OpenAPIv2.proto
(decode/gnostic_proto.py), and returns what `/openapi/v2` serves as JSON for the parts
patching needs: `swagger`, `info` and every definition with all its
schema keywords (`$ref`, `type`, `format`, `items`, `additionalProperties`, `allOf`,
`properties`, `required`, `default`, `enum`, bounds, ...) and vendor extensions (NamedAny
whose value is YAML text). Paths, parameters, responses and security are not converted.
"""

from __future__ import annotations

from typing import Any

from k8s_wiretap.decode.gnostic_proto import document_reader
from k8s_wiretap.wire import yamltext
from k8s_wiretap.wire.protowire import ProtoError

__all__ = ["ACCEPT", "openapi_from_gnostic"]

ACCEPT = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"

# The messages kept as objects, with the fields each keeps (None: all): the document without
# its paths, parameters, responses, security and tags.
CONVERTED: dict[str, tuple[str, ...] | None] = {
    "openapi.v2.Document": (
        "swagger",
        "info",
        "host",
        "base_path",
        "schemes",
        "consumes",
        "produces",
        "definitions",
        "vendor_extension",
    ),
    **{f"openapi.v2.{name}": None for name in ("Info", "Contact", "License", "Schema", "Xml")},
    "openapi.v2.ExternalDocs": None,
}
_DOCUMENT = document_reader("openapi.v2.Document", CONVERTED)


def openapi_from_gnostic(data: bytes) -> dict[str, Any]:
    """The JSON form of a gnostic `openapi.v2.Document` (see the module docstring)."""
    try:
        return _DOCUMENT(data)
    except (ProtoError, UnicodeDecodeError, yamltext.YAMLError) as error:
        raise ProtoError(f"not a gnostic OpenAPI v2 document: {error}") from error
