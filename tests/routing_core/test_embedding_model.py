"""The embedding tier with the real packaged model (all-MiniLM-L6-v2 from PyPI, offline).

Marked `embeddings`: `make test-embeddings` runs them in `.venv-embed` (Python 3.11 with
the CPU build of torch) with REQUIRE_EMBEDDINGS=1, where a model that does not load is a
failure. Elsewhere the Makefile deselects them; run by hand without the extra they skip.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from routing_core import Router
from routing_core.pack import PROBABILITY_THRESHOLDS_MINOR
from routing_core.scorers.calibration import softmax_rows
from routing_core.scorers.embedding import MissingExtra, load_encoder
from tests.routing_core.conftest import TEMPLATES, TOPICS

pytestmark = pytest.mark.embeddings

ROUTES = [
    {
        "name": "weather",
        "description": "the weather forecast",
        "examples": ["will it rain tomorrow"],
    },
    {
        "name": "billing",
        "description": "charges and invoices",
        "examples": ["why was I charged twice"],
    },
    {"name": "music", "description": "play songs", "examples": ["put on some jazz"]},
]


@pytest.fixture(scope="module")
def encoder():
    try:
        return load_encoder("all-minilm-l6-v2")
    except MissingExtra as exc:
        if os.environ.get("REQUIRE_EMBEDDINGS") == "1":
            pytest.fail(f"REQUIRE_EMBEDDINGS=1 but the model did not load: {exc}")
        pytest.skip(f"the embeddings extra is not installed ({exc}); run make test-embeddings")


def pack(scorer):
    # Written now: a declared embedding threshold is a probability (format minor 2).
    return {
        "profile": {"slug": "t", "name": "T"},
        "routes": ROUTES,
        "scorer": scorer,
        "format_minor": PROBABILITY_THRESHOLDS_MINOR,
    }


def test_the_packaged_model_encodes_normalised_float32_rows_offline(encoder):
    rows = encoder.encode(["hello world", "where is my parcel"])
    assert rows.shape == (2, 384) and rows.dtype == np.float32
    assert np.linalg.norm(rows, axis=1) == pytest.approx([1.0, 1.0], abs=1e-5)
    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_the_encoder_is_loaded_once_per_process(encoder):
    assert load_encoder("all-minilm-l6-v2") is encoder


def test_the_embedding_scorer_routes_a_paraphrase_that_shares_no_word(encoder):
    d = Router(pack({"kind": "embedding", "near_tie_margin": 0.02})).route(
        "is a storm coming this weekend?"
    )
    assert (d.route, d.by, d.scorer.name) == ("weather", "scorer", "embedding")
    assert d.evidence is not None and d.evidence.terms[0].term in (
        "the weather forecast",
        "will it rain tomorrow",
    )


def test_the_hybrid_scorer_loads_from_a_pack_and_routes(encoder):
    d = Router(pack({"kind": "hybrid", "embedding_weight": 0.5})).route("play me a song")
    assert (d.route, d.scorer.name) == ("music", "hybrid")


def test_a_hybrid_pack_that_asks_for_the_fit_gets_it_and_one_that_does_not_keeps_its_weight(
    encoder,
):
    """`fit_weight` reaches the scorer: a pack with enough examples to hold some out fits
    the embedding's share; the same pack without it routes with the declared 0.3."""
    routes = [
        {"name": name, "examples": [t.format(w) for t in TEMPLATES for w in words]}
        for name, words in TOPICS.items()
    ]

    def details(scorer):
        return Router({**pack(scorer), "routes": routes, "format_minor": 4}).scorer.info.details

    fitted = details({"kind": "hybrid", "embedding_weight": 0.3, "fit_weight": True})
    assert fitted["weight_fitted"] is True and fitted["embedding_weight"] != 0.3
    plain = details({"kind": "hybrid", "embedding_weight": 0.3})
    assert (plain["weight_fitted"], plain["embedding_weight"]) == (False, 0.3)


@pytest.mark.parametrize("kind", ["embedding", "hybrid"])
def test_a_pack_that_asks_for_the_head_learns_it_and_one_that_does_not_scores_by_cosines(
    encoder, kind
):
    """`head` reaches the embedding half, alone or in the hybrid: with enough examples to
    hold some out, it is learned and weighed; without the field the cosines alone score."""
    routes = [
        {"name": name, "examples": [t.format(w) for t in TEMPLATES for w in words]}
        for name, words in TOPICS.items()
    ]

    def embedding_details(scorer):
        router = Router({**pack(scorer), "routes": routes, "format_minor": 5})
        found = router.scorer
        half = found if kind == "embedding" else found._embedding
        return half.info.details, router.route("is a storm coming this weekend?").route

    (headed, route), (plain, _) = (
        embedding_details({"kind": kind, "head": True}),
        embedding_details({"kind": kind}),
    )
    assert headed["head"] is True and len(headed["head_weights"]) == 2
    assert min(headed["head_weights"]) > 0 and route is not None
    assert plain["head"] is False and "head_weights" not in plain


def test_the_cascade_sends_what_lexical_cannot_decide_to_the_embedding_tier(encoder):
    scorer = {
        "kind": "cascade",
        "tiers": [{"kind": "lexical"}, {"kind": "embedding", "near_tie_margin": 0.02}],
    }
    router = Router(pack(scorer))
    easy = router.route("why was I charged twice")
    hard = router.route("is a storm coming this weekend?")
    assert [(t.name, t.decided) for t in easy.tiers] == [("lexical", True)]
    assert [(t.name, t.decided) for t in hard.tiers] == [("lexical", False), ("embedding", True)]
    assert hard.route == "weather"


# Enough templated examples to hold 22 out and calibrate (tests/routing_core/conftest.py).
TOPIC_ROUTES = [
    {"name": name, "examples": [t.format(w) for t in TEMPLATES for w in words]}
    for name, words in TOPICS.items()
]
# The same, with billing split into two routes whose words a sentence encoder confuses.
CLOSE_ROUTES = [
    {"name": "payments", "examples": [t.format(w) for t in TEMPLATES for w in TOPICS["billing"][:4]]},
    {"name": "refunds", "examples": [t.format(w) for t in TEMPLATES for w in TOPICS["billing"][4:]]},
    *TOPIC_ROUTES[1:],
]  # fmt: skip
OUT_OF_SCOPE = [
    f"{opening} {topic}"
    for opening in ("tell me a joke about", "what is the capital of", "sing a song about")
    for topic in ("france", "cats", "the moon", "football", "pirates", "music", "dogs")
]


def topics(scorer, routes=TOPIC_ROUTES, **extra):
    return {
        "profile": {"slug": "t", "name": "T"},
        "routes": routes,
        "scorer": scorer,
        "format_minor": PROBABILITY_THRESHOLDS_MINOR,
        **extra,
    }


def test_the_fitted_temperature_turns_a_cosine_near_tie_into_a_decision_and_relevance(encoder):
    router = Router(topics({"kind": "embedding"}))
    scorer = router.cascade.tiers[0].scorer
    assert scorer.calibration.calibrated and scorer.held_out is not None
    message = "will I need an umbrella later"
    cosines = scorer.cosines(message)
    ordered = np.sort(cosines)
    # Raw cosines (the old scores): a near-tie under the margin 0.15, i.e. a menu.
    assert np.tanh((ordered[-1] - ordered[-2]) / 2) < 0.15
    fitted = scorer.calibration.temperature
    expected = softmax_rows(cosines[None, :], fitted)[0]
    assert scorer.score(message, list(scorer.names)) == pytest.approx(expected, abs=1e-6)
    d = router.route(message)
    assert (d.verdict, d.route) == ("move", "weather")
    assert d.ranked[0].relevance > 0.9
    # Two routes the encoder confuses share the relevance instead.
    close = Router(topics({"kind": "embedding"}, CLOSE_ROUTES)).route(
        "i want my money back for this fee"
    )
    assert {r.route for r in close.ranked[:2]} == {"payments", "refunds"}
    assert close.ranked[0].relevance < 0.9 and close.ranked[1].relevance > 0.1


def test_the_fitted_floor_refuses_an_out_of_scope_message_the_old_default_accepted(encoder):
    fitted = Router(topics({"kind": "embedding"}))
    message = "what is the capital of france"
    assert fitted.cascade.tiers[0].scorer.info.floor is not None
    assert fitted.route(message).verdict == "unmatched"
    assert fitted.route("where is my parcel").route == "orders"
    # The old default: no floor, so every route is alive and the top one wins or ties.
    no_floor = Router(topics({"kind": "embedding", "floor": -1.0}))
    assert no_floor.route(message).verdict in ("move", "menu")


def test_the_hybrid_learns_the_out_of_scope_examples(encoder):
    scorer = {"kind": "hybrid", "floor": 0.0}  # floor 0: only the examples can refuse it
    plain = Router(topics(scorer))
    learned = Router(topics(scorer, out_of_scope=OUT_OF_SCOPE))
    assert learned.cascade.tiers[0].scorer.info.details["out_of_scope_examples"] is True
    for message in ("what is the capital of spain", "sing a song about horses"):
        assert plain.route(message).verdict != "unmatched"
        refused = learned.route(message)
        assert refused.verdict == "unmatched"
        assert max(r.score for r in refused.ranked) == 0.0
    assert learned.route("where is my parcel").route == "orders"


def test_a_declared_embedding_floor_in_a_pack_written_now_is_a_probability(encoder):
    # Between the message's top cosine and its top probability: read as a cosine (the old
    # meaning) it would refuse the message; read as the probability it is, it keeps it.
    scorer = Router(topics({"kind": "embedding"})).cascade.tiers[0].scorer
    message = "will I need an umbrella later"
    cosine = float(np.max(scorer.cosines(message)))
    probability = float(np.max(scorer.probabilities(message)))
    assert cosine < probability
    floor = round((cosine + probability) / 2, 4)
    declared = Router(topics({"kind": "embedding", "floor": floor}))
    assert declared.cascade.tiers[0].floor == floor
    decision = declared.route(message)
    assert decision.verdict != "unmatched" and decision.route == "weather"
    above = Router(topics({"kind": "embedding", "floor": round(probability + 0.001, 4)}))
    assert above.route(message).verdict == "unmatched"
