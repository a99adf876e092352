"""HTTP media types (RFC 9110 section 8.3.1): the one parser of a Content-Type or Accept value.

`application/json;as=Table;v=v1;g=meta.k8s.io` has the media type `application/json` and
the parameters `as`, `v` and `g`. Types and parameter names are case-insensitive; values
keep their case (quotes removed).
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["is_cbor", "is_json", "media_parameters", "media_type"]


@lru_cache(maxsize=1024)  # a recording says the same few content types a million times
def media_type(content_type: str) -> str:
    """`application/json` of `application/json;as=Table;v=v1;g=meta.k8s.io`."""
    return content_type.split(";", 1)[0].strip().lower()


def media_parameters(content_type: str) -> dict[str, str]:
    """The parameters of one media type: `{"as": "Table", "v": "v1", "g": "meta.k8s.io"}`."""
    parameters: dict[str, str] = {}
    for part in content_type.split(";")[1:]:
        name, _, value = part.partition("=")
        if name.strip():
            parameters[name.strip().lower()] = value.strip().strip('"')
    return parameters


def is_json(content_type: str) -> bool:
    """`application/json` and every `+json` or `-json` type (merge patches, `stream=watch`)."""
    return media_type(content_type).endswith("json")


def is_cbor(content_type: str) -> bool:
    """`application/cbor`, a CBOR Sequence (`application/cbor-seq`, CBOR watch streams) and
    every `+cbor` type (`application/apply-patch+cbor`)."""
    media = media_type(content_type)
    return media in ("application/cbor", "application/cbor-seq") or media.endswith("+cbor")
