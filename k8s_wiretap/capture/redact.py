"""Redaction of credentials and Secret values, before anything reaches a recording.

A redacted value becomes `redacted:<16 hex>`, an HMAC-SHA256 of the value under a key made
for this recording and never stored: equal values still compare equal (so patches can still
be checked against their objects) but no value can be recovered or guessed offline.

Secret `data` values are bytes. In JSON they travel base64-encoded, in protobuf raw, in CBOR
as a byte string tagged "expected later base64 encoding" (22); all become the same
placeholder bytes (`redacted:...`, base64-encoded again in JSON), so a Secret decoded from
protobuf or CBOR and the same Secret fetched as JSON stay equal after redaction. A CBOR body
(or watch event) that changed is written again as CBOR of its redacted JSON value: it decodes
to what the redacted JSON body decodes to, its strings as text strings and `data` as base64.
`stringData` values are strings and become the placeholder as a string, which is what the
server turns into `data` on write: the redacted request and response still agree.

Each value is redacted exactly once: a body's Secrets are found first (by place and by kind,
one object once however it is found), then redacted. Nothing is ever passed through as
"already redacted", so a real value that looks like a placeholder is replaced like any other.

The Status the API server answers a refused request with quotes what the request held (the
patched object, the first bytes of a body it could not read): on a sensitive resource its
texts are masked (capture/statusmask.py, rules in kube/statustext.py), of every rendering
of a value and of every value the exchange's request carried — `seen`, the set of values
redacted in the exchange's bodies so far, which the caller keeps per exchange. A watch
event reads `seen` but adds nothing to it: a watch can run for days, and its set stays what
its request and response head made it (a stream's memory does not follow its events).

OpenShift's OAuth tokens (kube/sensitive.py `OAUTH_TOKENS`) are redacted field by field in
JSON, YAML and CBOR, their name too when it is the token itself (not its `sha256~` hash);
their kinds are outside the protobuf schema, so a protobuf body of them is replaced whole.
Such a name is replaced in the request's path as well (`path`).

What is sensitive is data (kube/sensitive.py). A body that should be redacted but cannot be
parsed is replaced whole ("fail closed") and the record says so; so is a Secret field that
holds something other than what it should (a `data` that is not a map, say).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import io
import json
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import cbor2

from k8s_wiretap.capture.statusmask import mask
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
from k8s_wiretap.kube.statustext import PROTO_STATUS_TEXTS, STATUS_TEXTS
from k8s_wiretap.wire import envelope, yamltext
from k8s_wiretap.wire.cborseq import SELF_DESCRIBED, self_described
from k8s_wiretap.wire.media import is_cbor, is_json, media_type
from k8s_wiretap.wire.protowire import BYTES, Field, ProtoError, encode, parse

__all__ = ["UNREADABLE", "Redactor", "is_placeholder"]

UNREADABLE = b"redacted: a body that should be redacted could not be parsed"
_LAST_APPLIED_POINTER = "/metadata/annotations/" + LAST_APPLIED.replace("/", "~1")
PREFIX = b"redacted:"
_T = TypeVar("_T")
_JSON_OPENING = (b"{", b"[", b'"')  # a body's first byte that no CBOR or protobuf body has
_JSON_TYPES = frozenset(("application/json", "application/json-patch+json", ""))
# The headers `Redactor._header` may change (lower case): any other is kept as it is.
_REDACTED_HEADERS = frozenset(
    ("authorization", "proxy-authorization", "sec-websocket-protocol", *SECRET_HEADERS)
)
# Headers as the importers spell them that are none of those (told without lowering them)
_KEPT_HEADERS = frozenset(
    name for name in ("User-Agent", "Content-Type") if name.lower() not in _REDACTED_HEADERS
)


class Redactor:
    def __init__(self, key: bytes | None = None) -> None:
        self._key = key or os.urandom(32)
        # The exchange of the body being redacted, per thread (a view may redact in several).
        self._call = threading.local()

    # -- values ---------------------------------------------------------------------------
    def placeholder(self, value: bytes) -> bytes:
        """The placeholder of one value. Every value goes through here exactly once (see
        `_document`), so nothing is passed through: a value that merely looks like a
        placeholder is a value like any other. The value joins the exchange's `seen`."""
        seen = getattr(self._call, "seen", None)
        if seen is not None:
            seen.add(value)
        return self._digest(value)

    def _digest(self, value: bytes) -> bytes:
        digest = hmac.new(self._key, value, hashlib.sha256).hexdigest()[:16]
        return PREFIX + digest.encode()

    def text(self, value: str) -> str:
        return self.placeholder(value.encode()).decode()

    def base64_value(self, value: Any) -> Any:
        """A Secret `data` value: base64 of bytes, redacted on its bytes (as in protobuf)."""
        if value is None:
            return None  # a merge patch deleting the key: no value to hide
        if not isinstance(value, str):
            return base64.b64encode(self.placeholder(_canonical(value))).decode()
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raw = value.encode()
        return base64.b64encode(self.placeholder(raw)).decode()

    def _string(self, value: Any) -> Any:
        """A `stringData` value, a token: redacted as a string."""
        if value is None:
            return None
        return self.text(value if isinstance(value, str) else _canonical(value).decode())

    # -- headers --------------------------------------------------------------------------
    def headers(self, headers: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        return [
            (name, value if name.lower() not in _REDACTED_HEADERS else self._header(name, value))
            for name, value in headers
        ]

    def header_lists(self, headers: Sequence[tuple[str, str]]) -> list[list[str]]:
        """`headers` as `headers` redacts them, each a `[name, value]` list (a record's)."""
        return [
            [
                name,
                value
                if name in _KEPT_HEADERS or name.lower() not in _REDACTED_HEADERS
                else self._header(name, value),
            ]
            for name, value in headers
        ]

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

    # -- paths ----------------------------------------------------------------------------
    def token_names(self, info: RequestInfo, *names: str) -> dict[str, str]:
        """The names among `info`'s and `names` that are tokens (an OAuth token's before
        OpenShift 4.6, kube/sensitive.py), each with its placeholder."""
        sensitive = SENSITIVE_RESOURCES.get((info.group, info.resource, info.subresource))
        if sensitive is None:
            return {}
        return {
            name: self.text(name) for name in {info.name, *names} if sensitive.is_token_name(name)
        }

    def path(self, info: RequestInfo, path: str) -> str:
        """A request's path and query, a name in it that is a token replaced by its
        placeholder (the path is recorded as it is otherwise: names are not secret)."""
        if (info.group, info.resource, info.subresource) not in SENSITIVE_RESOURCES:
            return path  # no name of it is a token (`token_names`)
        for name, placeholder in self.token_names(info).items():
            path = path.replace(name, placeholder)
        return path

    # -- bodies ---------------------------------------------------------------------------
    def body(
        self, info: RequestInfo, content_type: str, body: bytes, seen: set[bytes] | None = None
    ) -> tuple[bytes, bool]:
        """`body` with its sensitive values redacted, and whether anything changed; `seen`:
        the values of the exchange so far (see the module's docstring), added to."""
        return self._any_body(info, content_type, body, seen, seen)

    def watch_frame(
        self, info: RequestInfo, frame: bytes, content_type: str, seen: set[bytes] | None = None
    ) -> tuple[bytes, bool]:
        """One watch event of a stream of `content_type`: JSON `{"type", "object"}`, or
        protobuf meta/v1 WatchEvent (a JSON-looking first byte proves nothing: 0x0a, a
        protobuf field 1 key, is also a newline). `seen` masks its Status (a watch event of
        type ERROR), and is not added to (see the module)."""
        if is_json(content_type):
            return self._any_body(info, "application/json", frame, seen, None)
        if is_cbor(content_type):
            return self._any_body(info, "application/cbor", frame, seen, None)
        sensitive = SENSITIVE_RESOURCES.get((info.group, info.resource, info.subresource))
        if sensitive is None:
            return frame, False
        try:
            return self._within(info, seen, None, self._proto_watch_event, sensitive, frame)
        except (ProtoError, UnicodeDecodeError, ValueError):
            return UNREADABLE, True

    def status(
        self, info: RequestInfo, status: dict[str, Any], seen: set[bytes] | None = None
    ) -> dict[str, Any]:
        """A Status (an audit event's `responseStatus`, say) of an answer to `info`'s
        request, its texts masked when that request is on a sensitive resource."""
        sensitive = SENSITIVE_RESOURCES.get((info.group, info.resource, info.subresource))
        if sensitive is None:
            return status
        copied: dict[str, Any] = json.loads(json.dumps(status))
        self._within(info, seen, seen, self._mask_status, copied)
        if sensitive.kind == "tokens":
            self._token_object(sensitive, copied)  # details.name: the token, before 4.6
        return copied

    def _within(
        self,
        info: RequestInfo,
        known: set[bytes] | None,
        seen: set[bytes] | None,
        work: Callable[..., _T],
        *args: Any,
    ) -> _T:
        """`work(*args)` on a body of `info`'s exchange: the values `known` are masked in
        its Status, those it finds join `seen` (None: kept nowhere). Only for a body that
        is parsed: one with nothing to look for (the common case) costs nothing more."""
        call = self._call
        call.info, call.known, call.seen = info, known, seen
        try:
            return work(*args)
        finally:
            call.info = call.known = call.seen = None

    def _any_body(
        self,
        info: RequestInfo,
        content_type: str,
        body: bytes,
        known: set[bytes] | None,
        seen: set[bytes] | None,
    ) -> tuple[bytes, bool]:
        sensitive = SENSITIVE_RESOURCES.get((info.group, info.resource, info.subresource))
        if body[:1] in _JSON_OPENING and content_type in _JSON_TYPES:
            # JSON's object, array or string, of a JSON type: neither CBOR nor protobuf (the
            # importers' bodies, told at once)
            if sensitive is None and (
                b"Secret" not in body or _no_secret_values(content_type, body)
            ):
                return body, False
            return self._within(info, known, seen, self._text_body, sensitive, content_type, body)
        if not body:
            return body, False
        if self_described(body) or is_cbor(content_type):
            if sensitive is None and b"Secret" not in body:
                return body, False
            return self._within(info, known, seen, self._cbor_body, sensitive, body)
        if envelope.is_protobuf(body):
            return self._within(info, known, seen, self._proto_body, sensitive, body)
        if sensitive is None and (b"Secret" not in body or _no_secret_values(content_type, body)):
            return body, False  # the common case: nothing to look for, nothing parsed
        return self._within(info, known, seen, self._text_body, sensitive, content_type, body)

    # -- JSON and YAML --------------------------------------------------------------------
    def _text_body(
        self, sensitive: Sensitive | None, content_type: str, body: bytes
    ) -> tuple[bytes, bool]:
        return self._loaded(
            sensitive,
            body,
            lambda: _load(content_type, body),
            lambda document: json.dumps(document, separators=(",", ":")).encode(),
        )

    def _loaded(
        self,
        sensitive: Sensitive | None,
        body: bytes,
        load: Callable[[], Any],
        dump: Callable[[Any], bytes],
    ) -> tuple[bytes, bool]:
        """Redact a body read by `load`, written again by `dump` only if something changed;
        a body that cannot be read is replaced whole when it should be redacted."""
        try:
            document = load()
        except ValueError:
            return (UNREADABLE, True) if sensitive else (body, False)
        before = json.dumps(document, sort_keys=True)
        self._document(sensitive, document)
        if json.dumps(document, sort_keys=True) == before:
            return body, False
        return dump(document), True

    def _document(self, sensitive: Sensitive | None, document: Any) -> None:
        """Redact `document` in place. Secrets are found first — by where they are in a
        secrets request (the object, a list's items, a Table's rows, a watch event's object)
        and by their kind anywhere — and each one found is redacted once: one Secret can be
        found both ways, and redacting it twice would change its placeholders."""
        found: dict[int, dict[str, Any]] = {}  # by identity: each Secret object once
        patched: list[tuple[dict[str, Any], str, dict[str, Any]]] = []
        if sensitive and sensitive.kind == "tokens":
            self._tokens(sensitive, document)
        elif sensitive and sensitive.kind == "token":
            self._token(document, sensitive.token_path)
            if isinstance(document, dict) and isinstance(document.get("object"), dict):
                self._token(document["object"], sensitive.token_path)  # a watch event
        elif sensitive and isinstance(document, list):
            patched = self._json_patch(document, found)
        elif sensitive:
            _secrets_by_place(document, found)
        _secrets_by_kind(document, found)
        for secret in found.values():
            self._secret(secret)
        for operation, path, wrapped in patched:
            operation["value"] = _unwrap_at(path, wrapped)
        if sensitive:
            for status in _statuses(document):
                self._mask_status(status)

    # -- Status texts -----------------------------------------------------------------------
    def _mask_status(self, status: dict[str, Any]) -> None:
        for path in STATUS_TEXTS:
            _replace_texts(status, path, self._masked)

    def _masked(self, text: str) -> str:
        info: RequestInfo | None = getattr(self._call, "info", None)
        keep = (_kept_name(info), info.namespace, info.resource, info.group) if info else ()
        return mask(
            text,
            lambda value: self._digest(value.encode()).decode(),
            keep=keep,
            known=tuple(getattr(self._call, "known", None) or ()),
        )

    def _token(self, document: Any, path: tuple[str, ...]) -> None:
        *parents, last = path
        for key in parents:
            if not isinstance(document, dict):
                return
            document = document.get(key)
        if isinstance(document, dict) and isinstance(document.get(last), str):
            document[last] = self.text(document[last])

    def _tokens(self, sensitive: Sensitive, document: Any) -> None:
        """Redact the objects of a `tokens` resource (kube/sensitive.py): their token fields,
        a name that is a token (in the object, a Table's name column, a Status's details),
        the values a JSON patch sets in them."""
        if isinstance(document, list):  # a JSON patch
            for operation in document:
                if isinstance(operation, dict) and "value" in operation:
                    path = str(operation.get("path", ""))
                    operation["value"] = self._token_patch(sensitive, path, operation["value"])
            return
        objects: dict[int, dict[str, Any]] = {}
        _secrets_by_place(document, objects)  # the same places as a Secret's
        for item in objects.values():
            self._token_object(sensitive, item)
        if not isinstance(document, dict):
            return
        columns = document.get("columnDefinitions")
        names = [
            i
            for i, column in enumerate(columns if isinstance(columns, list) else [])
            if isinstance(column, dict) and column.get("format") == "name"
        ]
        rows = document.get("rows")
        for row in rows if isinstance(rows, list) else []:
            cells = row.get("cells") if isinstance(row, dict) else None
            if isinstance(cells, list):
                for i in names:
                    if i < len(cells):
                        cells[i] = self._token_name(sensitive, cells[i])

    def _token_object(self, sensitive: Sensitive, item: dict[str, Any]) -> None:
        for key in sensitive.token_fields:
            value = item.get(key)
            if isinstance(value, list):  # each of a list of them (additionalSecrets)
                item[key] = [self._string(v) for v in value]
            elif value is not None:
                item[key] = self._string(value)
        for holder in (item.get("metadata"), item.get("details")):
            if isinstance(holder, dict) and "name" in holder:
                holder["name"] = self._token_name(sensitive, holder["name"])

    def _token_name(self, sensitive: Sensitive, name: Any) -> Any:
        """A name, its placeholder when it is the token itself (not a hash of it)."""
        if isinstance(name, str) and not sensitive.is_token_name(name):
            return name
        return self._string(name)

    def _token_patch(self, sensitive: Sensitive, path: str, value: Any) -> Any:
        """What a JSON patch operation at `path` sets, redacted where it lands."""
        if path in ("", "/"):
            if isinstance(value, dict):
                self._token_object(sensitive, value)
            return value
        if path == "/metadata":
            if isinstance(value, dict):
                self._token_object(sensitive, {"metadata": value})
            return value
        if path == "/metadata/name":
            return self._token_name(sensitive, value)
        if path.strip("/").split("/")[0] in sensitive.token_fields:  # the field or an item
            return (
                [self._string(v) for v in value] if isinstance(value, list) else self._string(value)
            )
        return value

    def _secret(self, secret: dict[str, Any]) -> None:
        """Redact one Secret-shaped object: `data`, `stringData`, the last-applied annotation.
        What it holds is replaced by new objects, never changed in place, so that a value
        shared with another Secret (a YAML alias) is not redacted a second time through it."""
        for key, redact in (("data", self.base64_value), ("stringData", self._string)):
            values = secret.get(key)
            if isinstance(values, dict):
                secret[key] = {k: redact(v) for k, v in values.items()}
            elif values is not None:  # not a map: nothing valid, so nothing kept
                secret[key] = self._string(values)
        metadata = secret.get("metadata")
        if not isinstance(metadata, dict):
            return
        annotations = metadata.get("annotations")
        if isinstance(annotations, dict) and LAST_APPLIED in annotations:
            applied = self._last_applied(annotations[LAST_APPLIED])
            annotations = {**annotations, LAST_APPLIED: applied}
            secret["metadata"] = {**metadata, "annotations": annotations}

    def _last_applied(self, text: Any) -> Any:
        """The annotation holds the whole applied file, values included."""
        if not isinstance(text, str):
            return self._string(text)
        try:
            applied = json.loads(text)
        except ValueError:
            return self.text(text)
        if not isinstance(applied, dict):
            return self.text(text)
        self._secret(applied)
        return json.dumps(applied, separators=(",", ":"))

    def _json_patch(
        self, operations: list[Any], found: dict[int, dict[str, Any]]
    ) -> list[tuple[dict[str, Any], str, dict[str, Any]]]:
        """Redact the values a JSON patch sets inside a Secret. A value that is (part of) a
        Secret object is placed where it lands in one and added to `found`; the caller
        redacts it with the others and puts it back (the returned operations)."""
        patched = []
        for operation in operations:
            if not isinstance(operation, dict) or "value" not in operation:
                continue
            path = str(operation.get("path", ""))
            value = operation["value"]
            if path.startswith("/data/"):
                operation["value"] = self.base64_value(value)
            elif path.startswith("/stringData/"):
                operation["value"] = self._string(value)
            elif path == _LAST_APPLIED_POINTER:
                operation["value"] = self._last_applied(value)
            elif path in ("/data", "/stringData", "", "/", "/metadata", "/metadata/annotations"):
                wrapped = _wrap_at(path, value)
                if isinstance(wrapped, dict):
                    found.setdefault(id(wrapped), wrapped)
                    patched.append((operation, path, wrapped))
        return patched

    # -- CBOR -----------------------------------------------------------------------------
    def _cbor_body(self, sensitive: Sensitive | None, body: bytes) -> tuple[bytes, bool]:
        return self._loaded(
            sensitive,
            body,
            lambda: _cbor_load(body),
            lambda document: SELF_DESCRIBED + cbor2.dumps(document),
        )

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
        if sensitive.kind == "tokens" and wrapped.kind != "Status":
            # kinds outside the generated schema: no field numbers to walk them by
            raise ValueError(f"{wrapped.kind or 'an object'} is not in the protobuf schema")
        if sensitive.kind == "token":
            raw = self._proto_path(wrapped.raw, sensitive.proto_token_path)
        elif wrapped.kind in PROTO_SECRET_LIKE:
            raw = self._proto_secret_like(wrapped.kind, wrapped.raw)
        elif wrapped.kind == "Status":
            raw = wrapped.raw
            for path in PROTO_STATUS_TEXTS:
                raw = self._proto_path(raw, path, self._proto_masked)
        else:
            return data
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

    def _proto_masked(self, text: bytes) -> bytes:
        return self._masked(text.decode("utf-8", "replace")).encode()

    def _proto_path(
        self, data: bytes, path: tuple[int, ...], leaf: Callable[[bytes], bytes] | None = None
    ) -> bytes:
        """`data` with each bytes field at `path` replaced by `leaf` of it (its placeholder
        by default); a repeated field, each of its items."""
        first, *rest = path
        out = []
        for field in parse(data):
            if field.number == first and isinstance(field.value, bytes):
                value = (
                    self._proto_path(field.value, tuple(rest), leaf)
                    if rest
                    else (leaf or self.placeholder)(field.value)
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


def is_placeholder(value: Any) -> bool:
    """Whether `value` is a placeholder (a string; a `data` value: base64 of one)."""
    if not isinstance(value, str):
        return False
    if value.startswith(PREFIX.decode()):
        return True
    try:
        return base64.b64decode(value, validate=True).startswith(PREFIX)
    except (binascii.Error, ValueError):
        return False


def _kept_name(info: RequestInfo) -> str:
    """The request's name as a Status message may keep it: not when it is a token."""
    sensitive = SENSITIVE_RESOURCES.get((info.group, info.resource, info.subresource))
    return "" if sensitive and sensitive.is_token_name(info.name) else info.name


# What redaction changes in a Secret found by its kind in a body of a resource that is not
# sensitive (`_secret`): its `data`, its `stringData`, its last-applied annotation. In JSON
# without a `\u` escape each key that is one of those is spelt out as it is here.
_SECRET_KEYS = (b'"data"', b'"stringData"', LAST_APPLIED.rpartition("/")[2].encode())


def _no_secret_values(content_type: str, body: bytes) -> bool:
    """Whether a JSON body that names the kind Secret (a discovery document does) holds
    no key redaction would change (`_SECRET_KEYS`): then nothing in it is redacted, and it
    need not be parsed. Any `\\u` escape (a key may be spelt with them) or YAML: False."""
    if "yaml" in media_type(content_type) or b"\\u" in body:
        return False
    return not any(key in body for key in _SECRET_KEYS)


def _load(content_type: str, body: bytes) -> Any:
    if "yaml" in media_type(content_type):
        try:
            return yamltext.load(body)
        except yamltext.YAMLError as error:
            raise ValueError(str(error)) from error
    return json.loads(body)


def _cbor_load(body: bytes) -> Any:
    """A CBOR body as its JSON value (what decode/cbor.py gives, keys unordered): byte strings
    as text, tag 22 (and 21, 23) byte strings as their later encoding; ValueError if not CBOR
    or if bytes follow the data item (the API server refuses them, and they would pass
    unredacted)."""
    stream = io.BytesIO(body)
    try:
        value = cbor2.CBORDecoder(
            stream,
            tag_hook=lambda tag, immutable: _later(tag),
            semantic_decoders={0: _as_is, 1: _as_is, 55799: _as_is},
            read_size=1,  # read no further than the item: what is left is extraneous
        ).decode()
        if stream.tell() != len(body):
            raise ValueError(f"{len(body) - stream.tell()} bytes after the data item")
        return _plain(value)
    except (cbor2.CBORDecodeError, ValueError, TypeError, RecursionError) as error:
        raise ValueError(f"not CBOR: {error}") from error


def _as_is(value: Any, immutable: bool) -> Any:
    return value


def _later(tag: cbor2.CBORTag) -> Any:
    if isinstance(tag.value, bytes):
        if tag.tag == 22:
            return base64.b64encode(tag.value).decode()
        if tag.tag == 21:
            return base64.urlsafe_b64encode(tag.value).decode().rstrip("=")
        if tag.tag == 23:
            return tag.value.hex()
    return tag.value


def _plain(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, dict) or hasattr(value, "items"):
        items = value.items()
        return {_plain(k) if isinstance(k, bytes) else _key(k): _plain(v) for k, v in items}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise ValueError(f"{type(value).__name__} in a CBOR body")


def _key(key: Any) -> str:
    if not isinstance(key, str):
        raise ValueError(f"map key {key!r} is not a string")
    return key


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def _secrets_by_place(document: Any, found: dict[int, dict[str, Any]]) -> None:
    """The Secrets of a secrets request: the object, a list's items (which carry no kind),
    a Table's row objects, a watch event's object."""
    if not isinstance(document, dict):
        return
    found.setdefault(id(document), document)
    for item in document.get("items") or []:
        if isinstance(item, dict):
            found.setdefault(id(item), item)
    for row in document.get("rows") or []:
        if isinstance(row, dict) and isinstance(row.get("object"), dict):
            found.setdefault(id(row["object"]), row["object"])
    if isinstance(document.get("object"), dict):
        _secrets_by_place(document["object"], found)


def _secrets_by_kind(document: Any, found: dict[int, dict[str, Any]]) -> None:
    """Secrets inside anything (a v1 List from `kubectl get all`, say) carry their kind."""
    if isinstance(document, dict):
        if document.get("kind") == "Secret":
            found.setdefault(id(document), document)
        children: Any = document.values()
    elif isinstance(document, list):
        children = document
    else:
        return
    for child in children:
        if isinstance(child, dict | list):
            _secrets_by_kind(child, found)


def _statuses(document: Any) -> list[dict[str, Any]]:
    """The Status a body is (a refusal) or carries (a watch event of type ERROR)."""
    found = []
    for candidate in (document, document.get("object") if isinstance(document, dict) else None):
        if isinstance(candidate, dict) and candidate.get("kind") == "Status":
            found.append(candidate)
    return found


def _replace_texts(document: Any, path: tuple[str, ...], replace: Callable[[str], str]) -> None:
    """Each string at `path` in `document` ("*": each item of a list) replaced in place."""
    if not path:
        return
    first, *rest = path
    children: list[tuple[Any, Any]]
    if first == "*":
        children = list(enumerate(document)) if isinstance(document, list) else []
    elif isinstance(document, dict) and first in document:
        children = [(first, document[first])]
    else:
        return
    for key, child in children:
        if rest:
            _replace_texts(child, tuple(rest), replace)
        elif isinstance(child, str):
            document[key] = replace(child)


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
