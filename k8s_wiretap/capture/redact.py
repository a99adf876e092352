"""Redaction of credentials and Secret values, before anything reaches a recording.

A redacted value becomes `redacted:<16 hex>`, an HMAC-SHA256 of the value under a key made
for this recording and never stored: equal values still compare equal (so patches can still
be checked against their objects) but no value can be recovered or guessed offline.

Secret `data` values are bytes. In JSON they travel base64-encoded, in protobuf raw; both
become the same placeholder bytes (`redacted:...`, base64-encoded again in JSON), so a Secret
decoded from protobuf and the same Secret fetched as JSON stay equal after redaction.
`stringData` values are strings and become the placeholder as a string, which is what the
server turns into `data` on write: the redacted request and response still agree.

What is sensitive is data (kube/sensitive.py). A body that should be redacted but cannot be
parsed is replaced whole ("fail closed") and the record says so.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
from typing import Any

import yaml

from k8s_wiretap.kube.requestinfo import RequestInfo
from k8s_wiretap.kube.sensitive import (
    ANNOTATIONS_FIELD,
    LAST_APPLIED,
    PROTO_SECRET_LIKE,
    SECRET_HEADERS,
    SENSITIVE_RESOURCES,
    WEBSOCKET_BEARER_PREFIX,
    Sensitive,
)
from k8s_wiretap.wire import envelope
from k8s_wiretap.wire.media import is_json, media_type
from k8s_wiretap.wire.protowire import BYTES, Field, ProtoError, encode, parse

__all__ = ["UNREADABLE", "Redactor"]

UNREADABLE = b"redacted: a body that should be redacted could not be parsed"
_LAST_APPLIED_POINTER = "/metadata/annotations/" + LAST_APPLIED.replace("/", "~1")
PREFIX = b"redacted:"


class Redactor:
    def __init__(self, key: bytes | None = None) -> None:
        self._key = key or os.urandom(32)

    # -- values ---------------------------------------------------------------------------
    def placeholder(self, value: bytes) -> bytes:
        if value.startswith(PREFIX):
            return value  # already redacted (a value copied from an earlier record)
        digest = hmac.new(self._key, value, hashlib.sha256).hexdigest()[:16]
        return PREFIX + digest.encode()

    def text(self, value: str) -> str:
        return self.placeholder(value.encode()).decode()

    def base64_value(self, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raw = value.encode()
        return base64.b64encode(self.placeholder(raw)).decode()

    # -- headers --------------------------------------------------------------------------
    def headers(self, headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
        return [(name, self._header(name, value)) for name, value in headers]

    def _header(self, name: str, value: str) -> str:
        lower = name.lower()
        if lower in ("authorization", "proxy-authorization"):
            scheme, sep, credential = value.partition(" ")
            return f"{scheme} {self.text(credential)}" if sep else self.text(value)
        if lower in SECRET_HEADERS:
            return self.text(value)
        if lower == "sec-websocket-protocol" and WEBSOCKET_BEARER_PREFIX in value:
            return ", ".join(self._subprotocol(p.strip()) for p in value.split(","))
        return value

    def _subprotocol(self, protocol: str) -> str:
        if protocol.startswith(WEBSOCKET_BEARER_PREFIX):
            token = protocol[len(WEBSOCKET_BEARER_PREFIX) :]
            return WEBSOCKET_BEARER_PREFIX + self.text(token)
        return protocol

    # -- bodies ---------------------------------------------------------------------------
    def body(self, info: RequestInfo, content_type: str, body: bytes) -> tuple[bytes, bool]:
        """`body` with its sensitive values redacted, and whether anything changed."""
        sensitive = SENSITIVE_RESOURCES.get((info.group, info.resource, info.subresource))
        if not body:
            return body, False
        if envelope.is_protobuf(body):
            return self._proto_body(sensitive, body)
        if sensitive is None and b"Secret" not in body:
            return body, False  # the common case: nothing to look for, nothing parsed
        return self._text_body(sensitive, content_type, body)

    def watch_frame(self, info: RequestInfo, frame: bytes, content_type: str) -> tuple[bytes, bool]:
        """One watch event of a stream of `content_type`: JSON `{"type", "object"}`, or
        protobuf meta/v1 WatchEvent (a JSON-looking first byte proves nothing: 0x0a, a
        protobuf field 1 key, is also a newline)."""
        if is_json(content_type):
            return self.body(info, "application/json", frame)
        sensitive = SENSITIVE_RESOURCES.get((info.group, info.resource, info.subresource))
        if sensitive is None:
            return frame, False
        try:
            return self._proto_watch_event(sensitive, frame)
        except (ProtoError, UnicodeDecodeError, ValueError):
            return UNREADABLE, True

    # -- JSON and YAML --------------------------------------------------------------------
    def _text_body(
        self, sensitive: Sensitive | None, content_type: str, body: bytes
    ) -> tuple[bytes, bool]:
        try:
            document = _load(content_type, body)
        except ValueError:
            return (UNREADABLE, True) if sensitive else (body, False)
        before = json.dumps(document, sort_keys=True)
        self._document(sensitive, document)
        if json.dumps(document, sort_keys=True) == before:
            return body, False
        return json.dumps(document, separators=(",", ":")).encode(), True

    def _document(self, sensitive: Sensitive | None, document: Any) -> None:
        if sensitive and sensitive.kind == "token":
            self._token(document, sensitive.token_path)
            if isinstance(document, dict) and isinstance(document.get("object"), dict):
                self._token(document["object"], sensitive.token_path)  # a watch event
        elif sensitive:
            if isinstance(document, list):
                self._json_patch(document)
            else:
                self._secret_container(document)
        self._any_secret(document)

    def _token(self, document: Any, path: tuple[str, ...]) -> None:
        *parents, last = path
        for key in parents:
            if not isinstance(document, dict):
                return
            document = document.get(key)
        if isinstance(document, dict) and isinstance(document.get(last), str):
            document[last] = self.text(document[last])

    def _secret_container(self, document: Any) -> None:
        """A Secret, a list of them, a Table of them, or a watch event carrying one."""
        if not isinstance(document, dict):
            return
        self._secret(document)
        for item in document.get("items") or []:
            self._secret(item)
        for row in document.get("rows") or []:
            if isinstance(row, dict):
                self._secret(row.get("object"))
        if isinstance(document.get("object"), dict):
            self._secret_container(document["object"])

    def _secret(self, secret: Any) -> None:
        if not isinstance(secret, dict):
            return
        if isinstance(secret.get("data"), dict):
            secret["data"] = {k: self.base64_value(v) for k, v in secret["data"].items()}
        if isinstance(secret.get("stringData"), dict):
            secret["stringData"] = {k: self._string(v) for k, v in secret["stringData"].items()}
        annotations = (secret.get("metadata") or {}).get("annotations")
        if isinstance(annotations, dict) and isinstance(annotations.get(LAST_APPLIED), str):
            annotations[LAST_APPLIED] = self._last_applied(annotations[LAST_APPLIED])

    def _string(self, value: Any) -> Any:
        return self.text(value) if isinstance(value, str) else value

    def _last_applied(self, text: str) -> str:
        try:
            applied = json.loads(text)
        except ValueError:
            return self.text(text)
        self._secret(applied)
        return json.dumps(applied, separators=(",", ":"))

    def _any_secret(self, document: Any) -> None:
        """Secrets inside anything (a v1 List from `kubectl get all`, say) carry their kind."""
        if isinstance(document, dict):
            if document.get("kind") == "Secret":
                self._secret(document)
            for value in document.values():
                if isinstance(value, dict | list):
                    self._any_secret(value)
        elif isinstance(document, list):
            for value in document:
                if isinstance(value, dict | list):
                    self._any_secret(value)

    def _json_patch(self, operations: list[Any]) -> None:
        for operation in operations:
            if not isinstance(operation, dict) or "value" not in operation:
                continue
            path = str(operation.get("path", ""))
            value = operation["value"]
            if path.startswith("/data/"):
                operation["value"] = self.base64_value(value)
            elif path.startswith("/stringData/"):
                operation["value"] = self._string(value)
            elif path in ("/data", "/stringData", "", "/", "/metadata", "/metadata/annotations"):
                wrapped = _wrap_at(path, value)
                self._secret(wrapped)
                operation["value"] = _unwrap_at(path, wrapped)
            elif path == _LAST_APPLIED_POINTER and isinstance(value, str):
                operation["value"] = self._last_applied(value)

    # -- protobuf -------------------------------------------------------------------------
    def _proto_body(self, sensitive: Sensitive | None, body: bytes) -> tuple[bytes, bool]:
        if sensitive is None:
            return body, False
        try:
            return self._proto_object(sensitive, body), True
        except (ProtoError, UnicodeDecodeError, ValueError):
            return UNREADABLE, True

    def _proto_object(self, sensitive: Sensitive, data: bytes) -> bytes:
        wrapped = envelope.unwrap(data)
        if sensitive.kind == "token":
            raw = self._proto_path(wrapped.raw, sensitive.proto_token_path)
        elif wrapped.kind in PROTO_SECRET_LIKE:
            raw = self._proto_secret_like(wrapped.kind, wrapped.raw)
        else:
            return data  # a Status, say: nothing secret in it
        return envelope.with_raw(data, raw)

    def _proto_watch_event(self, sensitive: Sensitive, frame: bytes) -> tuple[bytes, bool]:
        fields = parse(frame)
        out = []
        for field in fields:
            if field.number == 2 and isinstance(field.value, bytes):  # RawExtension
                inner = [
                    Field(1, BYTES, self._proto_object(sensitive, f.value))
                    if f.number == 1 and isinstance(f.value, bytes)
                    else f
                    for f in parse(field.value)
                ]
                field = Field(2, BYTES, encode(inner))
            out.append(field)
        return encode(out), True

    def _proto_path(self, data: bytes, path: tuple[int, ...]) -> bytes:
        first, *rest = path
        out = []
        for field in parse(data):
            if field.number == first and isinstance(field.value, bytes):
                value = (
                    self._proto_path(field.value, tuple(rest))
                    if rest
                    else self.placeholder(field.value)
                )
                field = Field(first, BYTES, value)
            out.append(field)
        return encode(out)

    def _proto_secret_like(self, kind: str, data: bytes) -> bytes:
        shape = PROTO_SECRET_LIKE[kind]
        out = []
        for field in parse(data):
            value = field.value
            if isinstance(value, bytes):
                if field.number in shape.byte_maps + shape.string_maps:
                    value = self._proto_map_entry(value)
                elif shape.metadata and field.number == shape.metadata:
                    value = self._proto_metadata(value)
                elif field.number == shape.items:
                    value = self._proto_secret_like(shape.item_kind, value)
            out.append(Field(field.number, field.wire_type, value))
        return encode(out)

    def _proto_map_entry(self, entry: bytes) -> bytes:
        return encode(
            [
                Field(2, BYTES, self.placeholder(f.value))
                if f.number == 2 and isinstance(f.value, bytes)
                else f
                for f in parse(entry)
            ]
        )

    def _proto_metadata(self, metadata: bytes) -> bytes:
        out = []
        for field in parse(metadata):
            if field.number == ANNOTATIONS_FIELD and isinstance(field.value, bytes):
                entry = parse(field.value)
                key = next((f.value for f in entry if f.number == 1), b"")
                if key == LAST_APPLIED.encode():
                    field = Field(
                        field.number,
                        BYTES,
                        encode(
                            [
                                Field(2, BYTES, self._last_applied(f.value.decode()).encode())
                                if f.number == 2 and isinstance(f.value, bytes)
                                else f
                                for f in entry
                            ]
                        ),
                    )
            out.append(field)
        return encode(out)


def _load(content_type: str, body: bytes) -> Any:
    if "yaml" in media_type(content_type):
        try:
            return yaml.safe_load(body)
        except yaml.YAMLError as error:
            raise ValueError(str(error)) from error
    return json.loads(body)


def _wrap_at(path: str, value: Any) -> Any:
    """Place a JSON-patch value where it would land in a Secret document."""
    if path in ("", "/"):
        return value
    document: Any = value
    for key in reversed(path.strip("/").split("/")):
        document = {key: document}
    return document


def _unwrap_at(path: str, document: Any) -> Any:
    if path in ("", "/"):
        return document
    for key in path.strip("/").split("/"):
        document = document[key]
    return document
