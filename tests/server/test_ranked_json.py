"""The route server writes an event's ranking as JSON text from the ranking's columns: byte for
byte what encoding the library's `event_rows` gives."""

from __future__ import annotations

import math

import numpy as np
import orjson
from hypothesis import given
from hypothesis import strategies as st

from routing_core.policy import Ranking
from routing_core.server import api

SCORES = (
    st.floats(min_value=-1e6, max_value=1e6)
    | st.floats(min_value=-0.001, max_value=0.001)
    | st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -0.0, 0.0005, 5e-324, -5e-324])
)
NAMES = st.text(min_size=1, max_size=12)  # quotes, backslashes, controls, any script


@given(
    st.lists(st.tuples(NAMES, SCORES), min_size=0, max_size=40, unique_by=lambda p: p[0]),
    st.floats(min_value=0.05, max_value=5.0),
    st.integers(min_value=1, max_value=45),
)
def test_the_ranking_as_json_text_is_the_rows_encoded(
    rows: list[tuple[str, float]], temperature: float, top: int
) -> None:
    """Whole, and cut to its `top` first rows (a request's `top`, docs/server.md)."""
    names = tuple(name for name, _ in rows)
    raw = np.array([score for _, score in rows], dtype=np.float64)
    rankable = np.where(np.isfinite(raw), raw, -np.inf)
    ranking = Ranking(names, raw, None, rankable=rankable, temperature=temperature)
    assert api.ranked_json(ranking) == orjson.dumps(ranking.event_rows())
    assert api.ranked_json(ranking, top) == orjson.dumps(ranking.event_rows()[:top])


def test_a_ranking_given_in_order_and_the_name_cache_refilled(monkeypatch) -> None:
    monkeypatch.setattr(api, "_NAMES_LIMIT", 3)  # every call overflows it: filled afresh
    for names in (("a", "b"), ("c", "d"), ("a", 'é"\\')):
        ranking = Ranking(names, [0.9, 0.0001], [0.99, 0.01])
        assert api.ranked_json(ranking) == orjson.dumps(ranking.event_rows())
        assert sum(map(len, api._ROWS)) <= 3


# Probabilities, as the built-in scorers give: finite, not negative, many of them tiny.
PROBABILITIES = (
    st.floats(min_value=0.0, max_value=1.0)
    | st.floats(min_value=0.0, max_value=0.001)
    | st.sampled_from([0.0, 0.0005, 0.00049999999999999, 0.0005000000000001, 5e-324, 1.0])
)


@given(
    st.lists(PROBABILITIES, min_size=1, max_size=60),
    st.floats(min_value=0.05, max_value=50.0),
    st.integers(min_value=1, max_value=65),
)
def test_the_usual_case_walked_from_the_top_writes_the_same_text(
    scores: list[float], temperature: float, top: int
) -> None:
    names = tuple(f"route_{i}" for i in range(len(scores)))
    raw = np.array(scores, dtype=np.float64)
    ranking = Ranking(names, raw, None, rankable=raw, temperature=temperature)
    assert ranking._loud_prefix(ranking._sorted(), ranking._shares()) is not None  # the walk ran
    assert api.ranked_json(ranking) == orjson.dumps(ranking.event_rows())
    assert api.ranked_json(ranking, top) == orjson.dumps(ranking.event_rows()[:top])


def test_a_negative_zero_or_a_nan_takes_the_long_way() -> None:
    for odd in (-0.0, math.nan, -0.2, math.inf):
        raw = np.array([0.5, odd, 0.0001], dtype=np.float64)
        rankable = np.where(np.isfinite(raw), raw, -np.inf)
        ranking = Ranking(("a", "b", "c"), raw, None, rankable=rankable)
        assert ranking._loud_prefix(ranking._sorted(), ranking._shares()) is None
        assert api.ranked_json(ranking) == orjson.dumps(ranking.event_rows())


def test_a_flat_ranking_counts_its_loud_rows_on_the_arrays() -> None:
    raw = np.zeros(100)  # nothing scored: every relevance 0.01, every row loud
    ranking = Ranking(tuple(f"r{i}" for i in range(100)), raw, None, rankable=raw)
    count, values = ranking._loud_prefix(ranking._sorted(), ranking._shares())  # type: ignore[misc]
    assert count == 100 and isinstance(values, np.ndarray)
    assert api.ranked_json(ranking) == orjson.dumps(ranking.event_rows())
    assert api.ranked_json(ranking, 7) == orjson.dumps(ranking.event_rows()[:7])
