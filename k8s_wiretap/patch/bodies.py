"""Patch types by their short names, and how the server decodes their bodies."""

from __future__ import annotations

import json
from typing import Any

from k8s_wiretap.kube.media import PATCH_TYPES, patch_type
from k8s_wiretap.patch.errors import PatchError
from k8s_wiretap.wire import yamltext

__all__ = ["decode_patch_body", "patch_kind"]


def patch_kind(kind: str) -> str | None:
    """ "strategic", "merge", "json" or "apply" for a short name or a patch Content-Type."""
    short = kind.strip().lower()
    return short if short in PATCH_TYPES.values() else patch_type(kind)


def _go_int(text: str) -> int | float:
    """apimachinery's util/json: integers that do not fit an int64 decode as float64."""
    value = int(text)
    return value if -(2**63) <= value < 2**63 else float(text)


def _not_json(constant: str) -> Any:
    """NaN, Infinity and -Infinity, which Python's json reads and Go's does not."""
    raise ValueError(f"invalid character {constant[0]!r} looking for beginning of value")


def _utf8(data: bytes | bytearray) -> bool:
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


def decode_patch_body(kind: str, body: Any) -> Any:
    """The patch body as the server reads it: JSON, or YAML (JSON first) for an apply.

    Bytes that are not UTF-8 read as Go's encoding/json reads them: inside a string each
    becomes U+FFFD, anywhere else the JSON is invalid (PatchError, 400); YAML refuses them."""
    if not isinstance(body, (bytes, bytearray, str)):
        return body
    text = body.decode(errors="replace") if isinstance(body, (bytes, bytearray)) else body
    try:
        return json.loads(text, parse_int=_go_int, parse_constant=_not_json)
    except ValueError as error:
        if kind != "apply":
            raise PatchError(f"error decoding patch: {error}", 400) from error
    if isinstance(body, (bytes, bytearray)) and not _utf8(body):
        raise PatchError("error decoding YAML: invalid UTF-8", 400)
    try:
        return yamltext.load(text)
    except yamltext.YAMLError as error:
        raise PatchError(f"error decoding YAML: {error}", 400) from error
