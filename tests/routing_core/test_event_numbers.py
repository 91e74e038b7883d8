"""The event's numbers: `_num`'s shortcut for tiny values, and the whole-array rounding of a
ranking, give exactly what rounding each number gives."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from routing_core._numbers import event_numbers
from routing_core.decision import _num
from routing_core.policy import Ranking


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


def _same(got: list[float | str | None], expected: list[float | str | None]) -> None:
    # repr tells -0.0 from 0.0 and a str from a float: the event must be byte-identical.
    assert [repr(g) for g in got] == [repr(e) for e in expected]


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), max_size=60))
def test_an_array_rounds_as_each_number_does(values: list[float]) -> None:
    _same(event_numbers(np.array(values, dtype=np.float64)), [_num(v) for v in values])


@given(st.integers(-(10**9), 10**9), st.integers(-3, 3))
def test_an_array_rounds_as_each_number_does_next_to_a_half(thousandths: int, ulps: int) -> None:
    # A value whose product with 1,000 lands on or within a few units in the last place of
    # a half: where numpy's multiply-and-round and Python's correctly rounded round() part.
    value = (thousandths + 0.5) / 1000
    for _ in range(abs(ulps)):
        value = math.nextafter(value, math.copysign(math.inf, ulps))
    _same(event_numbers(np.array([value])), [_num(value)])


def test_known_halves_and_huge_values() -> None:
    values = [0.0625, 0.0005, 0.0015, 2.675, 1.0005, -0.0625, 1e300, -1e308, 2.0**45 + 0.5]
    _same(event_numbers(np.array(values)), [_num(v) for v in values])


@given(
    # Scores as scorers make them (the extremes of the rounding itself are tested above).
    st.lists(
        st.floats(min_value=-1e6, max_value=1e6) | st.sampled_from([math.nan, -math.inf]),
        min_size=1,
        max_size=30,
    ),
    st.floats(min_value=0.05, max_value=5.0),
)
def test_a_ranking_writes_its_rows_as_the_rows_read(
    scores: list[float], temperature: float
) -> None:
    names = tuple(f"r{i}" for i in range(len(scores)))
    raw = np.array(scores, dtype=np.float64)
    rankable = np.where(np.isfinite(raw), raw, -np.inf)
    ranking = Ranking(names, raw, None, rankable=rankable, temperature=temperature)
    rows = ranking.event_rows()
    expected = [
        {"route": r.route, "score": _num(r.score), "relevance": _num(r.relevance)} for r in ranking
    ]
    assert [r["route"] for r in rows] == [e["route"] for e in expected]
    _same([r["score"] for r in rows], [e["score"] for e in expected])
    _same([r["relevance"] for r in rows], [e["relevance"] for e in expected])
