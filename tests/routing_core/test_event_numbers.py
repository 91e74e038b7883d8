"""The event's numbers: `_num`'s shortcut for tiny values gives exactly what rounding gives."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from routing_core.decision import _num


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_finite_numbers_are_rounded_to_3_decimals(value: float) -> None:
    got = _num(value)
    assert isinstance(got, float)
    assert got == round(value, 3)
    assert math.copysign(1.0, got) == math.copysign(1.0, round(value, 3))


@given(st.floats(min_value=0.0, max_value=0.001))
def test_around_the_rounding_edge(value: float) -> None:
    got = _num(value)
    assert got == round(value, 3) and repr(got) == repr(round(value, 3))


def test_the_edges_and_the_non_finite() -> None:
    for value in (
        0.0,
        -0.0,
        0.0005,
        0.00049999999999999,
        math.nextafter(0.0005, 0),
        5e-324,
        0.0015,
    ):
        assert repr(_num(value)) == repr(round(value, 3)), value
    assert _num(math.nan) == "nan" and _num(math.inf) == "inf" and _num(-math.inf) == "-inf"
    assert _num(None) is None
