"""The correction of a large pack, learned against each text's strongest candidate routes only.

Softmax regression over every route costs (texts x terms x routes): at 2,000 routes nearly all
of it is spent pushing down routes that naive Bayes already ranks far below the right one,
whose share of the softmax is nil. Past CANDIDATE_ROUTES routes, each text is therefore
trained against its own route and the CANDIDATES - 1 routes naive Bayes finds strongest for
it on the word terms (the confusable ones), in a softmax over those alone. A step then costs
(texts x terms x CANDIDATES), whatever the number of routes. Momentum moves only the cells a
step touched. Up to CANDIDATE_ROUTES routes the full softmax is learned (`_model.py`), so the
public data sets' figures do not depend on this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from routing_core.scorers._model import Corpus, Progress

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]

# Packs with more routes than this learn against candidates; at most this many per text.
CANDIDATE_ROUTES = 200
CANDIDATES = 24
# Texts whose naive-Bayes logits over every route are held at once (bounds the memory).
ROWS_AT_ONCE = 2048


def candidates(corpus: Corpus, bayes: FloatArray, progress: Progress | None = None) -> IntArray:
    """Per text, its own route first, then the routes naive Bayes ranks highest on its words."""
    from scipy import sparse

    n_routes = bayes.shape[1]
    words = corpus.char_sizes[corpus.ids] == 0
    matrix = sparse.csr_array(
        (corpus.values[words], (corpus.rows[words], corpus.ids[words])),
        shape=(corpus.n_docs, corpus.n_terms),
    )
    width = min(CANDIDATES, n_routes)
    out = np.empty((corpus.n_docs, width), np.int64)
    for first in range(0, corpus.n_docs, ROWS_AT_ONCE):
        if progress is not None:
            progress(first / corpus.n_docs)
        last = min(corpus.n_docs, first + ROWS_AT_ONCE)
        logits = np.asarray(matrix[first:last] @ bayes)
        logits[np.arange(last - first), corpus.routes[first:last]] = np.inf
        top = np.argpartition(-logits, width - 1, axis=1)[:, :width]
        order = np.argsort(-np.take_along_axis(logits, top, axis=1), axis=1, kind="stable")
        out[first:last] = np.take_along_axis(top, order, axis=1)
    return out


def gathered_logits(
    corpus: Corpus, weights: FloatArray, chosen: IntArray, progress: Progress | None = None
) -> FloatArray:
    """Every text's logits X @ W on its candidate routes only (texts x candidates)."""
    n_routes = weights.shape[1]
    flat = weights.reshape(-1)
    out = np.zeros(chosen.shape, np.float32)
    starts = np.searchsorted(corpus.rows, np.arange(corpus.n_docs + 1))
    for first in range(0, corpus.n_docs, ROWS_AT_ONCE):
        if progress is not None:
            progress(first / corpus.n_docs)
        last = min(corpus.n_docs, first + ROWS_AT_ONCE)
        lo, hi = starts[first], starts[last]
        rows = corpus.rows[lo:hi]
        cells = corpus.ids[lo:hi, None] * n_routes + chosen[rows]
        contributions = flat[cells] * corpus.values[lo:hi, None]
        out[first:last] = _sum_rows(contributions, rows - first, last - first)
    return out


def _sum_rows(contributions: FloatArray, rows: IntArray, n_rows: int) -> FloatArray:
    out = np.zeros((n_rows, contributions.shape[1]), np.float32)
    if len(rows):
        starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
        out[rows[starts]] = np.add.reduceat(contributions, starts, axis=0)
    return out


@dataclass(frozen=True, slots=True)
class _Batch:
    """One mini-batch: its texts, and each entry's row, value, rate and candidate cells."""

    docs: IntArray
    rows: IntArray
    values: FloatArray
    rates: FloatArray
    cells: IntArray  # entries x candidates: term * n_routes + route
    row_starts: IntArray
    filled: IntArray


class CandidateCorrection:
    """Softmax regression on candidate routes, on top of fixed candidate `base` logits.

    Same interface as `_model._Correction`: successive `fit` calls continue the weights.
    Only the terms that learn (rate > 0) have rows, so the 4- and 5-grams cost no memory.
    """

    def __init__(
        self,
        corpus: Corpus,
        chosen: IntArray,
        n_routes: int,
        rates: FloatArray,
        margin: float,
        initial: FloatArray | None = None,
    ):
        from routing_core.scorers._model import Corpus

        self.terms = np.flatnonzero(rates[:, 0] > 0.0)
        row_of = np.full(corpus.n_terms, -1, np.int64)
        row_of[self.terms] = np.arange(len(self.terms))
        learned = row_of[corpus.ids] >= 0
        self.corpus = Corpus(
            corpus.rows[learned],
            row_of[corpus.ids[learned]],
            corpus.values[learned],
            corpus.routes,
            len(self.terms),
            corpus.char_sizes[self.terms],
        )
        self.chosen = chosen
        self.n_routes = n_routes
        self.rates = rates[self.terms, 0]
        self.margin = margin
        shape = (len(self.terms), n_routes)
        self.weights = np.zeros(shape, np.float32) if initial is None else initial[self.terms]
        self.velocity = np.zeros(shape, np.float32)

    def add_to(self, weights: FloatArray) -> None:
        """Add the learned correction to full terms x routes `weights`, in place."""
        weights[self.terms] += self.weights

    def fit(
        self,
        base: FloatArray,
        docs: npt.NDArray[np.bool_],
        epochs: int,
        seed: int,
        progress: Progress,
    ) -> None:
        """`epochs` passes over the texts `docs` in mini-batches (order fixed by `seed`)."""
        from routing_core.scorers._model import BATCH, BATCHING_SHARE, SEED

        picked = np.flatnonzero(docs)
        if len(picked) == 0 or epochs <= 0:
            progress(1.0)
            return
        shuffled = picked[np.random.default_rng(SEED).permutation(len(picked))]
        preparing, learning = progress.part(0.0, BATCHING_SHARE), progress.part(BATCHING_SHARE, 1)
        batches = []
        for first in range(0, len(picked), BATCH):
            preparing(first / len(picked))
            batches.append(self._batch(np.sort(shuffled[first : first + BATCH])))
        order = np.random.default_rng(seed)
        total, done = epochs * len(batches), 0
        for _ in range(epochs):
            for index in order.permutation(len(batches)):
                self._step(batches[index], base)
                done += 1
                learning(done / total)
        progress(1.0)

    def logits(self, docs: npt.NDArray[np.bool_]) -> FloatArray:
        """The correction's logits of the texts `docs` on their candidates."""
        from routing_core.scorers._model import _select

        return gathered_logits(_select(self.corpus, docs), self.weights, self.chosen[docs])

    def _batch(self, docs: IntArray) -> _Batch:
        corpus = self.corpus
        starts = np.searchsorted(corpus.rows, docs)
        ends = np.searchsorted(corpus.rows, docs, side="right")
        lengths = ends - starts
        entries = np.repeat(starts - np.r_[0, np.cumsum(lengths)[:-1]], lengths)
        entries += np.arange(lengths.sum())
        rows = np.searchsorted(docs, corpus.rows[entries])
        ids = corpus.ids[entries]
        cells = ids[:, None] * self.n_routes + self.chosen[docs][rows]
        filled = np.unique(rows)
        row_starts = np.searchsorted(rows, filled)
        return _Batch(
            docs, rows, corpus.values[entries], self.rates[ids], cells, row_starts, filled
        )

    def _step(self, batch: _Batch, base: FloatArray) -> None:
        """One momentum-SGD step of the candidate softmax with the additive margin."""
        from routing_core.scorers._model import MOMENTUM

        flat, velocity = self.weights.reshape(-1), self.velocity.reshape(-1)
        active = flat[batch.cells]
        logits = base[batch.docs]
        if len(batch.rows):
            contributions = active * batch.values[:, None]
            logits[batch.filled] += np.add.reduceat(contributions, batch.row_starts, axis=0)
        logits[:, 0] -= self.margin
        logits -= logits.max(axis=1, keepdims=True)
        error = np.exp(logits)
        error /= error.sum(axis=1, keepdims=True)
        error[:, 0] -= 1.0
        error /= len(batch.docs)
        if not len(batch.rows):
            return
        # velocity = MOMENTUM * velocity + gradient on the touched cells, then the step.
        # A cell listed twice is scaled once (both writes are the same value), and add.at
        # adds each of its contributions.
        velocity[batch.cells] *= np.float32(MOMENTUM)
        np.add.at(velocity, batch.cells, error[batch.rows] * batch.values[:, None])
        flat[batch.cells] = active - velocity[batch.cells] * batch.rates[:, None]
