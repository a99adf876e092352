"""gnostic's OpenAPI messages read into the JSON a document has, by their generated table.

The field numbers, names and types of `openapi.v2.*` and `openapi.v3.*` are not written
here: `kube/data/gnostic-openapi.json` holds them, generated from gnostic-models' own
OpenAPIv2.proto and OpenAPIv3.proto by `scripts/generate_gnostic.py` (a test regenerates
it and compares). What is written here is how gnostic's shapes map to JSON:

- a message named in `converted` becomes an object: each field under its OpenAPI key (the
  proto name in lowerCamelCase, `_ref` as `$ref`, a leading `_` dropped), a repeated field
  a list, and `vendor_extension` / `specification_extension` (NamedAny) merged in as `x-`
  keys; a field whose type cannot be converted is left out, and so is one the message's
  entry in `converted` does not keep (a Document keeps what patching needs: not `paths`,
  `security`...);
- `Any` is its `yaml` text, parsed (a google.protobuf.Any alone is not readable);
- a map message, `repeated NamedX additional_properties = 1` with NamedX {name = 1,
  value = 2} (Properties, Definitions, SchemasOrReferences, Strings), is an object;
- a message whose fields all belong to its oneof (SchemaOrReference,
  AdditionalPropertiesItem, DefaultType) is the member that is set; none set leaves the
  key out;
- a message of one repeated field (TypeItem, ItemsItem: a JSON Schema `type` or `items`)
  is its one member, or the list of them.

A map, oneof or list message converts when everything it can hold converts.
"""

from __future__ import annotations

import copy
import functools
import struct
from collections.abc import Callable, Collection, Mapping
from typing import Any

from k8s_wiretap.kube import datafiles
from k8s_wiretap.wire import yamltext
from k8s_wiretap.wire.protowire import BYTES, FIXED64, VARINT, Field, ProtoError, parse

__all__ = ["OMIT", "TABLE", "Reader", "document_reader"]

TABLE = "gnostic-openapi.json"
EXTENSIONS = frozenset({"vendor_extension", "specification_extension"})
Reader = Callable[[Field], Any]
OMIT: Any = object()  # what a reader returns for a field the JSON form does not have
Spec = tuple[int, str, str, str]  # number, proto name, type, label


def _bytes(field: Field) -> bytes:
    if field.wire_type != BYTES or not isinstance(field.value, bytes):
        raise ProtoError(f"field {field.number}: expected length-delimited")
    return field.value


def _string(field: Field) -> str:
    return _bytes(field).decode()


def _varint(field: Field) -> int:
    if field.wire_type != VARINT or not isinstance(field.value, int):
        raise ProtoError(f"field {field.number}: expected a varint")
    return field.value


def _bool(field: Field) -> bool:
    return _varint(field) != 0


def _int64(field: Field) -> int:
    value = _varint(field)
    return value - (1 << 64) if value >= 1 << 63 else value


def _double(field: Field) -> float | int:
    if field.wire_type != FIXED64 or not isinstance(field.value, bytes):
        raise ProtoError(f"field {field.number}: expected a double")
    number: float = struct.unpack("<d", field.value)[0]
    return int(number) if number.is_integer() else number


SCALARS: dict[str, Reader] = {"string": _string, "bool": _bool, "int64": _int64, "double": _double}


@functools.lru_cache(maxsize=4096)
def _yaml(text: str) -> Any:
    """The few distinct extension values (`merge`, `atomic`, `- type`) parsed once each;
    callers get copies."""
    return yamltext.load(text)


def _any(field: Field) -> Any:
    """openapi.vN.Any: its `yaml` (2) parsed."""
    for inner in parse(_bytes(field)):
        if inner.number == 2:
            return copy.deepcopy(_yaml(_string(inner)))
    return None


def json_name(proto_name: str) -> str:
    """The OpenAPI key of a gnostic field: `_ref` → `$ref`, `multiple_of` → `multipleOf`."""
    if proto_name == "_ref":
        return "$ref"
    first, *rest = proto_name.lstrip("_").split("_")
    return first + "".join(word.capitalize() for word in rest)


@functools.cache
def _messages() -> dict[str, tuple[Spec, ...]]:
    table = datafiles.load(TABLE)["messages"]
    return {
        name: tuple((n, p, t, label) for n, p, t, label in fields) for name, fields in table.items()
    }


class _Readers:
    """The readers of one document's messages; `converted` names the objects it keeps, each
    with the proto names of the fields it keeps (None: every one)."""

    def __init__(self, converted: Mapping[str, Collection[str] | None]) -> None:
        self.converted = dict(converted)
        self.messages = _messages()
        self.readers: dict[str, Reader] = {}
        self.built: dict[str, Reader] = {}

    def reader(self, type_name: str) -> Reader | None:
        """How a field of `type_name` reads; None if it is not converted."""
        if type_name in SCALARS:
            return SCALARS[type_name]
        if not self.convertible(type_name, frozenset()):
            return None
        if type_name not in self.readers:
            # a Schema holds SchemaOrReferences that hold Schemas: while one is built, what
            # refers to it goes through this forwarder
            self.readers[type_name] = lambda field: self.built[type_name](field)
            self.built[type_name] = self.readers[type_name] = self._build(type_name)
        return self.readers[type_name]

    def convertible(self, name: str, seen: frozenset[str]) -> bool:
        """Whether a field of message `name` has a JSON form here (module docstring)."""
        if name in SCALARS or name in self.converted or _is_any(name, self.messages):
            return True
        fields = self.messages.get(name)
        if fields is None or name in seen:
            return False
        seen = seen | {name}
        if _is_map(fields):
            value = self.messages.get(fields[0][2], ())
            return any(n == 2 and self.convertible(t, seen) for n, _, t, _ in value)
        if _is_oneof(fields) or _is_list(fields):
            return all(self.convertible(t, seen) for _, _, t, _ in fields)
        return False

    def _build(self, name: str) -> Reader:
        fields = self.messages[name]
        if _is_any(name, self.messages):
            return _any
        if name in self.converted:
            kept = self.converted[name]
            return self._object(tuple(f for f in fields if kept is None or f[1] in kept))
        if _is_map(fields):
            return self._map(fields[0])
        if _is_oneof(fields):
            return self._oneof(fields)
        return self._list(fields[0])

    def _object(self, fields: tuple[Spec, ...]) -> Reader:
        specs: dict[int, tuple[str, Reader, bool]] = {}

        def read(field: Field) -> dict[str, Any]:
            out: dict[str, Any] = {}
            extensions: dict[str, Any] = {}
            for inner in parse(_bytes(field)):
                spec = specs.get(inner.number)
                if spec is None:
                    continue
                key, reader, repeated = spec
                value = reader(inner)
                if value is OMIT:
                    continue
                if key == "":
                    extensions[value[0]] = value[1]
                elif repeated:
                    out.setdefault(key, []).append(value)
                else:
                    out[key] = value
            out.update(extensions)
            return out

        for number, proto_name, type_name, label in fields:
            if proto_name in EXTENSIONS:
                specs[number] = ("", self._named(type_name), True)
            elif (reader := self.reader(type_name)) is not None:
                specs[number] = (json_name(proto_name), reader, label == "repeated")
        return read

    def _member(self, type_name: str) -> Reader:
        """The reader of a member `convertible` has vouched for."""
        reader = self.reader(type_name)
        assert reader is not None, type_name
        return reader

    def _named(self, type_name: str) -> Reader:
        """A NamedX message (name = 1, value = 2) as a (name, value) pair."""
        value = self._member(next(t for n, _, t, _ in self.messages[type_name] if n == 2))

        def read(field: Field) -> tuple[str, Any]:
            name, result = "", None
            for inner in parse(_bytes(field)):
                if inner.number == 1:
                    name = _string(inner)
                elif inner.number == 2:
                    result = value(inner)
            return name, result

        return read

    def _map(self, spec: Spec) -> Reader:
        number, _, type_name, _ = spec
        named = self._named(type_name)

        def read(field: Field) -> dict[str, Any]:
            return dict(named(inner) for inner in parse(_bytes(field)) if inner.number == number)

        return read

    def _oneof(self, fields: tuple[Spec, ...]) -> Reader:
        members = {number: self._member(type_name) for number, _, type_name, _ in fields}

        def read(field: Field) -> Any:
            for inner in parse(_bytes(field)):
                member = members.get(inner.number)
                if member is not None:
                    return member(inner)
            return OMIT

        return read

    def _list(self, spec: Spec) -> Reader:
        number, _, type_name, _ = spec
        member = self._member(type_name)

        def read(field: Field) -> Any:
            values = [member(inner) for inner in parse(_bytes(field)) if inner.number == number]
            return values[0] if len(values) == 1 else values

        return read


def _is_any(name: str, messages: dict[str, tuple[Spec, ...]]) -> bool:
    """gnostic's Any: {google.protobuf.Any value = 1; string yaml = 2}."""
    return [f[1] for f in messages.get(name, ())] == ["value", "yaml"]


def _is_map(fields: tuple[Spec, ...]) -> bool:
    return len(fields) == 1 and fields[0][1] == "additional_properties"


def _is_oneof(fields: tuple[Spec, ...]) -> bool:
    return bool(fields) and all(label == "oneof" for *_, label in fields)


def _is_list(fields: tuple[Spec, ...]) -> bool:
    return len(fields) == 1 and fields[0][3] == "repeated"


def document_reader(
    document: str, converted: Mapping[str, Collection[str] | None]
) -> Callable[[bytes], dict[str, Any]]:
    """A reader of `document` ("openapi.v2.Document", which `converted` names too) into its
    JSON form, keeping the messages `converted` names as objects, with the fields it says
    (the module docstring says the rest)."""
    readers = _Readers(converted)
    reader = readers.reader(document)
    assert reader is not None

    def read(data: bytes) -> dict[str, Any]:
        result: dict[str, Any] = reader(Field(0, BYTES, data))
        return result

    return read
