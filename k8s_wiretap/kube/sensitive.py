"""Where credentials and secret values travel in Kubernetes traffic, as data.

Used by the recorder to redact them. Fields are named by their JSON names; their protobuf
field numbers are looked up in the generated schema (`kube.schema`, from k8s.io/api's and
apimachinery's generated.proto: core/v1 Secret, authentication/v1 TokenRequest and
TokenReview, meta/v1 ObjectMeta, PartialObjectMetadata), never typed in by hand.

OpenShift's OAuth tokens and clients (`OAUTH_TOKENS`) are objects of kinds outside that
schema: their token fields are named by JSON name only, so a JSON, YAML or CBOR body of them
is redacted field by field, and a protobuf one, which cannot be walked, is replaced whole by
the redactor's unreadable placeholder (as any sensitive body it cannot read).
"""

from __future__ import annotations

from dataclasses import dataclass

from k8s_wiretap.kube.fields import LAST_APPLIED
from k8s_wiretap.kube.schema import kinds, messages

__all__ = [
    "LAST_APPLIED",
    "OAUTH_GROUP",
    "OAUTH_TOKENS",
    "PROTO_SECRET_LIKE",
    "SECRET_HEADERS",
    "SENSITIVE_RESOURCES",
    "WEBSOCKET_BEARER_PREFIX",
    "Sensitive",
]


# Headers whose whole value is a credential (Authorization keeps its scheme word).
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})
# Browser and JS clients pass a bearer token as a WebSocket subprotocol.
WEBSOCKET_BEARER_PREFIX = "base64url.bearer.authorization.k8s.io."


@dataclass(frozen=True)
class Sensitive:
    """What a request's objects carry: `secret` values, a `token` at a JSON path, or
    `tokens`: objects (the body, a list's items, a watch event's object, a Table's rows)
    whose `token_fields` hold tokens and whose `metadata.name` is a token unless it starts
    with `hashed_name` (a name that is a hash of the token says nothing of it). `tokens`
    have no protobuf field numbers: a protobuf body of them is not walked (redact.py)."""

    kind: str  # "secret", "token" or "tokens"
    token_path: tuple[str, ...] = ()
    proto_token_path: tuple[int, ...] = ()
    token_fields: tuple[str, ...] = ()
    hashed_name: str = ""

    def is_token_name(self, name: str) -> bool:
        """Whether an object's `name` is one of its tokens (not a hash of one)."""
        return self.kind == "tokens" and bool(name) and not name.startswith(self.hashed_name)


def proto_path(api_version: str, kind: str, *names: str) -> tuple[int, ...]:
    """The protobuf field numbers of a JSON path in `kind`'s message (KeyError if none)."""
    message: str | None = kinds()[api_version][kind]
    numbers = []
    for name in names:
        assert message is not None, f"{kind}: {name} is inside a scalar"
        field = next(f for f in messages()[message]["fields"] if f["json"] == name)
        numbers.append(int(field["number"]))
        message = field.get("message")
    return tuple(numbers)


def _token(api_version: str, kind: str, *path: str) -> Sensitive:
    return Sensitive("token", path, proto_path(api_version, kind, *path))


AUTHENTICATION = "authentication.k8s.io/v1"
# (group, resource, subresource) → what to redact in its bodies.
SENSITIVE_RESOURCES: dict[tuple[str, str, str], Sensitive] = {
    ("", "secrets", ""): Sensitive("secret"),
    ("", "serviceaccounts", "token"): _token(AUTHENTICATION, "TokenRequest", "status", "token"),
    ("authentication.k8s.io", "tokenreviews", ""): _token(
        AUTHENTICATION, "TokenReview", "spec", "token"
    ),
}

# OpenShift's OAuth server keeps the tokens it grants as objects (openshift/api,
# oauth/v1/types.go at 21fe982a9a631e04f02ba81a52d1a6b1dee543b5): an OAuthAccessToken
# carries `refreshToken` and `authorizeToken`, an OAuthAuthorizeToken the PKCE
# `codeChallenge`; UserOAuthAccessToken is an OAuthAccessToken shown to its user. Before
# OpenShift 4.6 an object's name was the bearer token (or authorize code) itself; since,
# it is "sha256~" and the unpadded URL-safe base64 of the token's SHA-256 (types.go's
# OAuthAccessToken comment), which is kept. OpenShift's audit policies log these
# resources' writes at RequestResponse once names are hashes, and nothing of them before
# ("metadata.name is the secret"): openshift/library-go
# pkg/operator/apiserver/audit/manifests/audit-policies-cm.yaml at
# 08b8929edf175771715c42646439b47bad492195, secure-oauth-storage-default.yaml and default.yaml.
OAUTH_GROUP = "oauth.openshift.io"
SHA256_NAME = "sha256~"
_ACCESS_TOKEN = Sensitive(
    "tokens", token_fields=("refreshToken", "authorizeToken"), hashed_name=SHA256_NAME
)
OAUTH_TOKENS: dict[tuple[str, str, str], Sensitive] = {
    (OAUTH_GROUP, "oauthaccesstokens", ""): _ACCESS_TOKEN,
    (OAUTH_GROUP, "useroauthaccesstokens", ""): _ACCESS_TOKEN,
    (OAUTH_GROUP, "oauthauthorizetokens", ""): Sensitive(
        "tokens", token_fields=("codeChallenge",), hashed_name=SHA256_NAME
    ),
    # An OAuthClient's `secret` and `additionalSecrets` (the same types.go); its name is
    # the client's id, not a credential (every name starts with "").
    (OAUTH_GROUP, "oauthclients", ""): Sensitive(
        "tokens", token_fields=("secret", "additionalSecrets")
    ),
}
SENSITIVE_RESOURCES.update(OAUTH_TOKENS)


@dataclass(frozen=True)
class ProtoShape:
    """Field numbers of a secret-bearing protobuf message."""

    metadata: int = 1
    byte_maps: tuple[int, ...] = ()  # map<string, bytes> whose values are secret
    string_maps: tuple[int, ...] = ()  # map<string, string> whose values are secret
    items: int | None = None  # repeated messages of the item kind
    item_kind: str = ""


(ANNOTATIONS_FIELD,) = proto_path("v1", "Secret", "metadata", "annotations")[1:]
META = "meta.k8s.io/v1"

# Envelope kind → shape (metadata=0: a list's ListMeta holds nothing secret). Lists hold
# items without an envelope of their own.
PROTO_SECRET_LIKE: dict[str, ProtoShape] = {
    "Secret": ProtoShape(
        metadata=proto_path("v1", "Secret", "metadata")[0],
        byte_maps=proto_path("v1", "Secret", "data"),
        string_maps=proto_path("v1", "Secret", "stringData"),
    ),
    "SecretList": ProtoShape(
        metadata=0, items=proto_path("v1", "SecretList", "items")[0], item_kind="Secret"
    ),
    "PartialObjectMetadata": ProtoShape(
        metadata=proto_path(META, "PartialObjectMetadata", "metadata")[0]
    ),
    "PartialObjectMetadataList": ProtoShape(
        metadata=0,
        items=proto_path(META, "PartialObjectMetadataList", "items")[0],
        item_kind="PartialObjectMetadata",
    ),
}
