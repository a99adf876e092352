"""Where credentials and secret values travel in Kubernetes traffic, as data.

Used by the recorder to redact them. Field numbers are from k8s.io/api generated.proto files
(core/v1 Secret, authentication/v1 TokenRequest and TokenReview) and apimachinery meta/v1
(ObjectMeta.annotations = 12, PartialObjectMetadata, WatchEvent).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "LAST_APPLIED",
    "PROTO_SECRET_LIKE",
    "SECRET_HEADERS",
    "SENSITIVE_RESOURCES",
    "WEBSOCKET_BEARER_PREFIX",
    "Sensitive",
]

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

# Headers whose whole value is a credential (Authorization keeps its scheme word).
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})
# Browser and JS clients pass a bearer token as a WebSocket subprotocol.
WEBSOCKET_BEARER_PREFIX = "base64url.bearer.authorization.k8s.io."


@dataclass(frozen=True)
class Sensitive:
    """What a request's objects carry: `secret` values, or a `token` at a JSON path."""

    kind: str  # "secret" or "token"
    token_path: tuple[str, ...] = ()
    proto_token_path: tuple[int, ...] = ()


# (group, resource, subresource) → what to redact in its bodies.
SENSITIVE_RESOURCES: dict[tuple[str, str, str], Sensitive] = {
    ("", "secrets", ""): Sensitive("secret"),
    ("", "serviceaccounts", "token"): Sensitive("token", ("status", "token"), (3, 1)),
    ("authentication.k8s.io", "tokenreviews", ""): Sensitive("token", ("spec", "token"), (2, 1)),
}


@dataclass(frozen=True)
class ProtoShape:
    """Field numbers of a secret-bearing protobuf message."""

    metadata: int = 1
    byte_maps: tuple[int, ...] = ()  # map<string, bytes> whose values are secret
    string_maps: tuple[int, ...] = ()  # map<string, string> whose values are secret
    items: int | None = None  # repeated messages of the item kind
    item_kind: str = ""


ANNOTATIONS_FIELD = 12  # ObjectMeta.annotations

# Envelope kind → shape. Lists hold items without an envelope of their own.
PROTO_SECRET_LIKE: dict[str, ProtoShape] = {
    "Secret": ProtoShape(byte_maps=(2,), string_maps=(4,)),
    "SecretList": ProtoShape(metadata=0, items=2, item_kind="Secret"),
    "PartialObjectMetadata": ProtoShape(),
    "PartialObjectMetadataList": ProtoShape(metadata=0, items=2, item_kind="PartialObjectMetadata"),
}
