"""The candidate learner's compact cells learn exactly what the plain dense definition learns."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from routing_core.scorers import _candidates, _model
from routing_core.scorers._model import MOMENTUM, Corpus


def _random_problem(seed: int, n_docs: int, n_terms: int, n_routes: int, width: int):  # noqa: ANN202
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 6, n_docs)
    ids = np.concatenate(
        [rng.choice(n_terms, n, replace=False) for n in np.minimum(lengths, n_terms)]
    )
    rows = np.repeat(np.arange(n_docs), np.minimum(lengths, n_terms))
    values = rng.random(len(ids)).astype(np.float32)
    routes = rng.integers(0, n_routes, n_docs)
    char_sizes = rng.choice([0, 3, 4], n_terms)
    corpus = Corpus(rows, ids.astype(np.int64), values, routes, n_terms, char_sizes)
    others = [np.setdiff1d(np.arange(n_routes), [r]) for r in routes]
    chosen = np.stack(
        [np.r_[r, rng.permutation(o)[: width - 1]] for r, o in zip(routes, others, strict=True)]
    )
    base = rng.normal(size=(n_docs, width)).astype(np.float32)
    rates = _model._rates(corpus, chars=True)
    return corpus, chosen.astype(np.int64), base, rates


def _plain_fit(corpus, chosen, base, rates, margin, initial, docs_sets, n_routes, early=()):  # noqa: ANN001, ANN202
    """The step as first written: every entry's candidate cells of dense weights, add.at.

    A step whose index is in `early` pushes each text's first EARLY_CANDIDATES candidates
    only: their cells alone are read, moved and given momentum (the softmax is over all)."""
    weights = initial.copy()
    velocity = np.zeros_like(weights)
    flat, moving = weights.reshape(-1), velocity.reshape(-1)
    for index, docs in enumerate(docs_sets):
        pushed = _candidates.EARLY_CANDIDATES if index in early else chosen.shape[1]
        entries = np.flatnonzero(np.isin(corpus.rows, docs) & (rates[corpus.ids, 0] > 0))
        rows = np.searchsorted(docs, corpus.rows[entries])
        cells = corpus.ids[entries, None] * n_routes + chosen[docs][rows][:, :pushed]
        values = corpus.values[entries]
        logits = base[docs].copy()
        np.add.at(logits[:, :pushed], rows, flat[cells] * values[:, None])
        logits[:, 0] -= margin
        logits -= logits.max(axis=1, keepdims=True)
        error = np.exp(logits)
        error /= error.sum(axis=1, keepdims=True)
        error[:, 0] -= 1.0
        error /= len(docs)
        if not len(entries):
            continue
        active = flat[cells]
        moving[cells] *= np.float32(MOMENTUM)
        np.add.at(moving, cells, error[rows][:, :pushed] * values[:, None])
        flat[cells] = active - moving[cells] * rates[corpus.ids[entries], 0][:, None]
    return weights


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    n_docs=st.integers(1, 30),
    n_terms=st.integers(1, 25),
    n_routes=st.integers(2, 9),
    width=st.integers(1, 9),
    warm=st.booleans(),
    early=st.sets(st.integers(0, 4)),
    early_candidates=st.integers(1, 9),
    terms_at_once=st.sampled_from([1, 3, 1024]),
    entries_at_once=st.sampled_from([1, 5, 8192]),
)
def test_compact_candidate_learning_equals_the_plain_dense_steps(
    seed: int,
    n_docs: int,
    n_terms: int,
    n_routes: int,
    width: int,
    warm: bool,
    early: set[int],
    early_candidates: int,
    terms_at_once: int,
    entries_at_once: int,
) -> None:
    """Batches, shared cells, warm starts, cells no step touches and early steps (fewer
    candidates pushed, among full ones): all as the definition, whatever blocks of terms and
    chunks of entries the cells are found in."""
    before = (
        _candidates.TERMS_AT_ONCE,
        _candidates.GATHERED_ENTRIES,
        _candidates.EARLY_CANDIDATES,
    )
    _candidates.TERMS_AT_ONCE, _candidates.GATHERED_ENTRIES = terms_at_once, entries_at_once
    _candidates.EARLY_CANDIDATES = min(early_candidates, width, n_routes)
    try:
        _check_compact_learning(seed, n_docs, n_terms, n_routes, width, warm, early)
    finally:
        (
            _candidates.TERMS_AT_ONCE,
            _candidates.GATHERED_ENTRIES,
            _candidates.EARLY_CANDIDATES,
        ) = before


def _check_compact_learning(
    seed: int, n_docs: int, n_terms: int, n_routes: int, width: int, warm: bool, early: set[int]
) -> None:
    width = min(width, n_routes)
    corpus, chosen, base, rates = _random_problem(seed, n_docs, n_terms, n_routes, width)
    rng = np.random.default_rng(seed + 1)
    initial = (
        rng.normal(size=(n_terms, n_routes)).astype(np.float32)
        if warm
        else np.zeros((n_terms, n_routes), np.float32)
    )
    learner = _candidates.CandidateCorrection(
        corpus, chosen, n_routes, rates, 1.0, initial.copy() if warm else None
    )
    docs_sets = [np.sort(rng.choice(n_docs, min(n_docs, 7), replace=False)) for _ in range(5)]
    for index, docs in enumerate(docs_sets):
        learner._step(learner._batch(docs), base, index in early)
    got = np.zeros((n_terms, n_routes), np.float32)
    learner.add_to(got)
    learned = rates[:, 0] > 0
    expected = _plain_fit(
        corpus, chosen, base, rates, 1.0, initial, docs_sets, n_routes, tuple(early)
    )
    expected[~learned] = 0.0  # the 4- and 5-grams are not the correction's
    # float32 sums in another order, then scaled by learning rates up to 160: a few units
    # in the 5th digit; a missing momentum, start or cell is off by the weights themselves.
    scale = 1e-4 * max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=scale)
    held = rng.random(n_docs) < 0.5
    plain_logits = np.zeros((n_docs, width), np.float32)
    entries = learned[corpus.ids]
    cells = corpus.ids[entries, None] * n_routes + chosen[corpus.rows[entries]]
    np.add.at(
        plain_logits,
        corpus.rows[entries],
        expected.reshape(-1)[cells] * corpus.values[entries, None],
    )
    np.testing.assert_allclose(learner.logits(held), plain_logits[held], rtol=1e-4, atol=1e-3)


@settings(max_examples=80, deadline=None)
@given(
    values=st.lists(st.integers(0, 49), min_size=0, max_size=120),
    width=st.integers(1, 4),
    split=st.integers(0, 5),
    leftover=st.integers(-5, 200),
)
def test_distinct_cells_are_np_unique_ascending_with_its_inverse(
    values: list[int], width: int, split: int, leftover: int
) -> None:
    """The batch's cells, those of its first `split` candidates first, each part in ascending
    order (a step reads the weights front to back; an early step reads the first part only),
    each named once, and every cell's position among them: what `np.unique` gives per part."""
    rows = len(values) // width
    cells = np.asarray(values[: rows * width], np.int32).reshape(rows, width)
    slot = np.full(50, leftover, np.int32)  # leftovers from an earlier batch
    distinct, inverse, n_early = _candidates._distinct(cells, slot, split)
    early = np.unique(cells[:, :split])
    late = np.setdiff1d(np.unique(cells), early)
    np.testing.assert_array_equal(distinct, np.r_[early, late])
    assert n_early == len(early)
    np.testing.assert_array_equal(distinct[inverse], cells)
    assert distinct.dtype == np.int64 and inverse.dtype == np.int32


def test_scaled_rates_reach_the_batches_a_later_fit_reuses() -> None:
    """A fit keeps its batches for the next fit over the same texts; a batch copies its
    rates when it is made, so after `scale_rates(0)` a reused batch must not move anything."""
    corpus, chosen, base, rates = _random_problem(3, 20, 12, 5, 3)
    learner = _candidates.CandidateCorrection(corpus, chosen, 5, rates, 1.0, None)
    every = np.ones(20, np.bool_)
    learner.fit(base, every, 2, 7, _model.NO_PROGRESS)
    assert np.abs(learner.weights).max() > 0  # it did learn at the first rates
    learner.scale_rates(0.0)
    before = learner.weights.copy()
    learner.fit(base, every, 1, 8, _model.NO_PROGRESS)
    np.testing.assert_array_equal(learner.weights, before)
