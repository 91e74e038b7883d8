"""The lexical scorer's learned model: calibration, storage in the pack, cheap explanations."""

from __future__ import annotations

import hashlib
import json
import math
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from routing_core import Pack, PackError, Router, dump_pack, load_pack
from routing_core.build import build_pack
from routing_core.pack import LexicalScorerSettings
from routing_core.scorers import _corpus, _model, calibration, route_texts
from routing_core.scorers.base import RouteText
from routing_core.scorers.lexical import LexicalScorer
from routing_core.scorers.stored import fingerprint, with_model
from tests.routing_core.conftest import TEMPLATES, TOPICS

# How the profile's own texts are learned, without the built-in background (conftest).
pytestmark = pytest.mark.usefixtures("without_background")


def _routes() -> list[dict[str, object]]:
    return [
        {"name": name, "examples": [t.format(w) for t in TEMPLATES for w in words]}
        for name, words in TOPICS.items()
    ]


# Two routes of five examples: too few texts to calibrate on.
FIVE = ["one example", "two example", "three example", "four example", "five example"]
TINY = [RouteText(n, "", tuple(f"{n} {x}" for x in FIVE)) for n in ("billing", "shipping")]


def _record_steps(monkeypatch: pytest.MonkeyPatch) -> list[tuple[object, ...]]:
    """The arguments of every training step `_model.train` takes from now on, in order."""
    calls: list[tuple[object, ...]] = []
    real_step = _model._step
    monkeypatch.setattr(_model, "_step", lambda *args: calls.append(args) or real_step(*args))
    return calls


@pytest.fixture(scope="module")
def pack_with_model() -> Pack:
    return with_model(build_pack(_routes(), slug="topics"))


def test_a_stored_model_round_trips_and_is_used_at_load(pack_with_model: Pack) -> None:
    again = load_pack(dump_pack(pack_with_model))
    assert again == pack_with_model
    assert isinstance(again.scorer, LexicalScorerSettings) and again.scorer.model is not None
    router = Router(again)
    assert router.scorer.info.details["model"] == "stored in the pack"
    assert router.route("my parcel has not arrived").route == "orders"


def test_stored_weights_score_like_freshly_learned_ones(pack_with_model: Pack) -> None:
    stored = Router(pack_with_model).scorer
    fresh = LexicalScorer.build(route_texts(pack_with_model))
    names = list(pack_with_model.route_names)
    for message in ("refund the charge on my card", "snow tomorrow?", "courier tracking"):
        a, b = stored.score(message, names), fresh.score(message, names)
        assert int(np.argmax(a)) == int(np.argmax(b))
        assert a == pytest.approx(b, abs=0.02)


def test_a_pack_without_a_model_learns_at_load() -> None:
    router = Router(
        load_pack({"profile": {"slug": "topics", "name": "Topics"}, "routes": _routes()})
    )
    assert router.scorer.info.details["model"] == "trained at load"
    assert router.route("the forecast says rain").route == "weather"


def test_a_model_learned_from_other_routes_is_not_used(pack_with_model: Pack) -> None:
    document = json.loads(dump_pack(pack_with_model))
    document["routes"][0]["examples"].append("my subscription renewal")
    del document["checksum"]
    router = Router(load_pack(document))
    assert router.scorer.info.details["model"] == "retrained: routes changed since build"


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("idf", "not base64!", "base64"),
        ("idf", "AAAAAA==", "values for"),
        ("weights", "", "values for"),
        ("temperature", 0.0, "greater than 0"),
        ("fingerprint", "md5:abc", "pattern"),
    ],
)
def test_a_damaged_model_is_refused_with_its_path(
    pack_with_model: Pack,
    field: str,
    value: object,
    reason: str,
) -> None:
    document = json.loads(dump_pack(pack_with_model))
    document["scorer"]["model"][field] = value
    del document["checksum"]
    with pytest.raises(PackError) as caught:
        load_pack(document)
    assert any(
        path.startswith("scorer") and reason in message for path, message in caught.value.errors
    )


def test_cells_outside_the_declared_shape_are_refused(pack_with_model: Pack) -> None:
    document = json.loads(dump_pack(pack_with_model))
    document["scorer"]["model"]["routes"] = 1
    del document["checksum"]
    with pytest.raises(PackError, match="inside terms x routes"):
        load_pack(document)


def test_the_fingerprint_follows_every_text_a_route_offers() -> None:
    base = RouteText("a", "desc", ("one", "two"), ("kw",))
    changed = [
        RouteText("b", "desc", ("one", "two"), ("kw",)),
        RouteText("a", "other", ("one", "two"), ("kw",)),
        RouteText("a", "desc", ("two", "one"), ("kw",)),
        RouteText("a", "desc", ("one", "two"), ()),
    ]
    assert len({fingerprint([r]) for r in [base, *changed]}) == 5
    assert fingerprint([base]) == fingerprint([RouteText("a", "desc", ("one", "two"), ("kw",))])


def test_learning_the_model_twice_gives_the_same_pack() -> None:
    first = dump_pack(with_model(build_pack(_routes(), slug="topics")))
    assert first == dump_pack(with_model(build_pack(_routes(), slug="topics")))


def test_the_temperature_is_fitted_when_there_are_enough_held_out_examples(
    pack_with_model: Pack,
) -> None:
    assert isinstance(pack_with_model.scorer, LexicalScorerSettings)
    model = pack_with_model.scorer.model
    assert model is not None
    # Templates: every held-out text is placed with certainty at T = 1 already, so the texts
    # ask for nothing the prior (T = 1) does not: the fit keeps it, and says it calibrated.
    assert model.calibrated and model.temperature == 1.0
    from tests.routing_core.test_semantic import _routes as meaning_routes

    # Held-out texts in words no other text uses: some are missed, and the fit moves T.
    missed = build_pack(meaning_routes(), slug="meaning").scorer.model  # type: ignore[union-attr]
    assert missed is not None and missed.calibrated
    assert 0.05 <= missed.temperature <= 20.0 and missed.temperature != 1.0
    tiny = LexicalScorer.build([RouteText("a", "", ("hello there",)), RouteText("b", "", ("bye",))])
    assert tiny.info.details["calibration_temperature"] == 1.0


GREETINGS = ["hi", "hello", "hey", "hi there", "hello there", "hey you", "how are you"]
# A greeting route and a billing route: too few texts to calibrate on.
SMALL_GREETING = [RouteText("greet", "", tuple(GREETINGS)), RouteText("billing", "", ("a refund",))]


def test_a_calibrated_pack_scores_and_explains_a_message_of_stop_words_only() -> None:
    topics = route_texts(build_pack(_routes(), slug="topics"))
    routes = [*topics, RouteText("greet", "", tuple(GREETINGS * 3))]
    scorer = LexicalScorer.build(routes)
    names = [route.name for route in routes]
    assert scorer.info.details["calibrated"] is True

    scores = scorer.score("hello", names)

    assert max(range(len(names)), key=scores.__getitem__) == names.index("greet")
    assert [t.term for t in scorer.explain("hello", "greet")] == ["hello"]
    # Beside a content word, a lone stop word is still not shown.
    assert "hello" not in [t.term for t in scorer.explain("hello my parcel", "orders")]


def test_a_pack_too_small_to_calibrate_leaves_a_message_of_stop_words_unscored() -> None:
    scorer = LexicalScorer.build(SMALL_GREETING)
    assert scorer.info.details["calibrated"] is False

    assert scorer.score("hello", ["greet", "billing"]) == [0.0, 0.0]
    assert scorer.score("hello refund", ["greet", "billing"]) != [0.0, 0.0]


def test_a_pack_calibrates_from_calibration_texts_on() -> None:
    def pack_of(n_texts: int) -> LexicalScorer:
        """Two routes of `n_texts` texts in all: each one's name, then its examples."""
        texts = [t.format(w) for t in TEMPLATES for words in TOPICS.values() for w in words]
        examples = n_texts - 2
        return LexicalScorer.build(
            [
                RouteText("a", "", tuple(texts[: examples // 2])),
                RouteText("b", "", tuple(texts[examples // 2 : examples])),
            ]
        )

    assert pack_of(_model.CALIBRATION_TEXTS).info.details["calibrated"] is True
    assert pack_of(_model.CALIBRATION_TEXTS - 1).info.details["calibrated"] is False


def test_an_unscored_message_is_told_apart_by_its_reason(pack_with_model: Pack) -> None:
    small = LexicalScorer.build(SMALL_GREETING)
    calibrated = Router(pack_with_model).scorer
    assert isinstance(calibrated, LexicalScorer)

    assert small.unscored_reason("a refund") is None
    assert small.unscored_reason(" !? ") == "the message has no words"
    assert "stop word" in str(small.unscored_reason("hello"))
    assert str(_model.CALIBRATION_TEXTS) in str(small.unscored_reason("hello"))
    assert "none of its words" in str(small.unscored_reason("zzqx"))
    assert calibrated.unscored_reason("what about the") is None
    assert "none of its words" in str(calibrated.unscored_reason("zzqx"))


def test_a_stored_model_keeps_whether_it_was_calibrated(pack_with_model: Pack) -> None:
    names = list(TOPICS)
    assert isinstance(pack_with_model.scorer, LexicalScorerSettings)
    assert pack_with_model.scorer.model is not None
    assert pack_with_model.scorer.model.calibrated is True
    router = Router(load_pack(dump_pack(pack_with_model)))
    # Scored (a share of it may go to no route: docs/pack-format.md, Lexical scorer, step 7).
    assert 0.0 < sum(router.scorer.score("what about the", names)) <= 1.0 + 1e-5
    # A pack written before the field existed (signed without it) still loads, and scores
    # as it did when it was published.
    document = json.loads(dump_pack(pack_with_model))
    del document["scorer"]["model"]["calibrated"], document["checksum"]
    for later in ("floor", "margin", "none_logit"):  # fields of a later minor than `calibrated`
        document["scorer"]["model"].pop(later, None)
    document.pop("format_minor", None)
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    document["checksum"] = "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    older = Router(load_pack(json.dumps(document)))
    assert older.scorer.info.details["model"] == "stored in the pack"
    assert older.scorer.score("what about the", names) == [0.0] * len(names)


def test_fit_temperature_recovers_the_temperature_that_made_the_labels() -> None:
    rng = np.random.default_rng(0)
    logits = rng.normal(0.0, 3.0, size=(4000, 5)).astype(np.float32)
    scaled = np.exp(logits / 2.5)
    probabilities = scaled / scaled.sum(axis=1, keepdims=True)
    labels = np.array([rng.choice(5, p=p) for p in probabilities])
    assert _model.fit_temperature(logits, labels) == pytest.approx(2.5, rel=0.1)
    assert _model.fit_temperature(logits[:0], labels[:0]) == 1.0


def test_held_out_texts_all_placed_right_keep_the_temperature_near_one() -> None:
    """20-40 held-out texts of a small profile of distinct routes, every one right by a wide
    margin, ask for T -> 0 (scores of 0 and 1, a floor that refuses nothing); the prior at 1,
    as if PRIOR_TEXTS more texts had asked for an uncalibrated pack's temperature, holds it."""
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 6, size=30)
    logits = rng.normal(0.0, 0.5, size=(30, 6)).astype(np.float32)
    logits[np.arange(30), labels] += 6.0
    free = calibration.fit_temperature(logits, labels, None, (0.05, 20.0))  # likelihood alone
    assert free == pytest.approx(0.05, abs=0.01)  # ... runs to the bound of the search
    assert 0.5 <= _model.fit_temperature(logits, labels) <= 1.0


def test_explain_after_score_describes_the_message_it_is_given() -> None:
    scorer = LexicalScorer.build(route_texts(build_pack(_routes(), slug="topics")))
    names = list(TOPICS)
    scorer.score("refund my card payment", names)
    terms = [t.term for t in scorer.explain("where is my parcel", "orders")]
    assert "parcel" in terms and "refund" not in terms


def test_the_explain_cache_is_per_thread() -> None:
    scorer = LexicalScorer.build(route_texts(build_pack(_routes(), slug="topics")))
    names = list(TOPICS)
    explained: list[list[str]] = []

    def other_thread() -> None:
        scorer.score("snow and wind", names)
        explained.append([t.term for t in scorer.explain("snow and wind", "weather")])

    scorer.score("refund my card payment", names)
    worker = threading.Thread(target=other_thread)
    worker.start()
    worker.join()
    mine = scorer.explain("refund my card payment", "billing")
    assert "refund" in [t.term for t in mine] and all(math.isfinite(t.weight) for t in mine)
    assert "snow" in explained[0] and "refund" not in explained[0]


def test_a_pack_that_learns_at_load_scores_exactly_like_one_that_carries_its_model():
    from routing_core import Router, load_pack
    from routing_core.scorers.stored import with_model
    from tests.routing_core.conftest import PACKS

    plain = load_pack(PACKS / "support.json")
    carried = load_pack(dump_pack(with_model(plain)))
    assert plain.scorer.model is None and carried.scorer.model is not None
    a, b = Router(plain), Router(carried)
    assert a.scorer.info.details["model"] == "trained at load"
    assert b.scorer.info.details["model"] == "stored in the pack"
    for message in ["where is my parcel", "refund please", "hello", "my card was charged twice"]:
        assert a.route(message).to_event()["ranked"] == b.route(message).to_event()["ranked"]
        assert list(a.scorer.score(message, plain.route_names)) == list(
            b.scorer.score(message, plain.route_names)
        )


def test_a_process_learns_a_routes_model_once_whatever_else_changes():
    from routing_core import load_pack
    from routing_core.scorers import route_texts
    from routing_core.scorers.lexical import learned_model
    from routing_core.scorers.stored import fingerprint
    from tests.routing_core.conftest import PACKS

    pack = load_pack(PACKS / "support.json")
    tuned = pack.model_copy(update={"policy": pack.policy.model_copy(update={"floor": 0.3})})
    first = learned_model(route_texts(pack), fingerprint(route_texts(pack)))
    again = learned_model(route_texts(tuned), fingerprint(route_texts(tuned)))
    assert again is first


def test_routing_core_build_stores_the_learned_model() -> None:
    router = Router(build_pack(_routes(), slug="topics"))
    assert router.scorer.info.details["model"] == "stored in the pack"


def test_char_size_tells_character_n_grams_from_words() -> None:
    from routing_core.scorers import _terms

    assert _terms.char_size("#<re") == 3
    assert _terms.char_size("#efund") == 5
    assert _terms.char_size("refund") == 0
    assert _terms.char_size("^ refund") == 0


def test_the_correction_learns_character_3_grams_only_from_a_pack_it_can_calibrate() -> None:
    from routing_core.scorers import _terms
    from routing_core.scorers.lexical import _build_corpus

    big = [RouteText(r["name"], "", tuple(r["examples"])) for r in _routes()]
    vocabulary, corpus = _build_corpus(big)
    held = (np.arange(corpus.n_docs) % _model.HOLD_OUT) == _model.HOLD_OUT - 1
    assert held.sum() >= _model.MIN_CALIBRATION
    learner = _model._Correction(corpus, len(big), chars=True)
    rates = learner.rates[:, 0]
    sizes = np.array([_terms.char_size(t) for t in vocabulary.ids])
    assert np.all(rates[sizes == 0] == _model.LEARNING_RATE)
    assert np.all(rates[sizes == 3] == _model.LEARNING_RATE * _model.CHAR_RATE)
    assert np.all(rates[sizes > 3] == 0.0)
    assert np.all(_model._Correction(corpus, len(big), chars=False).rates[sizes > 0] == 0.0)
    # Two routes of five examples: too few to calibrate, so no 3-gram learns a spelling
    # accident and a message of unknown words stays a tie.
    scores = LexicalScorer.build(TINY).score("completely unrelated words", ["billing", "shipping"])
    assert scores == pytest.approx([0.5, 0.5], abs=0.01)


def test_a_small_pack_trains_for_a_minimum_number_of_steps() -> None:
    """A few examples per route make a handful of batches: four passes would barely train."""
    per_pass = math.ceil(1500 / _model.BATCH)  # 150 routes x 10 examples
    assert _model.held_epochs(1500) == math.ceil(_model.MIN_HELD_STEPS / per_pass)
    assert _model.held_epochs(1) == _model.MIN_HELD_STEPS
    big = _model.BATCH * _model.MIN_HELD_STEPS  # already enough steps in HELD_EPOCHS passes
    assert _model.held_epochs(big) == _model.HELD_EPOCHS


def test_training_a_small_pack_takes_at_least_the_minimum_steps(monkeypatch) -> None:
    from routing_core.scorers.lexical import _build_corpus

    steps = _record_steps(monkeypatch)
    routes = [RouteText(r["name"], "", tuple(r["examples"])) for r in _routes()]
    _, corpus = _build_corpus(routes)
    _model.train(corpus, len(routes))
    assert corpus.n_docs < _model.BATCH  # one batch a pass
    assert len(steps) >= _model.MIN_HELD_STEPS + _model.FINAL_EPOCHS


def test_a_pack_too_small_to_calibrate_keeps_the_short_schedule(monkeypatch) -> None:
    """Without a fitted temperature, long training on five texts would only add overconfidence."""
    from routing_core.scorers.lexical import _build_corpus

    steps = _record_steps(monkeypatch)
    _, corpus = _build_corpus(TINY)
    _model.train(corpus, len(TINY))
    assert len(steps) == _model.HELD_EPOCHS + _model.FINAL_EPOCHS


def test_a_step_keeps_pushing_a_text_its_route_leads_by_less_than_the_margin() -> None:
    """The loss is softmax with an additive margin: a lead of 0.5 still counts as half a miss.

    One text, one term, two routes; the text's own route already leads by 0.5. Plain softmax
    would move the term's weight by rate x (1 - sigmoid(0.5)); the margin loss moves it by
    rate x (1 - sigmoid(0.5 - MARGIN)), which is more while the lead is under the margin.
    """
    corpus = _model.Corpus(
        rows=np.array([0]),
        ids=np.array([0]),
        values=np.array([1.0], np.float32),
        routes=np.array([0]),
        n_terms=1,
        char_sizes=np.array([0]),
    )
    (batch,) = _corpus.make_batches(corpus)
    base = np.array([[0.5, 0.0]], np.float32)
    weights = np.zeros((1, 2), np.float32)
    rates = np.full((1, 1), 3.0, np.float32)
    velocity = np.zeros_like(weights)
    _model._step(batch, corpus.routes, base, weights, velocity, rates, _model.MARGIN)
    own_share = 1.0 / (1.0 + math.exp(-(0.5 - _model.MARGIN)))
    assert _model.MARGIN > 0.5
    assert weights[0, 0] == pytest.approx(3.0 * (1.0 - own_share), rel=1e-5)
    assert weights[0, 1] == pytest.approx(-3.0 * (1.0 - own_share), rel=1e-5)


def test_only_a_pack_that_calibrates_learns_with_the_margin(monkeypatch) -> None:
    """Without a fitted temperature nothing would temper the confidence a margin adds."""
    from routing_core.scorers.lexical import _build_corpus

    steps = _record_steps(monkeypatch)
    big = [RouteText(r["name"], "", tuple(r["examples"])) for r in _routes()]
    _model.train(_build_corpus(big)[1], len(big))
    assert {args[-1] for args in steps} == {_model.MARGIN}
    steps.clear()
    _model.train(_build_corpus(TINY)[1], len(TINY))
    assert {args[-1] for args in steps} == {0.0}


def test_the_last_passes_of_a_small_pack_take_the_minimum_final_steps(monkeypatch) -> None:
    """With few examples per route the held-out texts are learned only at the end: a single
    pass of one batch would barely learn them (`_few.MIN_FINAL_STEPS`)."""
    from routing_core.scorers import _few
    from routing_core.scorers.lexical import _build_corpus

    steps = _record_steps(monkeypatch)
    routes = [RouteText(r["name"], "", tuple(r["examples"])) for r in _routes()]
    _, corpus = _build_corpus(routes)
    _model.train(corpus, len(routes))
    every_text = [s for s in steps if len(s[0].docs) == corpus.n_docs]  # type: ignore[attr-defined]
    assert len(every_text) == _few.MIN_FINAL_STEPS  # one batch a pass
    assert _few.final_epochs(_model.BATCH * _few.MIN_FINAL_STEPS, _model.BATCH, 1) == 1


@pytest.mark.parametrize(
    ("n_routes", "per_route", "learns_4_grams"), [(30, 12, True), (12, 40, False)]
)
def test_only_a_pack_with_few_examples_per_route_learns_the_character_4_grams(
    monkeypatch: pytest.MonkeyPatch, n_routes: int, per_route: int, learns_4_grams: bool
) -> None:
    """Its 4-grams' weights move when the correction may learn them; a large pack's do not.

    Both packs are big enough to calibrate (the correction learns n-grams only then).
    """
    from routing_core.scorers import _few
    from routing_core.scorers.lexical import _build_corpus
    from tests.routing_core.test_incremental_model import generated_routes

    generated = generated_routes(n_routes, per_route)
    routes = [RouteText(str(r["name"]), "", tuple(r["examples"])) for r in generated]  # type: ignore[arg-type]
    _, corpus = _build_corpus(routes)
    four = corpus.char_sizes == 4
    with_4_grams = _model.train(corpus, len(routes)).weights[four]
    monkeypatch.setattr(_few, "FEW_CHAR_SIZES", (3,))
    without = _model.train(corpus, len(routes)).weights[four]
    assert bool(np.abs(with_4_grams - without).max() > 0.01) is learns_4_grams


def _generated_corpus(n_routes: int, per_route: int):  # noqa: ANN202 - a private pair
    from routing_core.scorers.lexical import _build_corpus
    from tests.routing_core.test_incremental_model import generated_routes

    generated = generated_routes(n_routes, per_route)
    routes = [RouteText(str(r["name"]), "", tuple(r["examples"])) for r in generated]  # type: ignore[arg-type]
    return routes, _build_corpus(routes)[1]


def test_a_pack_too_small_to_calibrate_fits_its_floor_and_margin_by_cross_validation() -> None:
    """156 texts (144 examples and 12 names) hold out too few to calibrate; five
    out-of-fold scorings still fit both, and the temperature they are taken at: this pack's
    folds route better learning fully, so it does, and its temperature tempers."""
    routes, corpus = _generated_corpus(12, 12)
    model = _model.train(corpus, len(routes))
    assert not model.calibrated and model.bias is not None  # it learned fully
    assert 1.0 < model.temperature <= 20
    assert model.floor is not None and 0.0 < model.floor <= calibration.FLOOR_CAP
    assert model.margin is not None and 0.0 <= model.margin <= calibration.MARGIN_CAP
    without = _model.train(corpus, len(routes), cross_validate=False, learns_fully=True)
    assert without.floor is None and without.margin is None
    np.testing.assert_array_equal(model.weights, without.weights)  # the pack learns the same
    assert without.bias is not None and model.bias is not None
    np.testing.assert_array_equal(model.bias, without.bias)


def test_a_pack_whose_folds_route_worse_learning_fully_keeps_the_short_schedule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The choice made on its folds is the whole model: the short schedule's weights, no
    second model, temperature 1 (docs/decisions.md, "Packs of 100-199 texts")."""
    routes, corpus = _generated_corpus(12, 12)
    monkeypatch.setattr(_model, "learns_fully_on_folds", lambda *args: False)
    model = _model.train(corpus, len(routes))
    short = _model.train(corpus, len(routes), cross_validate=False, learns_fully=False)
    assert not model.calibrated and model.bias is None and model.temperature == 1.0
    assert model.floor is not None and model.margin is not None
    np.testing.assert_array_equal(model.weights, short.weights)


def _fold_case(
    n_routes: int, out_of_scope: bool, draw: st.DrawFn
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    n_texts = draw(st.integers(1, 40))
    labels = np.array(
        draw(st.lists(st.integers(0, n_routes - 1), min_size=n_texts, max_size=n_texts))
    )
    logits = st.lists(
        st.floats(-30, 30, allow_nan=False, width=32), min_size=n_routes, max_size=n_routes
    )
    full = np.array(draw(st.lists(logits, min_size=n_texts, max_size=n_texts)), np.float32)
    short = np.array(draw(st.lists(logits, min_size=n_texts, max_size=n_texts)), np.float32)
    return full, short, labels, n_routes - out_of_scope


@st.composite
def _folds(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    return _fold_case(draw(st.integers(2, 6)), draw(st.booleans()), draw)


@settings(max_examples=200, deadline=None)
@given(case=_folds())
def test_a_pack_learns_fully_unless_its_folds_route_its_requests_worse(
    case: tuple[np.ndarray, np.ndarray, np.ndarray, int],
) -> None:
    """Counted on the routes' texts only: the out-of-scope class's texts, whatever either
    schedule does with them, do not choose (the demo's were most of what learning fully
    placed better, while it routed the demo's requests worse)."""
    full, short, labels, n_scored = case
    routed = labels < n_scored
    full_right = (full.argmax(axis=1) == labels) & routed
    short_right = (short.argmax(axis=1) == labels) & routed
    expected = (full_right & ~short_right).sum() >= (short_right & ~full_right).sum()
    assert _model.learns_fully_on_folds(full, short, labels, n_scored) == expected
    assert _model.learns_fully_on_folds(short, short, labels, n_scored)  # a tie learns fully
    shuffled = full.copy()
    shuffled[~routed] = shuffled[~routed, ::-1]  # the class's texts placed otherwise
    assert _model.learns_fully_on_folds(shuffled, short, labels, n_scored) == expected


@settings(max_examples=200, deadline=None)
@given(case=_folds())
def test_the_cross_validated_temperature_tempers_and_never_sharpens(
    case: tuple[np.ndarray, np.ndarray, np.ndarray, int],
) -> None:
    """Fitted on out-of-fold texts the folds place right, a temperature under 1 would make a
    message like none of them surer than the uncalibrated scale (docs/decisions.md, "Packs
    of 100-199 texts")."""
    full, _, labels, _ = case
    temperature = _model.tempering_temperature(full, labels)
    assert temperature >= 1.0
    assert temperature == max(1.0, _model.fit_temperature(full, labels))


def test_the_cross_validated_floor_is_the_packs_scorer_floor() -> None:
    routes, _ = _generated_corpus(12, 12)
    scorer = LexicalScorer.build(routes)
    assert scorer.info.details["fitted_floor"] is not None
    assert scorer.info.floor == scorer.info.details["fitted_floor"]


def test_a_pack_of_the_cross_validation_size_learns_as_a_calibrated_one(monkeypatch) -> None:
    """The character 3- and 4-grams, for the step budget, with the second model: five passes
    over one batch left such a pack's correction barely trained (docs/decisions.md,
    "Packs of 100-199 texts")."""
    from routing_core.scorers import _few

    routes, corpus = _generated_corpus(12, 12)
    assert _few.CV_TEXTS <= corpus.n_docs < _model.CALIBRATION_TEXTS
    steps = _record_steps(monkeypatch)
    model = _model.train(corpus, len(routes), cross_validate=False, learns_fully=True)
    assert not model.calibrated and model.bias is not None and model.bias.any()
    assert len(steps) == _model.MIN_HELD_STEPS + _few.MIN_FINAL_STEPS
    learned = {int(i) for batch_terms in (step[0].terms for step in steps) for i in batch_terms}
    sizes = corpus.char_sizes[sorted(learned)]
    assert {0, 3, 4} <= set(sizes.tolist()) and 5 not in sizes


def test_a_pack_under_the_cross_validation_size_keeps_the_short_schedule(monkeypatch) -> None:
    from routing_core.scorers import _few

    routes, corpus = _generated_corpus(4, (_few.CV_TEXTS - 1) // 4 - 1)  # and 4 names
    steps = _record_steps(monkeypatch)
    model = _model.train(corpus, len(routes))
    assert len(steps) == _model.HELD_EPOCHS + _model.FINAL_EPOCHS
    assert model.bias is None and model.temperature == 1.0


def test_a_pack_under_the_cross_validation_size_fits_no_floor() -> None:
    from routing_core.scorers import _few

    routes, corpus = _generated_corpus(4, (_few.CV_TEXTS - 1) // 4 - 1)  # and 4 names
    assert corpus.n_docs < _few.CV_TEXTS
    model = _model.train(corpus, len(routes))
    assert model.floor is None and model.margin is None


def test_near_copies_learned_in_one_schedule_block_take_the_first_ones_fitted_thresholds(
    fold_schedules: list[bool],
) -> None:
    """The overlap checkup and "Find a fix" learn many near-copies of one pack: within
    `one_schedule` only the first fits its schedule and thresholds on fold models, and the
    others learn on that schedule at its temperature, floor and margin."""
    from routing_core.scorers import _few
    from routing_core.scorers._corpus import select

    routes, corpus = _generated_corpus(12, 12)
    assert _few.CV_TEXTS <= corpus.n_docs - 1 < _model.CALIBRATION_TEXTS
    copy = select(corpus, np.arange(corpus.n_docs) != 3)  # the pack without one text
    alone = _model.train(copy, len(routes))
    assert fold_schedules == [True, False]  # learned alone, the copy fits its own
    fold_schedules.clear()
    with _model.one_schedule():
        first = _model.train(corpus, len(routes))
        second = _model.train(copy, len(routes))
    assert fold_schedules == [True, False]  # the first pack's fold models only
    assert (second.temperature, second.floor, second.margin) == (
        first.temperature,
        first.floor,
        first.margin,
    )
    assert (alone.floor, alone.margin) != (first.floor, first.margin)
