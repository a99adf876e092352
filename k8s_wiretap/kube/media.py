"""Kubernetes media types (apimachinery pkg/types/patch.go, the API server's negotiation)."""

from __future__ import annotations

__all__ = [
    "JSON",
    "PATCH_TYPES",
    "PROTOBUF",
    "is_watch_stream",
    "media_parameters",
    "media_type",
    "patch_type",
    "response_media",
]

from k8s_wiretap.wire.media import media_parameters, media_type

JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"

# Content-Type of a PATCH → the name explanations use for it.
PATCH_TYPES = {
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
}


def patch_type(content_type: str) -> str | None:
    return PATCH_TYPES.get(media_type(content_type))


def is_watch_stream(content_type: str) -> bool:
    """Non-JSON watch responses say `;stream=watch`; JSON ones are plain application/json."""
    return media_parameters(content_type).get("stream") == "watch"


GNOSTIC_OPENAPI = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


def response_media(content_type: str, accept: str) -> str:
    """What a response really is: the API server answers kubectl's protobuf `/openapi/v2`
    (asked for with `Accept: <gnostic type>`) as `application/octet-stream`."""
    if media_type(content_type) == "application/octet-stream" and GNOSTIC_OPENAPI in accept:
        return GNOSTIC_OPENAPI
    return content_type
