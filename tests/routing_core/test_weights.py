"""Sparse weights read back exactly as the dense matrix they stand for."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from routing_core.scorers import _weights
from routing_core.scorers._weights import DENSE_ROUTES, DenseWeights, Weights, weights_of


@settings(max_examples=60, deadline=None)
@given(
    n_terms=st.integers(1, 30),
    n_routes=st.integers(1, 12),
    density=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**16),
    heavy_share=st.sampled_from([0.0, 0.3, 0.6, 2.0]),
    blas_block=st.sampled_from([1, 7, _weights.BLAS_BLOCK]),
)
def test_sparse_weights_score_and_explain_like_the_dense_matrix(
    n_terms: int, n_routes: int, density: float, seed: int, heavy_share: float, blas_block: int
) -> None:
    """Whichever terms keep dense rows (none, some, all), and however many rows go into one
    product, the weights read the same."""
    rng = np.random.default_rng(seed)
    cells = np.flatnonzero(rng.random(n_terms * n_routes) < density).astype(np.int64)
    values = rng.normal(size=len(cells)).astype(np.float32)
    saved, _weights.HEAVY_SHARE = _weights.HEAVY_SHARE, heavy_share
    try:
        sparse = Weights.from_cells(cells, values, n_terms, n_routes)
    finally:
        _weights.HEAVY_SHARE = saved
    dense = np.zeros(n_terms * n_routes, np.float32)
    dense[cells] = values
    matrix = dense.reshape(n_terms, n_routes)
    matrix -= matrix.mean(axis=1, keepdims=True)
    ids = rng.permutation(n_terms)[: int(rng.integers(0, n_terms + 1))]
    x = rng.random(len(ids)).astype(np.float32)
    np.testing.assert_allclose(sparse.dense(), matrix, atol=1e-5)
    saved_block, _weights.BLAS_BLOCK = _weights.BLAS_BLOCK, blas_block
    try:
        sparse_logits = sparse.logits(ids, x)
        dense_logits = DenseWeights(matrix).logits(ids, x)
    finally:
        _weights.BLAS_BLOCK = saved_block
    assert sparse_logits.dtype == dense_logits.dtype == np.float32
    np.testing.assert_allclose(sparse_logits, x @ matrix[ids], atol=1e-4)
    np.testing.assert_allclose(dense_logits, x @ matrix[ids], atol=1e-4)
    for route in range(n_routes):
        np.testing.assert_allclose(sparse.column(ids, route), matrix[ids, route], atol=1e-5)


def test_only_a_pack_past_dense_routes_is_held_sparse() -> None:
    cells = np.array([0, 5], np.int64)
    values = np.array([1.0, -1.0], np.float32)
    assert isinstance(weights_of(cells, values, 3, DENSE_ROUTES), DenseWeights)
    assert isinstance(weights_of(cells, values, 3, DENSE_ROUTES + 1), Weights)


def test_a_long_message_is_scored_in_products_small_enough_for_one_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No product reaches OpenBLAS's multithreading size (460,800 elements), whatever the
    message's length: on a busy machine it made the turn wait for a second core."""
    sizes: list[int] = []
    real_take = np.take

    def take(matrix: np.ndarray, rows: np.ndarray, axis: int) -> np.ndarray:
        sizes.append(len(rows) * matrix.shape[1])
        return real_take(matrix, rows, axis=axis)

    matrix = np.random.default_rng(0).normal(size=(3000, 2000)).astype(np.float32)
    rows = np.arange(3000)
    values = np.ones(3000, np.float32)
    monkeypatch.setattr(_weights.np, "take", take)
    got = _weights.rows_dot(values, matrix, rows)
    assert len(sizes) > 1
    assert max(sizes) <= _weights.BLAS_BLOCK < 460_800
    np.testing.assert_allclose(got, matrix.sum(axis=0), rtol=1e-4, atol=1e-2)
