"""What the API server's conversion does to a written object, beyond dropping unknown fields.

Conversions that change what is stored, by (apiVersion, kind):

- core/v1 Secret: `stringData` is write-only; converting to the internal type merges each
  entry into `data` (its UTF-8 bytes, base64 in JSON) and drops `stringData`
  (pkg/apis/core/v1/conversion.go, Convert_v1_Secret_To_core_Secret).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

__all__ = ["CONVERSIONS", "convert"]


def _secret(secret: dict[str, Any]) -> None:
    string_data = secret.pop("stringData", None)
    if not isinstance(string_data, dict) or not string_data:
        return
    existing = secret.get("data")
    data: dict[str, Any] = existing if isinstance(existing, dict) else {}
    for key, value in string_data.items():
        data[key] = base64.b64encode(str(value).encode()).decode()
    secret["data"] = data


CONVERSIONS: dict[tuple[str, str], Callable[[dict[str, Any]], None]] = {
    ("v1", "Secret"): _secret,
}


def convert(obj: Any) -> Any:
    """`obj` as the server stores it (changed in place, and returned)."""
    if isinstance(obj, dict):
        conversion = CONVERSIONS.get((str(obj.get("apiVersion")), str(obj.get("kind"))))
        if conversion is not None:
            conversion(obj)
    return obj
