"""Kubernetes media types (apimachinery pkg/types/patch.go, the API server's negotiation)."""

from __future__ import annotations

__all__ = [
    "CBOR_SEQ",
    "DROP_MANAGED_FIELDS",
    "GNOSTIC_OPENAPI",
    "GNOSTIC_OPENAPI_V3",
    "PATCH_TYPES",
    "PROTOBUF",
    "is_cbor",
    "is_watch_stream",
    "managed_fields_dropped",
    "media_parameters",
    "media_type",
    "patch_type",
    "response_media",
]

from k8s_wiretap.wire.media import is_cbor, media_parameters, media_type

PROTOBUF = "application/vnd.kubernetes.protobuf"
# apimachinery runtime/types.go: the media type of a CBOR watch (behind the
# CBORServingAndStorage gate), which the API server sends whether the client accepted
# application/cbor or application/cbor-seq (apiserver endpoints/handlers/watch.go).
CBOR_SEQ = "application/cbor-seq"

# Content-Type of a PATCH → the name explanations use for it.
PATCH_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+cbor": "apply",  # 1.32+, a client with ClientsPreferCBOR
}


def patch_type(content_type: str) -> str | None:
    return PATCH_TYPES.get(media_type(content_type))


def is_watch_stream(content_type: str) -> bool:
    """Protobuf watch responses say `;stream=watch`, CBOR ones are `application/cbor-seq`;
    JSON ones are plain application/json."""
    return (
        media_parameters(content_type).get("stream") == "watch"
        or media_type(content_type) == CBOR_SEQ
    )


GNOSTIC_OPENAPI = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
GNOSTIC_OPENAPI_V3 = "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"
# kube-openapi answers either form with its subtype spelled `.v1.0` (the `@` form is
# deprecated): `...spec.v2.v1.0+protobuf` from 1.2x on, `...spec.v3.v1.0+protobuf`.
_SERVED_AS = {
    GNOSTIC_OPENAPI.replace("@", "."): GNOSTIC_OPENAPI,
    GNOSTIC_OPENAPI_V3.replace("@", "."): GNOSTIC_OPENAPI_V3,
}


def response_media(content_type: str, accept: str) -> str:
    """What a response really is: the API server answers kubectl's protobuf `/openapi/v2`
    (asked for with `Accept: <gnostic type>`) as `application/octet-stream` (1.20) or as
    `application/com.github.proto-openapi.spec.v2.v1.0+protobuf` (the default release);
    both are the gnostic type, as are the v3 documents' `.v3.v1.0` answers."""
    media = media_type(content_type)
    if media == "application/octet-stream" and GNOSTIC_OPENAPI in accept:
        return GNOSTIC_OPENAPI
    return _SERVED_AS.get(media, content_type)


# KEP-5958: a client that does not need managedFields asks for every media range of its
# Accept without them (`application/json;drop=metadata.managedFields`). The API server
# honours it only with its ManagedFieldsOptOut gate on (alpha, off, from 1.38); with the gate
# off, and on every earlier release, the parameter is ignored. Any other `drop` value makes
# that media range unacceptable (apiserver endpoints/handlers/negotiation/negotiate.go,
# `acceptMediaTypeOptions`; client-go rest/client.go, `acceptDroppingManagedFields`).
DROP_MANAGED_FIELDS = "metadata.managedFields"


def managed_fields_dropped(accept: str) -> bool:
    """Whether an Accept header asks for responses without `metadata.managedFields`: one of
    its media ranges says `drop=metadata.managedFields` (client-go puts it on every one)."""
    if "drop" not in accept:
        return False
    return any(
        media_parameters(clause).get("drop") == DROP_MANAGED_FIELDS for clause in accept.split(",")
    )
