"""A first turn's "no route" column (docs/pack-format.md, Lexical scorer, step 7).

A softmax over the routes alone spends all of a message's mass on them: an off-topic message
whose words lean slightly one way scored as high as a request. A model without an
out-of-scope class now carries `none_logit`, where "no route" stands above the routes' mean
calibrated logit, and a first turn's softmax has that term too.
"""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from routing_core import Pack, Router, dump_pack, load_pack
from routing_core.build import build_pack
from routing_core.conformance import synthetic
from routing_core.scorers import _model
from routing_core.scorers.lexical import LexicalScorer

DOMAINS = ("travel", "home")
OFF_TOPIC = [
    "what's the weather like in paris tomorrow",
    "who won the match yesterday",
    "what is the meaning of life",
]


def _routes(seed: int, per_route: int) -> list[dict[str, object]]:
    rng = random.Random(seed)
    return [
        {"name": f"{d}_{a}", "examples": [synthetic.message(rng, d, a) for _ in range(per_route)]}
        for d in DOMAINS
        for a in synthetic.ACTIONS
    ]


@pytest.fixture(scope="module")
def pack() -> Pack:
    """20 routes of 15 examples (300 texts: the held-out fit), without the built-in background,
    so the model has no out-of-scope class."""
    return build_pack(_routes(3, 15), slug="home-travel", no_background=True)


def _without_column(pack: Pack) -> Pack:
    model = pack.scorer.model  # type: ignore[union-attr]
    plain = model.model_copy(update={"none_logit": None})  # type: ignore[union-attr]
    return pack.model_copy(update={"scorer": pack.scorer.model_copy(update={"model": plain})})


def test_the_build_fits_the_column_and_writes_it_as_a_minor_12_field(pack: Pack) -> None:
    model = pack.scorer.model  # type: ignore[union-attr]
    assert model.none_logit is not None and model.none_logit > 0  # type: ignore[union-attr]
    written = json.loads(dump_pack(pack))
    assert written["format_minor"] == 12
    assert written["scorer"]["model"]["none_logit"] == model.none_logit  # type: ignore[union-attr]
    assert load_pack(dump_pack(pack)).scorer.model.none_logit == model.none_logit  # type: ignore[union-attr]


@pytest.mark.parametrize("message", OFF_TOPIC)
def test_an_off_topic_message_is_unmatched_that_moved_without_the_column(
    pack: Pack, message: str
) -> None:
    assert Router(_without_column(pack)).route(message).verdict == "move"
    assert Router(pack).route(message).verdict == "unmatched"


def test_requests_move_as_they_did_without_the_column(pack: Pack) -> None:
    rng = random.Random(99)
    cases = [
        (synthetic.message(rng, d, a), f"{d}_{a}")
        for _ in range(5)
        for d in DOMAINS
        for a in synthetic.ACTIONS
    ]

    def right(router: Router) -> int:
        return sum(
            (d.verdict, d.route) == ("move", want)
            for d, want in ((router.route(m), want) for m, want in cases)
        )

    with_column, without = right(Router(pack)), right(Router(_without_column(pack)))
    # At most two of the hundred requests become unmatched (the fit puts 2% of held-out ones
    # under the column's level); the floor of a pack of 15 examples a route refuses about one
    # request in ten with or without it (`_few.floor_refused`).
    assert without - 2 <= with_column <= without and with_column >= 0.8 * len(cases)


def test_scores_follow_the_specified_formula_and_keep_the_order(pack: Pack) -> None:
    """p_r = exp(z_r) / (sum_s exp(z_s) + exp(mean(z) + none_logit)), z = logit / T."""
    scorer = Router(pack).scorer
    assert isinstance(scorer, LexicalScorer)
    names = list(pack.route_names)
    model = pack.scorer.model  # type: ignore[union-attr]
    for message in [*OFF_TOPIC, "please book the flight next week", "fix my thermostat"]:
        logits = scorer.logits(message)
        assert logits is not None
        z = logits.astype(np.float64) / model.temperature  # type: ignore[union-attr]
        top = max(z.max(), z.mean() + model.none_logit)  # type: ignore[union-attr, operator]
        expected = np.exp(z - top) / (
            np.exp(z - top).sum() + math.exp(z.mean() + model.none_logit - top)  # type: ignore[union-attr, operator]
        )
        scores = np.asarray(scorer.score(message, names))
        assert np.allclose(scores, expected, rtol=0, atol=1e-6)
        assert scores.sum() < 1.0
        assert int(scores.argmax()) == int(z.argmax())


def test_a_turn_that_follows_a_conversation_has_no_column(pack: Pack) -> None:
    scorer = Router(pack).scorer
    assert isinstance(scorer, LexicalScorer)
    names = list(pack.route_names)
    following = scorer.score_following(OFF_TOPIC[0], names).array
    assert following is not None
    assert math.isclose(float(np.sum(following)), 1.0, abs_tol=1e-5)
    # ... while the same message's first turn leaves most of its mass to no route.
    assert sum(scorer.score(OFF_TOPIC[0], names)) < 0.6


def test_the_fit_is_a_low_quantile_of_the_best_routes_lead_over_the_mean() -> None:
    rng = np.random.default_rng(7)
    logits = rng.normal(size=(400, 5)).astype(np.float32)
    labels = rng.integers(0, 5, size=400)
    lead = logits.max(axis=1) - logits.mean(axis=1)
    expected = round(float(np.quantile(lead, _model.NONE_REFUSED)), 4)
    assert _model.fit_none_logit(logits, labels, 5) == expected
    # The held-out out-of-scope texts (label 5) are not requests: left out of the quantile.
    with_class = np.concatenate([logits, np.zeros((400, 1), np.float32)], axis=1)
    assert _model.fit_none_logit(with_class, labels, 5) is None  # an out-of-scope class: none
    assert _model.fit_none_logit(logits[:, :1], np.zeros(400, int), 1) is None  # one route


def test_a_pack_with_an_out_of_scope_class_has_no_column() -> None:
    pack = build_pack(_routes(5, 15), slug="home-travel")  # learns the built-in background
    model = pack.scorer.model  # type: ignore[union-attr]
    assert model.routes == len(pack.routes) + 1 and model.none_logit is None  # type: ignore[union-attr]


def test_the_floor_and_margin_are_fitted_on_the_scores_the_router_will_compute() -> None:
    """With the column, a request's best route scores a little less: the floor is fitted on
    those scores (a quantile of the held-out requests' best score, column included)."""
    from routing_core.scorers.calibration import FLOOR_CAP, FLOOR_REFUSED

    rng = np.random.default_rng(11)
    logits = rng.normal(scale=3.0, size=(300, 6)).astype(np.float32)
    labels = logits.argmax(axis=1)
    none_logit = _model.fit_none_logit(logits, labels, 6)
    assert none_logit is not None
    scored = _model.with_no_route(logits, 6, none_logit)
    assert scored.shape == (300, 7)
    z = logits.astype(np.float64)
    assert np.allclose(scored[:, 6], z.mean(axis=1) + none_logit, atol=1e-5)
    column = z.mean(axis=1) + none_logit
    best = np.exp(z.max(axis=1)) / (np.exp(z).sum(axis=1) + np.exp(column))
    expected = round(min(float(np.quantile(best, FLOOR_REFUSED)), FLOOR_CAP), 4)
    floor = _model.fit_floor(scored, labels, 6)
    assert floor == pytest.approx(expected, abs=2e-4)
    assert floor < _model.fit_floor(logits, labels, 6)  # type: ignore[operator]
    assert _model.with_no_route(logits, 6, None) is logits
