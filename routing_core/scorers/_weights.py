"""A learned model's weights as scoring reads them: sparse by term, never a dense matrix.

A stored model keeps only the cells that differ from each term's median route (`stored.py`),
a few per term. Scoring a message needs its hundred-odd terms' rows; holding them as
compressed rows keeps a 2,000-route pack's model at tens of MB instead of most of a GB, makes
loading it a matter of reading arrays, and makes a message cost its terms' cells rather than
terms x routes. The weights read back are those of the dense form (each row centred), so
scores and explanations are unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from routing_core._types import Float32Array, IntArray

# Up to this many routes a model is held dense: a message's rows are then one contiguous
# gather, faster than walking its cells (CLINC150: 59 vs 134 µs per score), at a size that
# stays small (tens of MB). Past it, the dense matrix would grow to most of a GB.
DENSE_ROUTES = 400

# OpenBLAS runs a vector-matrix product on every core once the matrix has 460,800 elements
# (115,200 x its GEMM_MULTITHREAD_THRESHOLD, 4). On a 2-core machine shared with other work
# the turn then waits for the second core: at 2,000 routes a long message's dense rows
# crossed it and route() p99 rose from 0.4 ms to 3-7 ms, in CPU time as in wall time
# (docs/lab/benchmarks.md, "Scale"). Products of at most this many elements stay on the
# calling thread, and their gathered rows (1 MB) stay in the core's cache.
BLAS_BLOCK = 1 << 18


def rows_dot(values: Float32Array, matrix: Float32Array, rows: IntArray) -> Float32Array:
    """`values @ matrix[rows]`, a block of rows at a time (see BLAS_BLOCK), summed in double
    precision: the products of float32 numbers are exact there, so the sum is the same to
    ~1e-15 whatever order a BLAS kernel or another runtime adds them in, where float32 sums
    differed by up to 8e-6 between two CPUs' kernels (docs/pack-format.md, Lexical scorer,
    its arithmetic)."""
    step = max(1, BLAS_BLOCK // max(1, matrix.shape[1]))
    wide = values.astype(np.float64)
    if len(rows) <= step:  # nearly every message: one product, as before
        result: Float32Array = (wide @ np.take(matrix, rows, axis=0).astype(np.float64)).astype(
            np.float32
        )
        return result
    out = np.zeros(matrix.shape[1], np.float64)
    for start in range(0, len(rows), step):
        end = start + step
        out += wide[start:end] @ np.take(matrix, rows[start:end], axis=0).astype(np.float64)
    return out.astype(np.float32)


@dataclass(frozen=True, slots=True)
class DenseWeights:
    """Terms x routes weights as one matrix (packs of up to DENSE_ROUTES routes)."""

    matrix: Float32Array

    @property
    def n_terms(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def n_routes(self) -> int:
        """Columns: the routes, and the out-of-scope examples' class when there are some."""
        return int(self.matrix.shape[1])

    def logits(self, ids: IntArray, values: Float32Array) -> Float32Array:
        """`values @ W[ids]`: a message's logits over every route."""
        return rows_dot(values, self.matrix, ids)

    def column(self, ids: IntArray, route: int) -> Float32Array:
        """`W[ids, route]`: each term's weight for one route."""
        result: Float32Array = self.matrix[ids, route]
        return result

    def dense(self) -> Float32Array:
        """The matrix itself."""
        return self.matrix


def weights_of(
    cells: IntArray, values: Float32Array, n_terms: int, n_routes: int
) -> Weights | DenseWeights:
    """The weights for scoring, dense or sparse by the number of routes."""
    sparse = Weights.from_cells(cells, values, n_terms, n_routes)
    return sparse if n_routes > DENSE_ROUTES else DenseWeights(sparse.dense())


# A term with more cells than this share of the routes (the common words and n-grams every
# message has) keeps a dense row: walking hundreds of cells per term cost more than
# gathering its row (500 routes: route() p50 610-660 µs all sparse, 380-410 all dense).
HEAVY_SHARE = 1 / 16


@dataclass(frozen=True, slots=True)
class Weights:
    """Terms x routes weights: stored cells by term (CSR) and each term's mean over routes.

    A term's weight for a route is its cell's value (0 without a cell) minus the term's mean.
    Terms with many cells are also held as dense rows (`heavy`, indexed by `heavy_row`), and
    scoring reads those rows instead of their cells.
    """

    indptr: IntArray
    routes: npt.NDArray[np.int32]
    values: Float32Array
    means: Float32Array
    n_routes: int
    heavy_row: IntArray  # per term: its row in `heavy`, or -1
    heavy: Float32Array  # heavy terms x routes, centred

    @classmethod
    def from_cells(
        cls, cells: IntArray, values: Float32Array, n_terms: int, n_routes: int
    ) -> Weights:
        """From ascending flat cells (`term * n_routes + route`) and their values."""
        terms, routes = np.divmod(cells, max(1, n_routes))
        counts = np.bincount(terms, minlength=n_terms)
        indptr = np.zeros(n_terms + 1, np.int64)
        np.cumsum(counts, out=indptr[1:])
        sums = np.bincount(terms, values.astype(np.float64), minlength=n_terms)
        means = (sums / max(1, n_routes)).astype(np.float32)
        heavy_terms = np.flatnonzero(counts > HEAVY_SHARE * n_routes)
        heavy_row = np.full(n_terms, -1, np.int64)
        heavy_row[heavy_terms] = np.arange(len(heavy_terms))
        heavy = np.zeros((len(heavy_terms), n_routes), np.float32)
        in_heavy = heavy_row[terms] >= 0
        heavy[heavy_row[terms[in_heavy]], routes[in_heavy]] = values[in_heavy]
        heavy -= means[heavy_terms, None]
        return cls(
            indptr,
            routes.astype(np.int32),
            values.astype(np.float32),
            means,
            n_routes,
            heavy_row,
            heavy,
        )

    @property
    def n_terms(self) -> int:
        return len(self.indptr) - 1

    def logits(self, ids: IntArray, values: Float32Array) -> Float32Array:
        """`values @ W[ids]`: a message's logits over every route."""
        rows = self.heavy_row[ids]
        dense = rows >= 0
        out = rows_dot(values[dense], self.heavy, rows[dense])
        light = ~dense
        light_ids, light_values = ids[light], values[light]
        starts = self.indptr[light_ids]
        lengths = self.indptr[light_ids + 1] - starts
        cells = _ranges(starts, lengths)
        # Each cell weighted by its term's value: a repeat, not a gather by cell position.
        weighted = np.repeat(light_values, lengths) * self.values[cells]
        out += np.bincount(self.routes[cells], weighted, minlength=self.n_routes)
        out -= float(light_values @ self.means[light_ids])
        return out

    def column(self, ids: IntArray, route: int) -> Float32Array:
        """`W[ids, route]`: each term's weight for one route."""
        positions, cells = self._cells(ids)
        mine = self.routes[cells] == route
        found = np.bincount(positions[mine], self.values[cells][mine], minlength=len(ids))
        result: Float32Array = (found - self.means[ids]).astype(np.float32)
        return result

    def dense(self) -> Float32Array:
        """The full terms x routes matrix (large packs: most of a GB; for tests and re-encoding)."""
        out = np.zeros((self.n_terms, self.n_routes), np.float32)
        terms = np.repeat(np.arange(self.n_terms), np.diff(self.indptr))
        out[terms, self.routes] = self.values
        out -= self.means[:, None]
        return out

    def _cells(self, ids: IntArray) -> tuple[IntArray, IntArray]:
        """For the rows `ids`: each cell's position in `ids`, and the cell's index."""
        starts = self.indptr[ids]
        lengths = self.indptr[ids + 1] - starts
        positions = np.repeat(np.arange(len(ids)), lengths)
        return positions, _ranges(starts, lengths)


def _ranges(starts: IntArray, lengths: IntArray) -> IntArray:
    """The concatenated ranges `starts[i] : starts[i] + lengths[i]`, in order."""
    ends = np.cumsum(lengths)
    total = int(ends[-1]) if len(ends) else 0
    result: IntArray = np.repeat(starts - ends + lengths, lengths) + np.arange(total)
    return result
