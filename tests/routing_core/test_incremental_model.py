"""Learning after an edit: progress, cancelling, warm starts and a stale model for the playground."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from routing_core import Pack, Router, dump_pack, load_pack
from routing_core.pack import LexicalModel, LexicalScorerSettings
from routing_core.scorers import _encoding, _model, _sparse, lexical
from routing_core.scorers._corpus import corpus_logits
from routing_core.scorers.stored import with_model, with_stale_model

# How the profile's own texts are learned, without the built-in background (conftest).
pytestmark = pytest.mark.usefixtures("without_background")

OPENINGS = ["i want to", "can you", "please", "how do i", "help me", "i need to", "could you"]
VERBS = ["check", "change", "cancel", "see", "fix", "update", "find", "know about"]
ENDINGS = ["", "today", "right now", "for me", "again", "on my account", "asap"]


def generated_routes(n_routes: int, examples: int, seed: int = 3) -> list[dict[str, object]]:
    """Routes like a real profile's: shared openings and verbs, a few topic words each."""
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ren", "tor", "vi", "sa", "pel", "dun", "qua", "zo", "bri"]
    routes = []
    for index in range(n_routes):
        topic = ["".join(rng.sample(syllables, 3)) for _ in range(3)]
        texts = [
            " ".join(
                w
                for w in (rng.choice(OPENINGS), rng.choice(VERBS), "my", rng.choice(topic))
                + (rng.choice(topic) if rng.random() < 0.3 else "", rng.choice(ENDINGS))
                if w
            )
            for _ in range(examples)
        ]
        routes.append({"name": f"route_{index:03}", "examples": texts})
    return routes


def unlearned(routes: list[dict[str, object]], slug: str = "generated") -> Pack:
    """A pack of these routes without a stored model (what the studio has before learning)."""
    return load_pack({"profile": {"slug": slug, "name": slug}, "routes": routes})


def _model_of(pack: Pack) -> LexicalModel:
    assert isinstance(pack.scorer, LexicalScorerSettings) and pack.scorer.model is not None
    return pack.scorer.model


def _verdicts(pack: Pack) -> dict[str, str | None]:
    router = Router(pack)
    texts = [text for route in pack.routes for text in route.examples]
    return {text: router.route(text).route for text in texts}


def _record_steps(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    calls: list[object] = []
    real_step = _model._step
    monkeypatch.setattr(_model, "_step", lambda *args: calls.append(args) or real_step(*args))
    return calls


@pytest.fixture(scope="module")
def trained() -> Pack:
    return with_model(unlearned(generated_routes(30, 12), "generated"))


def _edited(pack: Pack) -> Pack:
    """The profile after an edit: one route's examples changed, one added, one removed."""
    routes = [r.model_dump() for r in pack.routes]
    routes[0]["examples"] = [*routes[0]["examples"][:-2], "please fix my kalomi twice"]
    added = generated_routes(31, 12, seed=3)[-1] | {"name": "brand_new"}
    return load_pack({"profile": pack.profile.model_dump(), "routes": [*routes[:-1], added]})


def test_progress_is_reported_monotone_from_zero_to_one() -> None:
    seen: list[float] = []
    lexical._LEARNED.clear()
    with_model(unlearned(generated_routes(20, 12), "progress"), progress=seen.append)
    assert len(seen) > 20
    assert seen == sorted(seen)
    assert 0.0 <= seen[0] < 0.1 and seen[-1] == 1.0


def test_an_exception_in_progress_aborts_the_build_and_propagates() -> None:
    class Cancelled(Exception):
        pass

    def cancel_halfway(fraction: float) -> None:
        if fraction > 0.5:
            raise Cancelled

    pack = unlearned(generated_routes(20, 12, seed=5), "cancel")
    lexical._LEARNED.clear()
    with pytest.raises(Cancelled):
        with_model(pack, progress=cancel_halfway)
    assert not lexical._LEARNED  # nothing half-learned is kept
    assert _model_of(with_model(pack)).routes == 20


def test_a_previous_model_of_the_same_texts_is_reused_without_learning(
    trained: Pack, monkeypatch: pytest.MonkeyPatch
) -> None:
    lexical._LEARNED.clear()
    steps = _record_steps(monkeypatch)
    seen: list[float] = []
    again = with_model(
        unlearned(generated_routes(30, 12), "generated"),
        previous=trained,
        progress=seen.append,
    )
    assert not steps and seen[-1] == 1.0
    assert _model_of(again) == _model_of(trained)


def test_a_warm_started_build_gives_the_verdicts_of_a_full_build(
    trained: Pack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The texts an edit brought route as a full build routes them, and nearly all others.

    Only texts that two routes share a made-up word in may differ (the generator draws
    topic words from a small pool, as real profiles share words); a full build leans on
    them one way, a warm start may lean the other.
    """
    draft = _edited(trained)
    lexical._LEARNED.clear()
    steps = _record_steps(monkeypatch)
    warm = with_model(draft, previous=trained)
    warm_steps = len(steps)
    lexical._LEARNED.clear()
    full = with_model(draft)
    assert warm_steps < (len(steps) - warm_steps) / 2  # a fraction of a full build's steps
    warm_verdicts, full_verdicts = _verdicts(warm), _verdicts(full)
    new_texts = ["please fix my kalomi twice", *draft.routes[-1].examples]
    assert [warm_verdicts[t] for t in new_texts] == [full_verdicts[t] for t in new_texts]
    agree = sum(warm_verdicts[t] == full_verdicts[t] for t in full_verdicts)
    assert agree >= 0.98 * len(full_verdicts)


def test_a_stale_model_answers_a_draft_at_once_and_says_so(
    trained: Pack, monkeypatch: pytest.MonkeyPatch
) -> None:
    draft = _edited(trained)
    lexical._LEARNED.clear()
    steps = _record_steps(monkeypatch)
    stale = load_pack(dump_pack(with_stale_model(draft, trained)))
    router = Router(stale)
    assert not steps  # nothing was learned, neither by with_stale_model nor at load
    details = router.scorer.info.details
    assert details["stale"] is True
    assert details["trained_fingerprint"] == _model_of(trained).fingerprint
    assert str(details["model"]).startswith("stale")
    before = _verdicts(trained)
    kept = [r for r in draft.routes if r.name not in ("route_000", "brand_new")]
    for route in kept:
        for text in route.examples:
            assert router.route(text).route == before[text]
    new = draft.routes[-1]
    hits = sum(router.route(text).route == new.name for text in new.examples)
    # Some of its words belong to route_011 too, and the stale column is naive Bayes alone
    # against corrected ones (with 12 examples per route the correction learns 4-grams as
    # well, `_few`; the second model adds to them, and the stale column is weighed up to
    # match, `stored._bayes_share`): 11 of 12 here, where a full build routes all 12.
    assert hits >= 0.5 * len(new.examples)


def test_a_fresh_pack_does_not_write_the_stale_mark(trained: Pack) -> None:
    assert '"stale"' not in dump_pack(trained)
    assert '"stale":true' in dump_pack(with_stale_model(_edited(trained), trained))


def test_a_stale_model_of_unchanged_texts_is_the_trained_model(trained: Pack) -> None:
    same = unlearned(generated_routes(30, 12), "generated")
    assert _model_of(with_stale_model(same, trained)) == _model_of(trained)
    assert "stale" not in Router(with_stale_model(same, trained)).scorer.info.details


def test_publishing_a_stale_draft_learns_its_own_model(trained: Pack) -> None:
    draft = _edited(trained)
    stale = with_stale_model(draft, trained)
    lexical._LEARNED.clear()
    published = with_model(stale, previous=stale)
    assert not _model_of(published).stale
    assert Router(published).scorer.info.details["model"] == "stored in the pack"


def _corpus(n_routes: int, examples: int):  # noqa: ANN202 - a private pair
    from routing_core.scorers.base import RouteText

    texts = [
        RouteText(str(r["name"]), "", tuple(r["examples"]))  # type: ignore[arg-type]
        for r in generated_routes(n_routes, examples)
    ]
    return lexical._build_corpus(texts)[1]


def test_learning_against_every_route_as_candidates_is_the_full_softmax(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The candidate learner is the full learner when every route is a candidate and it
    learns with the full softmax's margin and batches (without the second model, which only packs up to
    CANDIDATE_ROUTES learn)."""
    from routing_core.scorers import _candidates, _hinge

    monkeypatch.setattr(_hinge, "WEIGHT", 0.0)
    corpus = _corpus(12, 20)
    full = _model.train(corpus, 12)
    monkeypatch.setattr(_candidates, "CANDIDATE_ROUTES", 0)
    monkeypatch.setattr(_candidates, "CANDIDATES", 12)
    monkeypatch.setattr(_candidates, "CANDIDATE_MARGIN", _model.MARGIN)
    monkeypatch.setattr(_candidates, "REUSE_BATCHES", False)  # the full softmax's batches
    monkeypatch.setattr(_candidates, "EARLY_EPOCHS", 0)  # every pass pushes every candidate
    every = _model.train(corpus, 12)
    assert every.temperature == pytest.approx(full.temperature, rel=1e-3)
    # Learned from sparse naive Bayes, the candidate learner's weights come block by block.
    assert abs(_sparse.dense(every.weights) - full.weights).max() < 1e-3


def test_the_candidate_learner_steps_with_its_own_margin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past CANDIDATE_ROUTES the correction learns with CANDIDATE_MARGIN (chosen for fewer
    candidates); a pack up to CANDIDATE_ROUTES keeps the full softmax and `_model.MARGIN`."""
    from routing_core.scorers import _candidates

    margins: list[float] = []
    real_init = _candidates.CandidateCorrection.__init__

    def recording(self: _candidates.CandidateCorrection, *args: Any) -> None:
        margins.append(args[4])  # corpus, chosen, n_routes, rates, margin, initial
        real_init(self, *args)

    monkeypatch.setattr(_candidates.CandidateCorrection, "__init__", recording)
    corpus = _corpus(30, 20)
    _model.train(corpus, 30)
    assert not margins  # 30 routes: the full softmax
    monkeypatch.setattr(_candidates, "CANDIDATE_ROUTES", 20)
    _model.train(corpus, 30)
    assert margins == [_candidates.CANDIDATE_MARGIN]
    assert _candidates.CANDIDATE_MARGIN != _model.MARGIN


def test_the_last_pass_reuses_the_held_out_passes_batches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past CANDIDATE_ROUTES the last pass over every text batches only the held-out texts
    anew: the other texts' batches are the held-out passes' (made once); every text is still
    stepped on in that pass."""
    import math

    from routing_core.scorers import _candidates
    from routing_core.scorers.calibration import HOLD_OUT

    monkeypatch.setattr(_candidates, "CANDIDATE_ROUTES", 20)
    made: list[int] = []
    stepped: list[np.ndarray] = []
    real_batch, real_step = (
        _candidates.CandidateCorrection._batch,
        _candidates.CandidateCorrection._step,
    )

    def batch(self: _candidates.CandidateCorrection, docs: Any) -> Any:
        made.append(len(docs))
        return real_batch(self, docs)

    def step(self: _candidates.CandidateCorrection, one: Any, base: Any, early: bool) -> None:
        stepped.append(one.docs)
        real_step(self, one, base, early)

    monkeypatch.setattr(_candidates.CandidateCorrection, "_batch", batch)
    monkeypatch.setattr(_candidates.CandidateCorrection, "_step", step)
    corpus = _corpus(40, 30)
    _model.train(corpus, 40)
    held = int(((np.arange(corpus.n_docs) % HOLD_OUT) == HOLD_OUT - 1).sum())
    kept = math.ceil((corpus.n_docs - held) / _model.BATCH)
    assert len(made) == kept + math.ceil(held / _model.BATCH)
    last_pass = np.concatenate(stepped[-(kept + math.ceil(held / _model.BATCH)) :])
    assert sorted(last_pass.tolist()) == list(range(corpus.n_docs))


def test_only_the_first_held_out_passes_push_fewer_candidates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past CANDIDATE_ROUTES the first EARLY_EPOCHS passes are early steps (each text's first
    EARLY_CANDIDATES candidates pushed); the other held-out passes and the last pass push
    every candidate."""
    import math

    from routing_core.scorers import _candidates
    from routing_core.scorers.calibration import HOLD_OUT

    monkeypatch.setattr(_candidates, "CANDIDATE_ROUTES", 20)
    kinds: list[bool] = []
    real_step = _candidates.CandidateCorrection._step

    def step(self: _candidates.CandidateCorrection, one: Any, base: Any, early: bool) -> None:
        kinds.append(early)
        real_step(self, one, base, early)

    monkeypatch.setattr(_candidates.CandidateCorrection, "_step", step)
    corpus = _corpus(40, 30)
    _model.train(corpus, 40)
    held = int(((np.arange(corpus.n_docs) % HOLD_OUT) == HOLD_OUT - 1).sum())
    per_pass = math.ceil((corpus.n_docs - held) / _model.BATCH)
    early = _candidates.EARLY_EPOCHS * per_pass
    assert 0 < early < len(kinds)
    assert kinds[:early] == [True] * early and not any(kinds[early:])


def test_a_large_pack_learns_against_its_candidates_and_keeps_its_verdicts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from routing_core.scorers import _candidates

    corpus = _corpus(40, 12)
    full = _model.train(corpus, 40)
    monkeypatch.setattr(_candidates, "CANDIDATE_ROUTES", 20)
    monkeypatch.setattr(_candidates, "CANDIDATES", 8)
    steps: list[object] = []
    real_step = _candidates.CandidateCorrection._step
    monkeypatch.setattr(
        _candidates.CandidateCorrection,
        "_step",
        lambda self, *args: steps.append(args) or real_step(self, *args),
    )
    narrow = _model.train(corpus, 40)
    assert steps  # the candidate learner did the learning
    dense = _sparse.dense(full.weights), _sparse.dense(narrow.weights)
    logits = corpus_logits(dense[0], corpus), corpus_logits(dense[1], corpus)
    agree = (logits[0].argmax(axis=1) == logits[1].argmax(axis=1)).mean()
    assert agree >= 0.97


def test_a_large_build_reports_progress_at_least_every_half_second_of_work() -> None:
    """Past CANDIDATE_ROUTES routes, every stage of learning says how far it is."""
    import time

    from routing_core.scorers import _candidates

    seen: list[tuple[float, float]] = []
    pack = unlearned(generated_routes(_candidates.CANDIDATE_ROUTES + 40, 12), "large")
    lexical._LEARNED.clear()
    start = time.process_time()
    with_model(pack, progress=lambda f: seen.append((time.process_time() - start, f)))
    times = [0.0] + [t for t, _ in seen]
    fractions = [f for _, f in seen]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert max(b - a for a, b in zip(times, times[1:], strict=False)) < 0.5


def test_a_stale_model_follows_routes_put_in_another_order(trained: Pack) -> None:
    routes = [r.model_dump() for r in reversed(trained.routes)]
    draft = load_pack(  # reversed, and one example changed, so the texts differ and the model is stale
        {
            "profile": trained.profile.model_dump(),
            "routes": [{**routes[0], "examples": [*routes[0]["examples"], "zz new"]}, *routes[1:]],
        }
    )
    router = Router(with_stale_model(draft, trained))
    assert router.scorer.info.details["stale"] is True
    before = _verdicts(trained)
    for route in draft.routes[1:]:
        for text in route.examples:
            assert router.route(text).route == before[text]


def test_building_a_pack_reports_its_learning() -> None:
    from routing_core.build import build_pack

    seen: list[float] = []
    lexical._LEARNED.clear()
    build_pack(generated_routes(20, 12, seed=9), slug="built", progress=seen.append)
    assert len(seen) > 20 and seen == sorted(seen) and seen[-1] == 1.0


def test_an_earlier_model_moves_to_new_terms_and_routes_as_decoding_it_would() -> None:
    """`_mapped_weights` is the decoded matrix gathered at the mapped rows and columns."""
    model = _model_of(with_model(unlearned(generated_routes(12, 10), "mapped")))
    rng = np.random.default_rng(2)
    # Distinct old terms (terms are matched by string), some new ones unknown (-1).
    term_map = rng.permutation(len(model.terms))[:300]
    term_map[rng.random(len(term_map)) < 0.2] = -1
    route_map = np.array([3, -1, 0, 11, 7, -1, 5], np.int64)
    _, dense = _encoding.decode(model)
    expected = np.zeros((len(term_map), len(route_map)), np.float32)
    rows, columns = np.flatnonzero(term_map >= 0), np.flatnonzero(route_map >= 0)
    expected[np.ix_(rows, columns)] = dense[np.ix_(term_map[rows], route_map[columns])]
    got = lexical._mapped_weights(model, term_map, route_map)
    np.testing.assert_allclose(got, expected, atol=1e-5)


def test_a_large_warm_start_learns_only_where_the_edit_reaches_and_keeps_full_verdicts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past CANDIDATE_ROUTES, only the texts of changed routes and of texts that have one
    among their candidates learn again; the edit's texts still route as a full build does."""
    from routing_core.scorers import _candidates

    monkeypatch.setattr(_candidates, "CANDIDATE_ROUTES", 20)
    monkeypatch.setattr(_candidates, "CANDIDATES", 6)
    lexical._LEARNED.clear()
    before = with_model(unlearned(generated_routes(60, 12), "large-warm"))
    routes = [r.model_dump() for r in before.routes]
    routes[0]["examples"] = [*routes[0]["examples"][:-2], "please fix my kalomi twice"]
    added = generated_routes(1, 12, seed=11)[0] | {"name": "brand_new"}  # unlike any other
    draft = load_pack({"profile": before.profile.model_dump(), "routes": [*routes[:-1], added]})
    learned: list[int] = []
    real_fit = _candidates.CandidateCorrection.fit
    monkeypatch.setattr(
        _candidates.CandidateCorrection,
        "fit",
        lambda self, base, docs, *rest: (
            learned.append(len(base)) or real_fit(self, base, docs, *rest)
        ),
    )
    lexical._LEARNED.clear()
    warm = with_model(draft, previous=before)
    n_texts = sum(len(route.examples) for route in draft.routes)
    assert learned and max(learned) < n_texts / 2  # not every text learned again
    lexical._LEARNED.clear()
    full = with_model(draft)
    warm_verdicts, full_verdicts = _verdicts(warm), _verdicts(full)
    new_texts = ["please fix my kalomi twice", *draft.routes[-1].examples]
    assert [warm_verdicts[t] for t in new_texts] == [full_verdicts[t] for t in new_texts]
    agree = sum(warm_verdicts[t] == full_verdicts[t] for t in full_verdicts)
    assert agree >= 0.98 * len(full_verdicts)


@settings(max_examples=25, deadline=None)
@given(edits=st.lists(st.tuples(st.integers(0, 7), st.text(max_size=30)), max_size=4))
def test_counts_kept_from_an_earlier_build_give_the_corpus_of_counting_afresh(
    edits: list[tuple[int, str]],
) -> None:
    """Read back or counted now, every corpus array and the vocabulary are the same."""
    from routing_core.scorers.base import RouteText

    first = [
        RouteText(str(r["name"]), "", tuple(r["examples"]))  # type: ignore[arg-type]
        for r in generated_routes(8, 5, seed=4)
    ]
    second = list(reversed(first))
    for index, text in edits:
        route = second[index]
        second[index] = RouteText(route.name, text, (*route.examples[1:], text))
    lexical._build_corpus(first)  # leaves its routes' counts (and term numbers) behind
    kept_vocabulary, kept = lexical._build_corpus(second)
    saved = lexical._COUNTED
    lexical._COUNTED = lexical._TermCounts(lexical.COUNTED_ROUTES)
    try:
        fresh_vocabulary, fresh = lexical._build_corpus(second)
    finally:
        lexical._COUNTED = saved
    assert list(kept_vocabulary.ids) == list(fresh_vocabulary.ids)
    np.testing.assert_array_equal(kept_vocabulary.idf, fresh_vocabulary.idf)
    for name in ("rows", "ids", "values", "routes", "char_sizes"):
        np.testing.assert_array_equal(getattr(kept, name), getattr(fresh, name))
    assert kept.n_terms == fresh.n_terms


def test_a_full_count_cache_starts_afresh_between_builds_never_during_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from routing_core.scorers.base import RouteText

    routes = [
        RouteText(str(r["name"]), "", tuple(r["examples"]))  # type: ignore[arg-type]
        for r in generated_routes(8, 5, seed=6)
    ]
    monkeypatch.setattr(lexical, "_COUNTED", lexical._TermCounts(3))  # fewer than a build
    expected = lexical._build_corpus(routes)[1]
    assert len(lexical._COUNTED.routes) == 8  # all of one build's routes, past the limit
    again = lexical._build_corpus(list(reversed(routes)))[1]  # cleared first, then counted
    assert len(lexical._COUNTED.routes) == 8
    monkeypatch.setattr(lexical, "_COUNTED", lexical._TermCounts(100))
    np.testing.assert_array_equal(
        again.values, lexical._build_corpus(list(reversed(routes)))[1].values
    )
    np.testing.assert_array_equal(expected.ids, lexical._build_corpus(routes)[1].ids)
