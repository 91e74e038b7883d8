"""Sparse naive Bayes (large packs) is the dense naive Bayes, and so is what is made from it."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from routing_core.scorers import _candidates, _corpus, _encoding, _model, _sparse, lexical
from routing_core.scorers._model import SMOOTHING, Corpus
from routing_core.scorers.base import RouteText

from .test_incremental_model import generated_routes


def _random_corpus(seed: int, n_docs: int, n_terms: int, n_routes: int) -> Corpus:
    rng = np.random.default_rng(seed)
    lengths = np.minimum(rng.integers(1, 7, n_docs), n_terms)
    ids = np.concatenate([rng.choice(n_terms, n, replace=False) for n in lengths])
    rows = np.repeat(np.arange(n_docs), lengths)
    values = rng.random(len(ids)).astype(np.float32)
    # Texts in route order, as counting makes them; some routes without any text.
    routes = np.sort(rng.integers(0, n_routes, n_docs))
    char_sizes = rng.choice([0, 3, 4], n_terms)
    return Corpus(rows, ids.astype(np.int64), values, routes, n_terms, char_sizes)


def _generated_corpus(n_routes: int, examples: int) -> Corpus:
    texts = [
        RouteText(str(r["name"]), "", tuple(r["examples"]))  # type: ignore[arg-type]
        for r in generated_routes(n_routes, examples)
    ]
    return lexical._build_corpus(texts)[1]


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n_docs=st.integers(1, 60),
    n_terms=st.integers(1, 40),
    n_routes=st.integers(1, 9),
)
def test_sparse_naive_bayes_is_the_dense_one(
    seed: int, n_docs: int, n_terms: int, n_routes: int
) -> None:
    corpus = _random_corpus(seed, n_docs, n_terms, n_routes)
    dense, totals, own_mass = _model._bayes_weights(corpus, n_routes)
    bayes, sparse_totals, sparse_own = _sparse.sparse_bayes(corpus, n_routes, SMOOTHING)
    # A cell's mass is summed in the same order: the same float32 sum, to the bit (a
    # route's total may be summed in another order than numpy sums a column).
    np.testing.assert_array_equal(sparse_own, own_mass)
    np.testing.assert_allclose(sparse_totals, totals, rtol=1e-6)
    assert bayes.shape == dense.shape
    np.testing.assert_allclose(bayes.rows(0, n_terms), dense, atol=2e-5)
    middle = n_terms // 2
    np.testing.assert_allclose(bayes.rows(middle, n_terms), dense[middle:], atol=2e-5)


def test_candidates_from_sparse_naive_bayes_are_those_of_the_dense_logits() -> None:
    corpus = _generated_corpus(30, 12)
    dense, _, _ = _model._bayes_weights(corpus, 30)
    bayes, _, _ = _sparse.sparse_bayes(corpus, 30, SMOOTHING)
    chosen = _candidates.candidates(corpus, bayes)
    words = corpus.char_sizes[corpus.ids] == 0
    word_corpus = Corpus(
        corpus.rows[words],
        corpus.ids[words],
        corpus.values[words],
        corpus.routes,
        corpus.n_terms,
        corpus.char_sizes,
    )
    logits = _corpus.corpus_logits(dense, word_corpus)
    assert (chosen[:, 0] == corpus.routes).all()
    # The other candidates are the strongest other routes, strongest first.
    logits[np.arange(corpus.n_docs), corpus.routes] = -np.inf
    picked = np.take_along_axis(logits, chosen[:, 1:], axis=1)
    assert (np.diff(picked, axis=1) <= 1e-4).all()
    weakest_picked = picked[:, -1]
    logits[np.arange(corpus.n_docs)[:, None], chosen[:, 1:]] = -np.inf
    assert (logits.max(axis=1) <= weakest_picked + 1e-4).all()


def test_logits_gathered_from_sparse_naive_bayes_are_the_dense_ones_on_the_candidates() -> None:
    corpus = _generated_corpus(30, 12)
    dense, _, _ = _model._bayes_weights(corpus, 30)
    bayes, _, _ = _sparse.sparse_bayes(corpus, 30, SMOOTHING)
    chosen = _candidates.candidates(corpus, bayes)
    expected = np.take_along_axis(_corpus.corpus_logits(dense, corpus), chosen, axis=1)
    got = _candidates.gathered_logits(corpus, bayes, chosen)
    # Equal but for a shift common to a text's candidates (the centring): no softmax sees it.
    shift = (got - expected).mean(axis=1, keepdims=True)
    np.testing.assert_allclose(got - shift, expected, atol=1e-3)


@settings(max_examples=25, deadline=None)
@given(
    terms_at_once=st.integers(1, 40), entries_at_once=st.integers(1, 50), seed=st.integers(0, 99)
)
def test_gathered_logits_do_not_depend_on_the_blocks_they_are_summed_in(
    terms_at_once: int, entries_at_once: int, seed: int
) -> None:
    """Chunks of entries change which arrays are made, not one bit of the sums (a cell's
    entries are added in the same order); blocks of terms change them by rounding only."""
    corpus = _random_corpus(seed, 60, 40, 9)
    bayes, _, _ = _sparse.sparse_bayes(corpus, 9, SMOOTHING)
    chosen = _candidates.candidates(corpus, bayes)
    before = _candidates.GATHERED_TERMS, _candidates.GATHERED_ENTRIES

    def gathered(terms: int, entries: int) -> np.ndarray:
        _candidates.GATHERED_TERMS, _candidates.GATHERED_ENTRIES = terms, entries
        try:
            return _candidates.gathered_logits(corpus, bayes, chosen)
        finally:
            _candidates.GATHERED_TERMS, _candidates.GATHERED_ENTRIES = before

    expected = gathered(*before)
    same_blocks = gathered(terms_at_once, before[1])
    got = gathered(terms_at_once, entries_at_once)
    np.testing.assert_array_equal(got, same_blocks)  # chunks of entries: not one bit
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)  # blocks of terms


def test_weights_made_block_by_block_encode_as_the_dense_matrix_does() -> None:
    rng = np.random.default_rng(5)
    weights = rng.normal(size=(50, 7)).astype(np.float32)
    weights[rng.random(weights.shape) < 0.7] = 0.0
    routes = [RouteText(f"r{i}", "", ("text",)) for i in range(7)]
    terms, idf = [f"t{i}" for i in range(50)], np.ones(50, np.float32)
    blocks = _sparse.BlockWeights(50, 7, lambda first, last: weights[first:last].copy())
    _encoding.BLOCK_ROWS, before = 16, _encoding.BLOCK_ROWS  # several blocks, a ragged last one
    try:
        by_blocks = _encoding.encode(routes, terms, idf, blocks, 1.3, True)
    finally:
        _encoding.BLOCK_ROWS = before
    assert by_blocks == _encoding.encode(routes, terms, idf, weights, 1.3, True)
    np.testing.assert_array_equal(blocks.dense(), weights)


@settings(max_examples=120, deadline=None)
@given(
    rows=st.integers(0, 6),
    columns=st.integers(1, 9),
    values=st.lists(
        st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -3.25, 1e-8, 7.0]),
        min_size=54,
        max_size=54,
    ),
    seed=st.integers(0, 1000),
)
def test_row_medians_are_np_median_to_the_bit(
    rows: int, columns: int, values: list[float], seed: int
) -> None:
    """Ties, signed zeros, odd and even rows, no rows: what `np.median` gives. (Of two zeros
    in the middle, which sign comes first may differ: a median of 0 or -0 subtracts alike.)"""
    rng = np.random.default_rng(seed)
    block = np.asarray(values[: rows * columns], np.float32).reshape(rows, columns)
    block += rng.normal(size=block.shape).astype(np.float32) * (seed % 2)  # some without ties
    expected = np.median(block, axis=1, keepdims=True)
    got = _encoding.row_medians(block.copy())
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    nonzero = expected != 0
    np.testing.assert_array_equal(got[nonzero].view(np.int32), expected[nonzero].view(np.int32))


def test_rows_of_many_equal_cells_take_the_partition_that_handles_them() -> None:
    """A warm-started model's rows hold many equal cells, on which a single partition is four
    times slower than `np.median`'s: sampled rows tell such a block from a fresh one's."""
    rng = np.random.default_rng(3)
    fresh = rng.normal(size=(64, 2001)).astype(np.float32)
    warm = fresh.copy()
    warm[:, ::2] = -0.25  # half of every row one value: cells no route stored
    assert not _encoding._many_equal(fresh)
    assert _encoding._many_equal(warm)
    np.testing.assert_array_equal(
        _encoding.row_medians(warm.copy()), np.median(warm, axis=1, keepdims=True)
    )
