"""An OpenAPI v3 document in gnostic's protobuf form, turned into the JSON document.

The API server serves each group version's `/openapi/v3/apis/<group>/<version>` as JSON or,
asked with `Accept: application/com.github.proto-openapi.spec.v3@v1.0+protobuf` (or the
`.v3.v1.0` spelling, which it answers with), as an `openapi.v3.Document`
(github.com/google/gnostic-models/openapiv3/OpenAPIv3.proto; kube-openapi's handler3
marshals the JSON document with `ToV3ProtoBinary`). The default release's kubectl asks for JSON;
other
clients may not. `openapi_v3_from_gnostic(data)` reads it with the schemaless protobuf
reader and the message table generated from gnostic's OpenAPIv3.proto
(decode/gnostic_proto.py), and returns the parts patching needs as the JSON
document has them: `openapi`, `info` and `components.schemas`, every schema with its
keywords (`$ref` from a Reference, `type`, `format`, `items`, `properties`,
`additionalProperties`, `allOf`/`oneOf`/`anyOf`, `default`, `enum`, bounds, ...) and
vendor extensions (NamedAny whose value is YAML text). In protobuf a `default` is a
number, boolean or string only: an object default (`{}`) is not carried. Paths are not
converted.
"""

from __future__ import annotations

from typing import Any

from k8s_wiretap.decode.gnostic_proto import document_reader
from k8s_wiretap.kube.media import GNOSTIC_OPENAPI_V3
from k8s_wiretap.kube.release import ReleaseLike
from k8s_wiretap.wire import yamltext
from k8s_wiretap.wire.protowire import ProtoError

__all__ = ["OpenApiV3Decoder", "openapi_v3_from_gnostic"]

# The messages kept as objects, with the fields each keeps (None: all): the document's
# `components.schemas`, without paths, servers, security, tags or the other components.
CONVERTED: dict[str, tuple[str, ...] | None] = {
    "openapi.v3.Document": ("openapi", "info", "components", "specification_extension"),
    "openapi.v3.Components": ("schemas", "specification_extension"),
    **{
        f"openapi.v3.{name}": None
        for name in (
            "Info",
            "Contact",
            "License",
            "Schema",
            "Reference",
            "Discriminator",
            "Xml",
            "ExternalDocs",
        )
    },
}
_DOCUMENT = document_reader("openapi.v3.Document", CONVERTED)


def openapi_v3_from_gnostic(data: bytes) -> dict[str, Any]:
    """The JSON form of a gnostic `openapi.v3.Document` (see the module docstring)."""
    try:
        return _DOCUMENT(data)
    except (ProtoError, UnicodeDecodeError, yamltext.YAMLError) as error:
        raise ProtoError(f"not a gnostic OpenAPI v3 document: {error}") from error


class OpenApiV3Decoder:
    """A group version's `/openapi/v3` document in gnostic's protobuf form (decode/body.py's
    registry holds it beside the v2 one)."""

    format = "openapi-v3-protobuf"
    top = 90

    def priority(self, media: str, data: bytes) -> int:
        return 90 if media == GNOSTIC_OPENAPI_V3 else 0

    def decode(self, data: bytes, media: str, release: ReleaseLike = None) -> Any:
        return openapi_v3_from_gnostic(data)
