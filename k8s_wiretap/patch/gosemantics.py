"""Go's view of decoded JSON values: dynamic types, `==`, map keys and `fmt` verbs.

The API server decodes JSON into `interface{}` values: `map[string]interface {}`,
`[]interface {}`, `string`, `bool`, `int64` (integral numbers, as apimachinery's util/json
decodes them), `float64` and nil. Go compares them with `==` (same dynamic type and value;
comparing two maps or two slices panics) and prints them with `%v`/`%s` in error messages.
Python's `1 == 1.0 == True` is looser, so the patch engine compares through here.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

from k8s_wiretap.patch.errors import PatchError

__all__ = [
    "MAP",
    "SLICE",
    "bad_arg_type",
    "copy_json",
    "go_eq",
    "go_json",
    "go_s",
    "go_type",
    "go_v",
    "hash_key",
    "same_json",
]

MAP = "map[string]interface {}"
SLICE = "[]interface {}"

_TYPES: dict[type, str] = {
    dict: MAP,
    list: SLICE,
    str: "string",
    bool: "bool",
    int: "int64",
    float: "float64",
}


def go_type(value: Any) -> str | None:
    """The Go dynamic type of a decoded JSON value (None for nil)."""
    if value is None:
        return None
    return _TYPES.get(type(value), type(value).__name__)


def _type_text(value: Any) -> str:
    name = go_type(value)
    return "%!s(<nil>)" if name is None else name


def bad_arg_type(expected: str, actual: Any) -> PatchError:
    """mergepatch.ErrBadArgType: `expected a <type>, but received a <type>`."""
    return PatchError(f"expected a {expected}, but received a {_type_text(actual)}")


def go_eq(left: Any, right: Any) -> bool:
    """Go's `==` on two interface{} values; comparing two maps or two slices panics."""
    if left is None or right is None:
        return left is None and right is None
    left_type, right_type = type(left), type(right)
    if left_type is not right_type:
        return False
    if left_type is dict or left_type is list:
        raise PatchError(f"runtime error: comparing uncomparable type {go_type(left)}")
    return bool(left == right)


def hash_key(value: Any) -> tuple[type, Any]:
    """A Python key behaving as `value` does as a Go map[interface{}] key (maps panic)."""
    if isinstance(value, (dict, list)):
        raise PatchError(f"runtime error: hash of unhashable type {go_type(value)}")
    return (type(value), value)


def copy_json(value: Any) -> Any:
    """A deep copy of a decoded JSON value (much faster than copy.deepcopy)."""
    if type(value) is dict:
        return {k: copy_json(v) for k, v in value.items()}
    if type(value) is list:
        return [copy_json(v) for v in value]
    return value


def _go_float(number: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 64), which `%v` uses for float64."""
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "+Inf" if number > 0 else "-Inf"
    sign, digits, exponent = Decimal(repr(number)).normalize().as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits)) or "0"
    if text == "0":
        return "-0" if sign else "0"
    point = len(text) + exponent  # position of the decimal point in `text`
    exp = point - 1
    prefix = "-" if sign else ""
    if exp < -4 or exp >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{text}"
    if point >= len(text):
        return prefix + text + "0" * (point - len(text))
    return f"{prefix}{text[:point]}.{text[point:]}"


def go_v(value: Any) -> str:
    """fmt's `%v` of a decoded JSON value (maps print with sorted keys)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_v(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_v(v) for v in value) + "]"
    return str(value)


def go_s(value: Any) -> str:
    """fmt's `%s`: strings as they are, anything else as `%!s(type=value)`."""
    if isinstance(value, str):
        return value
    if value is None:
        return "%!s(<nil>)"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_s(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_s(v) for v in value) + "]"
    return f"%!s({go_type(value)}={go_v(value)})"


_ESCAPES = {"b": "\\u0008", "f": "\\u000c"}
_HTML = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_STRING_FIXES = re.compile(r"\\(.)|[<>&\u2028\u2029]")


def _fix_escape(match: re.Match[str]) -> str:
    escaped = match.group(1)
    if escaped is None:
        return _HTML[match.group(0)]
    return _ESCAPES.get(escaped, match.group(0))


def _go_json_float(number: float) -> str:
    """encoding/json's float64: 'f' between 1e-6 and 1e21, else 'e' with e-7, not e-07."""
    if number == 0 or 1e-6 <= abs(number) < 1e21:
        text = format(Decimal(repr(number)), "f")
        return text[:-2] if text.endswith(".0") else text
    mantissa, _, exponent = repr(number).partition("e")
    mantissa = mantissa[:-2] if mantissa.endswith(".0") else mantissa
    sign = "-" if exponent.startswith("-") else "+"
    return f"{mantissa}e{sign}{int(exponent.lstrip('+-'))}"


def go_json(value: Any) -> str:
    """encoding/json.Marshal of a decoded JSON value: compact, sorted keys, HTML escaped."""
    if isinstance(value, str):
        return _STRING_FIXES.sub(_fix_escape, json.dumps(value, ensure_ascii=False))
    if value is None or isinstance(value, (bool, int)):
        return json.dumps(value)
    if isinstance(value, float):
        return _go_json_float(value)
    if isinstance(value, dict):
        items = ",".join(f"{go_json(k)}:{go_json(value[k])}" for k in sorted(value))
        return "{" + items + "}"
    return "[" + ",".join(go_json(v) for v in value) + "]"


_NUMBERS = (int, float)


def same_json(left: Any, right: Any) -> bool:
    """`go_json(left) == go_json(right)`, without writing either out: a bool is never a
    number, 1 and 1.0 are the same, -0.0 is not 0, a dict's key order does not count."""
    if left is right:
        return True
    kind, other = type(left), type(right)
    if kind is bool or other is bool:
        return kind is other and left == right
    if kind in _NUMBERS and other in _NUMBERS:
        if kind is not other or left == 0:
            return go_json(left) == go_json(right)
        return bool(left == right)
    if kind is not other:
        return False
    if kind is dict:
        return left.keys() == right.keys() and all(same_json(v, right[k]) for k, v in left.items())
    if kind is list:
        return len(left) == len(right) and all(map(same_json, left, right))
    return bool(left == right)  # strings, None
