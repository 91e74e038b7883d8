"""Naive Bayes of a large pack and its final weights, never held as a terms x routes matrix.

With additive smoothing, log p(t|r) = log(c_tr + s) - log(N_r + sV). A term a route never
saw gets log s - log(N_r + sV): the same for every such term, one constant per route. So
naive Bayes is a sparse part, log(c_tr + s) - log s on the cells where a route holds the
term (about 1% of them at 2,000 routes), plus that constant: the same logits, without a
matrix of most of a GB that the kernel must hand over and zero (over a second of system
time at 2,000 routes, more than computing it). Past CANDIDATE_ROUTES routes, `_model.train`
learns from this form (`_candidates.py` reads it), and the final weights are made block of
terms by block when they are encoded (`BlockWeights`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from routing_core._types import Float32Array, IntArray

if TYPE_CHECKING:
    from scipy import sparse

    from routing_core.scorers._corpus import Corpus


# Routes whose cells are summed at once: a table of this many routes x terms bytes
# (2 MB at 80,000 terms) stays in cache.
CELLS_AT_ONCE = 2_000_000


@dataclass(frozen=True, slots=True)
class SparseBayes:
    """Naive Bayes as `counted` (terms x routes, CSR: log(c + s) - log s where c > 0) plus
    `empty` (per route: log s - log of its smoothed total), and each term's `means` over
    routes (to centre a row as the dense form is centred)."""

    counted: sparse.csr_array
    empty: Float32Array
    means: Float32Array

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.means), len(self.empty)

    def rows(self, first: int, last: int) -> Float32Array:
        """Terms [first, last) as dense rows, centred."""
        block = np.empty((last - first, len(self.empty)), np.float32)
        block[:] = self.empty
        lo, hi = self.counted.indptr[first], self.counted.indptr[last]
        block.reshape(-1)[block_cells(self.counted, first, last)] += self.counted.data[lo:hi]
        block -= self.means[first:last, None]
        return block


def block_cells(matrix: sparse.csr_array, first: int, last: int) -> IntArray:
    """Rows [first, last)'s stored cells of a CSR matrix, as `row * columns + column` with
    rows counted from `first` (flat indices into a dense block of those rows)."""
    indptr = matrix.indptr
    rows = np.repeat(np.arange(last - first), np.diff(indptr[first : last + 1]))
    cells: IntArray = rows * matrix.shape[1] + matrix.indices[indptr[first] : indptr[last]]
    return cells


def sparse_bayes(
    corpus: Corpus, n_routes: int, smoothing: float
) -> tuple[SparseBayes, Float32Array, Float32Array]:
    """Naive Bayes of `corpus` in sparse form (`_model._bayes_weights`' dense one).

    Returns:
        It, each route's smoothed total mass, and each corpus entry's mass under its own
        text's route (what leave-one-out needs), all as the dense form has them.
    """
    from scipy import sparse

    terms, routes, masses, own_mass = _cell_masses(corpus, n_routes)
    # Column sums in ascending terms, as the dense matrix's sum over its rows adds them.
    totals = np.zeros(n_routes, np.float32)
    np.add.at(totals, routes, masses)
    totals += np.float32(smoothing * corpus.n_terms)
    log_s = np.log(np.full(1, smoothing, np.float32))[0]
    counted = np.log(masses + np.float32(smoothing)) - log_s
    empty = log_s - np.log(totals)
    sums = np.bincount(terms, counted.astype(np.float64), minlength=corpus.n_terms)
    means = ((sums + float(empty.astype(np.float64).sum())) / max(1, n_routes)).astype(np.float32)
    matrix = sparse.csr_array((counted, (terms, routes)), shape=(corpus.n_terms, n_routes))
    return SparseBayes(matrix, empty, means), totals, own_mass


def _cell_masses(
    corpus: Corpus, n_routes: int
) -> tuple[IntArray, IntArray, Float32Array, Float32Array]:
    """The cells holding mass (ascending term, then route), their masses and each entry's.

    Summed route block by route block in one small table (the slot trick of
    `_candidates._compact_cells`), in the entries' order: the same float32 sums as adding
    into a dense matrix entry by entry.
    """
    own = corpus.routes[corpus.rows]
    by_route = np.argsort(own, kind="stable")
    step = max(1, CELLS_AT_ONCE // max(1, corpus.n_terms))
    bounds = np.searchsorted(own[by_route], np.arange(0, n_routes + step, step))
    table = np.zeros(step * max(1, corpus.n_terms), np.int64)
    seen = np.zeros(len(table), np.bool_)
    keys: list[IntArray] = [np.zeros(0, np.int64)]
    sums: list[Float32Array] = [np.zeros(0, np.float32)]
    own_mass = np.empty(len(own), np.float32)
    for block, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:], strict=False)):
        entries = by_route[lo:hi]
        first = block * step
        local = (own[entries] - first) * corpus.n_terms + corpus.ids[entries]
        seen[local] = True
        cells = np.flatnonzero(seen)
        seen[cells] = False
        table[cells] = np.arange(len(cells))
        mass = np.zeros(len(cells), np.float32)
        np.add.at(mass, table[local], corpus.values[entries])
        own_mass[entries] = mass[table[local]]
        routes, terms = np.divmod(cells, max(1, corpus.n_terms))
        keys.append(terms * n_routes + routes + first)
        sums.append(mass)
    every, masses = np.concatenate(keys), np.concatenate(sums)
    order = np.argsort(every, kind="stable")
    terms, routes = np.divmod(every[order], max(1, n_routes))
    return terms, routes, masses[order], own_mass


@dataclass(frozen=True, slots=True)
class BlockWeights:
    """Final weights (terms x routes, centred per term) made block of terms by block.

    `block(first, last)` returns the rows of terms [first, last); `dense()` all of them
    (small packs and tests only: at 2,000 routes it is most of a GB).
    """

    n_terms: int
    n_routes: int
    block: Callable[[int, int], Float32Array]

    @property
    def shape(self) -> tuple[int, int]:
        return self.n_terms, self.n_routes

    def dense(self) -> Float32Array:
        """Every row at once."""
        out = np.zeros(self.shape, np.float32)
        for first in range(0, self.n_terms, ROWS_AT_ONCE):
            last = min(self.n_terms, first + ROWS_AT_ONCE)
            out[first:last] = self.block(first, last)
        return out


# Rows made at once by `BlockWeights.dense`.
ROWS_AT_ONCE = 4096


def dense(weights: Float32Array | BlockWeights) -> Float32Array:
    """Weights as one terms x routes matrix, whichever form they are in."""
    return weights.dense() if isinstance(weights, BlockWeights) else weights
