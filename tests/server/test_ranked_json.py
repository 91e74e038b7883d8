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
)
def test_the_ranking_as_json_text_is_the_rows_encoded(
    rows: list[tuple[str, float]], temperature: float
) -> None:
    names = tuple(name for name, _ in rows)
    raw = np.array([score for _, score in rows], dtype=np.float64)
    rankable = np.where(np.isfinite(raw), raw, -np.inf)
    ranking = Ranking(names, raw, None, rankable=rankable, temperature=temperature)
    assert api.ranked_json(ranking) == orjson.dumps(ranking.event_rows())


def test_a_ranking_given_in_order_and_the_name_cache_refilled(monkeypatch) -> None:
    monkeypatch.setattr(api, "_NAMES_LIMIT", 3)  # every call overflows it: filled afresh
    for names in (("a", "b"), ("c", "d"), ("a", 'é"\\')):
        ranking = Ranking(names, [0.9, 0.0001], [0.99, 0.01])
        assert api.ranked_json(ranking) == orjson.dumps(ranking.event_rows())
        assert sum(map(len, api._ROWS)) <= 3
