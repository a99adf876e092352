"""`same_json` says what comparing encoding/json's output (`go_json`) says."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from k8s_wiretap.patch.gosemantics import go_json, same_json

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.sampled_from([0, 1, -1, 0.0, -0.0, 1.0, 1.5, 1e21, 1e-7, 2.0**53])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["", "a", "<&>", "\u2028", "1", "true"])
    | st.text(max_size=4)
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(values, values)
def test_same_json_is_go_json_equality(left: Any, right: Any) -> None:
    assert same_json(left, right) == (go_json(left) == go_json(right))


@given(values)
def test_a_value_is_the_same_as_its_copy(value: Any) -> None:
    assert same_json(value, value) and same_json(value, _copied(value))


def _copied(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copied(value[k]) for k in reversed(list(value))}  # key order differs
    if isinstance(value, list):
        return [_copied(v) for v in value]
    return value


def test_the_cases_python_equality_gets_wrong() -> None:
    assert not same_json(True, 1) and not same_json(False, 0)  # Python: True == 1
    assert same_json(1, 1.0) and same_json(2**53, 2.0**53)  # encoding/json: both "1"
    assert not same_json(0.0, -0.0)  # "0" and "-0"
    assert not same_json("1", 1) and not same_json(None, 0)
