"""The second model folded into the lexical one (`scorers/_hinge.py`) and its stored intercepts."""

from __future__ import annotations

import json

import numpy as np
import pytest

from routing_core import Pack, Router, dump_pack, load_pack
from routing_core._stored_arrays import pack_array
from routing_core.build import build_pack
from routing_core.pack import LexicalModel, LexicalScorerSettings
from routing_core.scorers import _encoding, _hinge, _model, lexical, stored
from routing_core.scorers.stored import with_stale_model
from tests.routing_core.test_out_of_scope import ROUTES


@pytest.fixture(scope="module")
def built() -> Pack:
    return build_pack(ROUTES, slug="topics")


def _model_of(pack: Pack) -> LexicalModel:
    assert isinstance(pack.scorer, LexicalScorerSettings) and pack.scorer.model is not None
    return pack.scorer.model


def _with_model(pack: Pack, **update: object) -> Pack:
    model = _model_of(pack).model_copy(update=update)
    return pack.model_copy(update={"scorer": LexicalScorerSettings(model=model)})


def _bias(values: list[float]) -> str:
    return pack_array(np.asarray(values, "<f2"))


def test_a_calibrated_pack_stores_one_intercept_per_route_and_round_trips(built: Pack) -> None:
    model = _model_of(built)
    bias = _encoding.decode_bias(model)
    assert model.calibrated and bias is not None and len(bias) == model.routes
    assert bias.any()
    # Without the later fitted_on (minor 7) and none_logit (12), the intercepts need minor 3.
    document = json.loads(dump_pack(_with_model(built, fitted_on=None, none_logit=None)))
    assert document["format_minor"] == 3 and document["scorer"]["model"]["bias"] == model.bias
    assert load_pack(dump_pack(built)) == built


def test_scoring_adds_each_route_s_intercept_to_its_logit(built: Pack) -> None:
    with_bias = Router(built).scorer
    without = Router(_with_model(built, bias=None)).scorer
    assert isinstance(with_bias, lexical.LexicalScorer)
    assert isinstance(without, lexical.LexicalScorer)
    first, second = with_bias.logits("my parcel is late"), without.logits("my parcel is late")
    assert first is not None and second is not None
    assert np.allclose(first - second, _encoding.decode_bias(_model_of(built)), atol=1e-6)


def test_an_intercept_changes_the_decision_it_should(built: Pack) -> None:
    names = [route.name for route in built.routes]
    message = "the storm bill parcel"  # orders' words first, weather's second
    plain = Router(_with_model(built, bias=None))
    assert plain.route(message).ranked[0].route == "orders"
    logits = plain.scorer.logits(message)  # type: ignore[attr-defined]
    gap = float(logits[names.index("orders")] - logits[names.index("weather")])

    def routed_with(weather: float) -> str | None:
        """The top-ranked route (a gap this small would offer a menu of the two)."""
        bias = [weather if name == "weather" else 0.0 for name in names]
        return Router(_with_model(built, bias=_bias(bias))).route(message).ranked[0].route

    assert routed_with(gap - 0.05) == "orders"
    assert routed_with(gap + 0.05) == "weather"


def test_a_pack_stored_without_intercepts_loads_and_scores_as_before(built: Pack) -> None:
    older = _with_model(built, bias=None, fitted_on=None, none_logit=None)
    document = json.loads(dump_pack(older))
    assert "bias" not in document["scorer"]["model"]
    assert document.get("format_minor", 0) <= 1  # what readers before this field read
    router = Router(load_pack(dump_pack(older)))
    assert router.scorer.info.details["model"] == "stored in the pack"
    assert router.route("my parcel has not arrived").route == "orders"


def test_a_bias_of_the_wrong_length_is_refused(built: Pack) -> None:
    document = json.loads(dump_pack(built))
    document["scorer"]["model"]["bias"] = _bias([0.0])
    document.pop("checksum", None)
    with pytest.raises(ValueError, match=r"model.bias has 1 values for 3 routes"):
        load_pack(document)


def test_a_pack_under_the_cross_validation_size_learns_no_second_model() -> None:
    small = build_pack([{**route, "examples": route["examples"][:8]} for route in ROUTES])
    model = _model_of(small)
    assert not model.calibrated and model.bias is None


def test_the_second_model_alone_ranks_its_own_texts_first() -> None:
    routes = [
        lexical.RouteText(route["name"], "", tuple(route["examples"]))  # type: ignore[arg-type]
        for route in ROUTES
    ]
    _, corpus = lexical._build_corpus(routes)
    hinge = _hinge.Hinge(corpus, len(routes))
    everything = np.ones(corpus.n_docs, bool)
    hinge.fit(everything, 200, _model.SEED)
    ranked = hinge.logits(everything).argmax(axis=1)
    assert (ranked == corpus.routes).mean() > 0.95
    # Only the 3-grams carry weights: the words are the correction's.
    assert set(corpus.char_sizes[hinge.terms].tolist()) == set(_hinge.SIZES)


def test_learning_with_the_second_model_is_deterministic() -> None:
    lexical._LEARNED.clear()
    first = _model_of(build_pack(ROUTES, slug="topics"))
    lexical._LEARNED.clear()
    assert _model_of(build_pack(ROUTES, slug="topics")) == first


def test_a_stale_model_carries_each_route_s_intercept_by_name(built: Pack) -> None:
    names = [route.name for route in built.routes]
    marked = _with_model(built, bias=_bias([1.0, 2.0, 3.0]))
    reordered = [route.model_dump() for route in reversed(built.routes)]
    added = {"name": "brand_new", "examples": ["please water my houseplants"]}
    draft = load_pack({"profile": built.profile.model_dump(), "routes": [*reordered, added]})
    carried = _encoding.decode_bias(_model_of(with_stale_model(draft, marked)))
    assert carried is not None
    by_name = dict(zip([*reversed(names), "brand_new"], carried.tolist(), strict=True))
    assert by_name == {names[0]: 1.0, names[1]: 2.0, names[2]: 3.0, "brand_new": 2.0}


def test_intercepts_move_to_new_route_indices_and_an_unknown_route_gets_the_median(
    built: Pack,
) -> None:
    """The one mapping both the stale carry and the warm start use (`_encoding.moved_bias`)."""
    model = _model_of(_with_model(built, bias=_bias([1.0, 2.0, 4.0])))
    moved = _encoding.moved_bias(model, np.asarray([2, -1, 0, 1], np.int64))
    assert moved is not None and moved.tolist() == [4.0, 2.0, 1.0, 2.0]
    assert (
        _encoding.moved_bias(model.model_copy(update={"bias": None}), np.zeros(3, np.int64)) is None
    )


def test_a_warm_start_keeps_each_route_s_intercept(built: Pack) -> None:
    routes = [route.model_dump() for route in built.routes]
    routes[0]["examples"] = [*routes[0]["examples"], "where is my parcel this week"]
    draft = load_pack({"profile": built.profile.model_dump(), "routes": routes})
    lexical._LEARNED.clear()
    warm = _model_of(stored.with_model(draft, previous=built))
    assert warm.fingerprint != _model_of(built).fingerprint
    assert warm.bias == _model_of(built).bias
