"""What the API server's decoder keeps of a patched object.

The server decodes a patched object into its Go type, which changes it in two ways this module
reproduces with the patch metadata of meta.py:

- members the type does not declare disappear: misspelled fields, and the directives
  (`$setElementOrder/...`, `$patch`) that a strategic merge patch stores as sent when it adds
  a new value (objects of types that preserve unknown fields, and untyped values, are kept);
- a null where Go has no pointer becomes the zero value: a null label value is stored as "",
  a null item of a list of strings as "", of a list of objects as {}.

It does not default anything, nor normalize quantities and times, which the server does too.
"""

from __future__ import annotations

from typing import Any

from k8s_wiretap.patch.gosemantics import copy_json
from k8s_wiretap.patch.meta import Node

__all__ = ["drop_unknown_fields"]

QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_KEEP = object()


def _zero(node: Node | None) -> Any:
    """The JSON of the Go zero value a null decodes to in a map or list of `node`s."""
    if node is None:
        return _KEEP
    if node.kind == "struct":
        return {}
    if node.kind != "scalar":
        return _KEEP
    if node.definition == QUANTITY:
        return "0"
    if node.format == "int-or-string" or node.scalar_type in ("integer", "number"):
        return 0
    if node.scalar_type == "boolean":
        return False
    return "" if node.scalar_type == "string" and node.format in ("", "byte") else _KEEP


def drop_unknown_fields(value: Any, node: Node | None, *, in_place: bool = False) -> Any:
    """`value` as the server's decoder leaves it (see the module docstring): a copy, or
    `value` itself changed in place."""
    if not in_place:
        value = copy_json(value)
    _prune(value, node)
    return value


def _prune(value: Any, node: Node | None) -> None:
    if node is None:
        return
    if type(value) is dict:
        kind = node.kind
        if kind == "struct" and not node.preserve_unknown:
            for key in [k for k in value if not node.has_field(k)]:
                del value[key]
            for key, child in value.items():
                if type(child) is dict or type(child) is list:
                    _prune(child, node.field(key))
        elif kind == "map":
            _prune_items(value, node.item())
    elif type(value) is list and node.kind == "list":
        _prune_items(value, node.item())


def _prune_items(container: dict[str, Any] | list[Any], item: Node | None) -> None:
    keys = container.keys() if isinstance(container, dict) else range(len(container))
    for key in keys:
        child = container[key]  # type: ignore[index]
        if child is None:
            zero = _zero(item)
            if zero is not _KEEP:
                container[key] = zero  # type: ignore[index]
        elif type(child) is dict or type(child) is list:
            _prune(child, item)
