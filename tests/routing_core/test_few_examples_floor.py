"""A profile of few examples a route refuses a larger share of its held-out requests
(docs/decisions.md, "A floor for few examples a route"; `_few.floor_refused`)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from routing_core.build import build_pack
from routing_core.scorers import _few, _model, calibration, lexical
from tests.routing_core.airline_profile import AIRLINE_ROUTES

LARGE = calibration.FLOOR_REFUSED


def test_few_texts_a_route_refuse_the_few_examples_share_and_many_a_large_packs() -> None:
    assert _few.floor_refused(10 * 12, 12) == _few.FEW_FLOOR_REFUSED
    assert _few.floor_refused(_few.FEW_PER_ROUTE * 12, 12) == _few.FEW_FLOOR_REFUSED
    assert _few.floor_refused(_few.MANY_PER_ROUTE * 12, 12) == LARGE
    assert _few.floor_refused(100 * 150, 150) == LARGE
    middle = (_few.FEW_PER_ROUTE + _few.MANY_PER_ROUTE) // 2
    assert _few.floor_refused(middle * 10, 10) == pytest.approx(
        (_few.FEW_FLOOR_REFUSED + LARGE) / 2
    )


@given(
    st.integers(min_value=1, max_value=400),
    st.integers(min_value=0, max_value=100),
    st.integers(min_value=0, max_value=100),
)
def test_the_share_never_rises_with_more_texts_a_route(routes: int, a: int, b: int) -> None:
    fewer, more = sorted((a, b))
    low = _few.floor_refused(more * routes, routes)
    high = _few.floor_refused(fewer * routes, routes)
    assert LARGE <= low <= high <= _few.FEW_FLOOR_REFUSED


def test_the_floor_is_that_quantile_of_the_held_out_requests() -> None:
    top = np.linspace(0.35, 0.69, 100)
    rest = (1.0 - top) / 2
    logits = np.log(np.stack([top, rest, rest], axis=1)).astype(np.float32)
    labels = np.zeros(100, np.int64)
    floor = _model.fit_floor(logits, labels, 3, refused=_few.FEW_FLOOR_REFUSED)
    assert (top < floor).mean() == pytest.approx(_few.FEW_FLOOR_REFUSED, abs=0.01)
    assert floor > _model.fit_floor(logits, labels, 3)  # a large pack's share: lower


def test_a_built_profile_of_few_examples_fits_the_higher_floor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The build hands its routes' texts a route to the floor's fit: the same profile (12
    routes of 8 examples, fitted by cross-validation) fitted with a large pack's share has a
    lower floor."""
    floor = build_pack(AIRLINE_ROUTES, slug="few").scorer.model.floor  # type: ignore[union-attr]
    monkeypatch.setattr(_few, "FEW_FLOOR_REFUSED", LARGE)
    lexical._LEARNED.clear()  # this process's learned models: learn it again
    large = build_pack(AIRLINE_ROUTES, slug="few").scorer.model.floor  # type: ignore[union-attr]
    lexical._LEARNED.clear()
    assert floor is not None and large is not None and floor > large
