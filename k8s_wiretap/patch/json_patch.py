"""JSON patch (RFC 6902), applied as the API server of a given release applies it.

The server decodes the patch with evanphx/json-patch (v4.9.0 in 1.20-1.21, v4.11.0 in 1.22,
v4.12.0 in 1.23-1.34, v4.13.0 from 1.35) and applies it to the JSON form of the object
(`runtime.Encode` of the stored object), then decodes the result into the typed
object. That library deviates from RFC 6902 (and from the `jsonpatch` package, which follows
the RFC), and the deviations decide what the server stores, so they are reproduced here:

- `replace` of a missing object member adds it; only a missing array index fails;
- negative array indices count from the end for `add` and `remove` (`-1` appends for `add`);
  up to v4.11 (1.22), as an intermediate path part or for `replace`/`test`/`move`/`copy`,
  a negative index panics in Go (500); from v4.12 (1.23) it counts from the end there too;
- array indices are parsed with `strconv.Atoi` ("01" and "+1" are 1);
- a path is split on "/" and its first part ignored, so "a/b" means "/b"; "/" addresses the
  member "" of the root; "" is a missing path, except that from v4.12 `replace` and `test`
  of "" replace and test the whole document;
- a missing `value` adds null; `test` of a missing member against `"value": null` passes,
  and from v4.13 (1.35) without any `value` too, where older versions panic;
  `test` compares scalars by their JSON text (Go's encoding of both here: a client that writes
  `1.0` for the server's `1` fails on the server but passes here);
- `copy` fails once copies add up to more than 3 MiB (the API server's JSONPatchMaxCopyBytes);
  more than 10000 operations are refused (413).

Errors carry the library's messages (`add operation does not apply: doc is missing path:
"/x": missing value`) and the server's status: 400 for a patch that is not a list of
operations, 422 for an operation that fails, 500 where Go panics.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from k8s_wiretap.kube.release import Release, ReleaseLike
from k8s_wiretap.patch.errors import REJECTED, PatchError
from k8s_wiretap.patch.gosemantics import copy_json, go_json
from k8s_wiretap.patch.meta import DEFAULT_RELEASE

__all__ = ["MAX_COPY_BYTES", "MAX_OPERATIONS", "apply_json_patch"]

MAX_OPERATIONS = 10000
MAX_COPY_BYTES = 3 * 1024 * 1024
MISSING = "missing value"
INVALID_INDEX = "invalid index referenced"
TEST_FAILED = "test failed"
_INT = re.compile(r"[+-]?[0-9]+\Z")
_ABSENT = object()

Container = dict[str, Any] | list[Any]


class _Failed(Exception):
    """An operation failed with evanphx's message (wrapped as `context: cause`)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _Panic(Exception):
    """Where the Go code panics (the API server answers 500)."""


@dataclass
class _Run:
    """One patch being applied: the release's library behaviour and the bytes copied."""

    negative_get: bool  # v4.12: negative indices for get/set, "" is the whole document
    nil_safe_test: bool  # v4.13: `test` without `value` of a missing member passes
    copied: int = 0

    @classmethod
    def of(cls, release: ReleaseLike) -> _Run:
        server = Release.of(release, DEFAULT_RELEASE)
        return cls(server >= Release(1, 23), server >= Release(1, 35))


def _wrap(cause: str, context: str) -> _Failed:
    return _Failed(f"{context}: {cause}")


def apply_json_patch(document: dict[str, Any], patch: Any, release: ReleaseLike = None) -> Any:
    """`document` with the JSON `patch` applied as `release`'s server does (None: 1.20;
    inputs are not modified)."""
    if not isinstance(patch, list):
        kind = _json_kind(patch)
        raise PatchError(
            f"json: cannot unmarshal {kind} into Go value of type jsonpatch.Patch", 400
        )
    if len(patch) > MAX_OPERATIONS:
        message = "The allowed maximum operations in a JSON patch is"
        raise PatchError(f"{message} {MAX_OPERATIONS}, got {len(patch)}", 413)
    for operation in patch:
        if operation is not None and not isinstance(operation, dict):
            kind = _json_kind(operation)
            message = f"json: cannot unmarshal {kind} into Go value of type jsonpatch.Operation"
            raise PatchError(message, 400)
    root: Container = copy_json(document)
    run = _Run.of(release)
    try:
        for operation in patch:
            root = _apply(root, operation or {}, run)
    except _Failed as failure:
        raise PatchError(failure.message, 422, REJECTED) from None
    except _Panic as panic:
        raise PatchError(f"runtime error: {panic}", 500) from None
    return root


def _string_member(operation: dict[str, Any], name: str) -> str | None:
    value = operation.get(name)
    return value if isinstance(value, str) else None


def _apply(root: Container, operation: dict[str, Any], run: _Run) -> Container:
    """One operation; the document after it (a new one when `replace` of "" swaps it)."""
    kind = _string_member(operation, "op") or "unknown"
    handler = _OPERATIONS.get(kind)
    if handler is None:
        raise _Failed(f"Unexpected kind: {kind}")
    if run.negative_get and kind in ("replace", "test") and operation.get("path") == "":
        return _whole(root, operation, kind)
    handler(root, operation, run)
    return root


def _whole(root: Container, operation: dict[str, Any], kind: str) -> Container:
    """v4.12+: `replace` or `test` of the whole document (path "")."""
    if "value" not in operation:
        raise _Panic("invalid memory address or nil pointer dereference")
    value = operation["value"]
    if kind == "test":
        if go_json(root) != go_json(value):
            raise _Failed(f"testing value  failed: {TEST_FAILED}")
        return root
    if not isinstance(value, (dict, list)):
        raise _Failed("replace operation value must be object or array: %!w(<nil>)")
    whole: Container = copy_json(value)
    return whole


def _json_kind(value: Any) -> str:
    """The JSON kind encoding/json names in an UnmarshalTypeError."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return "string" if isinstance(value, str) else "value"


def _path(operation: dict[str, Any], name: str, context: str, missing: bool = False) -> str:
    """Operation.Path()/From(); `missing`: the caller reports any failure as missing value."""
    value = operation.get(name)
    if isinstance(value, str):
        return value
    if missing:
        raise _wrap(MISSING, context)
    if value is None:
        cause = "operation missing path field" if name == "path" else "operation, missing from"
        raise _wrap(f"{cause}{'' if name == 'path' else ' field'}: {MISSING}", context)
    cause = f"json: cannot unmarshal {_json_kind(value)} into Go value of type string"
    raise _wrap(cause, context)


def _decode(part: str) -> str:
    return part.replace("~1", "/").replace("~0", "~") if "~" in part else part


def _find(root: Container, path: str, run: _Run) -> tuple[Container, str] | None:
    """findObject: the container of the path's last part, and that part, or None."""
    parts = path.split("/")
    if len(parts) < 2:
        return None
    container: Container = root
    for part in parts[1:-1]:
        child = _get(container, _decode(part), run)
        if not isinstance(child, (dict, list)):
            return None
        container = child
    return container, _decode(parts[-1])


def _atoi(key: str) -> int:
    if not _INT.match(key) or not -(2**63) <= int(key) < 2**63:
        raise _Failed(f'strconv.Atoi: parsing "{key}": invalid syntax')
    return int(key)


def _get(container: Container, key: str, run: _Run) -> Any:
    """container.get(key): None for a missing member; errors for bad array indices."""
    if isinstance(container, dict):
        return container.get(key)
    try:
        return _array_get(container, key, run)
    except _Failed:
        return _ABSENT


def _array_get(container: list[Any], key: str, run: _Run) -> Any:
    return container[_array_index(container, key, run)]


def _array_index(container: list[Any], key: str, run: _Run) -> int:
    """partialArray.get's index: negative ones count from the end from v4.12, and panic
    before (Go indexes the slice with them)."""
    index = _atoi(key)
    if index < 0 and run.negative_get:
        if index < -len(container):
            raise _Failed(f"Unable to access invalid index: {index}: {INVALID_INDEX}")
        index += len(container)
    if index >= len(container):
        raise _Failed(f"Unable to access invalid index: {index}: {INVALID_INDEX}")
    if index < 0:
        raise _Panic(f"index out of range [{index}]")
    return index


def _add_to(container: Container, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
        return
    if key == "-":
        container.append(value)
        return
    try:
        index = _atoi(key)
    except _Failed as error:
        raise _wrap(error.message, f"value was not a proper array index: '{key}'") from None
    size = len(container) + 1
    if index >= size or index < -size:
        raise _Failed(f"Unable to access invalid index: {index}: {INVALID_INDEX}")
    container.insert(index + size if index < 0 else index, value)


def _remove_from(container: Container, key: str) -> Any:
    if isinstance(container, dict):
        if key not in container:
            raise _Failed(f"Unable to remove nonexistent key: {key}: {MISSING}")
        return container.pop(key)
    index = _atoi(key)
    if index >= len(container) or index < -len(container):
        raise _Failed(f"Unable to access invalid index: {index}: {INVALID_INDEX}")
    return container.pop(index)


def _value(operation: dict[str, Any]) -> Any:
    return copy_json(operation.get("value"))


def _add(root: Container, operation: dict[str, Any], run: _Run) -> None:
    path = _path(operation, "path", "add operation failed to decode path", missing=True)
    found = _find(root, path, run)
    if found is None:
        raise _Failed(f'add operation does not apply: doc is missing path: "{path}": {MISSING}')
    try:
        _add_to(*found, _value(operation))
    except _Failed as error:
        raise _wrap(error.message, f"error in add for path: '{path}'") from None


def _remove(root: Container, operation: dict[str, Any], run: _Run) -> None:
    path = _path(operation, "path", "remove operation failed to decode path", missing=True)
    found = _find(root, path, run)
    if found is None:
        raise _Failed(f'remove operation does not apply: doc is missing path: "{path}": {MISSING}')
    try:
        _remove_from(*found)
    except _Failed as error:
        raise _wrap(error.message, f"error in remove for path: '{path}'") from None


def _replace(root: Container, operation: dict[str, Any], run: _Run) -> None:
    path = _path(operation, "path", "replace operation failed to decode path")
    found = _find(root, path, run)
    if found is None:
        raise _Failed(f"replace operation does not apply: doc is missing path: {path}: {MISSING}")
    container, key = found
    if isinstance(container, dict):
        container[key] = _value(operation)
        return
    try:
        index = _array_index(container, key, run)
    except _Failed:
        message = f"replace operation does not apply: doc is missing key: {path}: {MISSING}"
        raise _Failed(message) from None
    container[index] = _value(operation)


def _take(root: Container, source: str, kind: str, run: _Run) -> tuple[Container, str, Any]:
    found = _find(root, source, run)
    if found is None:
        message = f"{kind} operation does not apply: doc is missing from path: {source}"
        raise _Failed(f"{message}: {MISSING}")
    container, key = found
    try:
        value = (
            container.get(key) if isinstance(container, dict) else _array_get(container, key, run)
        )
    except _Failed as error:
        context = f"error in {kind} for " + (
            f"path: '{key}'" if kind == "move" else f"from: '{source}'"
        )
        raise _wrap(error.message, context) from None
    return container, key, value


def _put(root: Container, path: str, value: Any, kind: str, context: str, run: _Run) -> None:
    found = _find(root, path, run)
    if found is None:
        message = f"{kind} operation does not apply: doc is missing destination path: {path}"
        raise _Failed(f"{message}: {MISSING}")
    try:
        _add_to(*found, value)
    except _Failed as error:
        raise _wrap(error.message, context) from None


def _move(root: Container, operation: dict[str, Any], run: _Run) -> None:
    source = _path(operation, "from", "move operation failed to decode from")
    container, key, value = _take(root, source, "move", run)
    try:
        _remove_from(container, key)
    except _Failed as error:
        raise _wrap(error.message, f"error in move for path: '{key}'") from None
    path = _path(operation, "path", "move operation failed to decode path")
    _put(root, path, value, "move", f"error in move for path: '{path}'", run)


def _copy(root: Container, operation: dict[str, Any], run: _Run) -> None:
    source = _path(operation, "from", "copy operation failed to decode from")
    _, _, value = _take(root, source, "copy", run)
    path = _path(operation, "path", "copy operation failed to decode path", missing=True)
    run.copied += 0 if value is None else len(go_json(value).encode())
    if run.copied > MAX_COPY_BYTES:
        raise _Failed(
            "Unable to complete the copy, the accumulated size increase of copy is "
            f"{run.copied}, exceeding the limit {MAX_COPY_BYTES}"
        )
    _put(root, path, copy_json(value), "copy", "error while adding value during copy", run)


def _test(root: Container, operation: dict[str, Any], run: _Run) -> None:
    path = _path(operation, "path", "test operation failed to decode path")
    found = _find(root, path, run)
    if found is None:
        raise _Failed(f"test operation does not apply: is missing path: {path}: {MISSING}")
    container, key = found
    try:
        value = (
            container.get(key) if isinstance(container, dict) else _array_get(container, key, run)
        )
    except _Failed as error:
        raise _wrap(error.message, f"error in test for path: '{path}'") from None
    if "value" not in operation and value is None:
        if run.nil_safe_test:
            return
        raise _Panic("invalid memory address or nil pointer dereference")
    expected = operation.get("value", _ABSENT)
    if value is None and expected is None:
        return
    if value is None or expected is _ABSENT or go_json(value) != go_json(expected):
        raise _Failed(f"testing value {path} failed: {TEST_FAILED}")


_OPERATIONS = {
    "add": _add,
    "remove": _remove,
    "replace": _replace,
    "move": _move,
    "test": _test,
    "copy": _copy,
}
