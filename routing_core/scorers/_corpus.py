"""What the lexical model's learners share: the training corpus, its mini-batches, progress.

The softmax correction (`_model.py`), the candidate correction of a large pack
(`_candidates.py`) and the hinge (`_hinge.py`) all learn by momentum SGD over mini-batches
of the same sparse corpus. The corpus, how it is cut into batches and the settings of those
batches live here, below all three, so that none of them imports another for them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from routing_core._types import Float32Array, IntArray

if TYPE_CHECKING:  # imported where learning needs it: loading a stored model never does
    from scipy import sparse

# Texts per mini-batch, and the seed of the one shuffle that makes the batches.
BATCH = 256
SEED = 7
MOMENTUM = 0.9
# Share of a pass's progress spent building its batches.
BATCHING_SHARE = 0.05


@dataclass(frozen=True, slots=True)
class Corpus:
    """Training texts as a sparse matrix in row order (CSR triplets) plus each text's route."""

    rows: IntArray
    ids: IntArray
    values: Float32Array
    routes: IntArray
    n_terms: int
    char_sizes: IntArray  # per term: 0 for a word term, n for a character n-gram

    @property
    def n_docs(self) -> int:
        return len(self.routes)


@dataclass(frozen=True, slots=True)
class Progress:
    """Reports how far a build is, as a fraction of its whole, to an optional callback.

    A stage gets its share of [0, 1] with `part`, so each stage counts from 0 to 1 on its
    own and the callback still sees one monotone fraction. An exception the callback raises
    is not caught: it aborts the build (that is how a job is cancelled).
    """

    callback: Callable[[float], None] | None = None
    start: float = 0.0
    end: float = 1.0

    def __call__(self, fraction: float) -> None:
        if self.callback is not None:
            done = min(1.0, max(0.0, fraction))
            self.callback(self.start + (self.end - self.start) * done)

    def part(self, start: float, end: float) -> Progress:
        """The sub-range [start, end] of this one, as its own 0-to-1 progress."""
        width = self.end - self.start
        return Progress(self.callback, self.start + width * start, self.start + width * end)


NO_PROGRESS = Progress()


@dataclass(frozen=True, slots=True)
class Batch:
    """One mini-batch, pre-indexed once so that every epoch only does arithmetic.

    `matrix` is the batch's texts over its own distinct `terms` (rows x terms, CSR), and
    `transposed` the same as terms x rows: the two sparse products of a step.
    """

    docs: IntArray
    terms: IntArray  # the distinct terms of the batch
    matrix: sparse.csr_array
    transposed: sparse.csr_array


def make_batches(corpus: Corpus, progress: Progress = NO_PROGRESS) -> list[Batch]:
    """The corpus in mini-batches of BATCH texts, shuffled once by SEED, each indexed once."""
    from scipy import sparse

    shuffled = np.random.default_rng(SEED).permutation(corpus.n_docs)
    starts = np.searchsorted(corpus.rows, np.arange(corpus.n_docs + 1))
    batches = []
    for first in range(0, corpus.n_docs, BATCH):
        progress(first / corpus.n_docs)
        docs = np.sort(shuffled[first : first + BATCH])
        lengths = starts[docs + 1] - starts[docs]
        entries = np.repeat(starts[docs] - np.r_[0, np.cumsum(lengths)[:-1]], lengths)
        entries += np.arange(lengths.sum())
        rows = np.repeat(np.arange(len(docs)), lengths)
        terms, slot = np.unique(corpus.ids[entries], return_inverse=True)
        if not len(terms):
            continue
        shape = (len(docs), len(terms))
        matrix = sparse.csr_array((corpus.values[entries], (rows, slot)), shape=shape)
        batches.append(Batch(docs, terms, matrix, matrix.T.tocsr()))
    return batches


def corpus_logits(weights: Float32Array, corpus: Corpus) -> Float32Array:
    """Every row's logits, X @ W (a sparse product)."""
    out: Float32Array = (_matrix(corpus) @ weights).astype(np.float32, copy=False)
    return out


def _matrix(corpus: Corpus) -> sparse.csr_array:
    """The corpus as a texts x terms sparse matrix."""
    from scipy import sparse

    shape = (corpus.n_docs, corpus.n_terms)
    return sparse.csr_array((corpus.values, (corpus.rows, corpus.ids)), shape=shape)


def select(corpus: Corpus, docs: npt.NDArray[np.bool_]) -> Corpus:
    """The rows of `docs`, renumbered from 0, in order."""
    keep = docs[corpus.rows]
    renumber = np.cumsum(docs) - 1
    return Corpus(
        renumber[corpus.rows[keep]],
        corpus.ids[keep],
        corpus.values[keep],
        corpus.routes[docs],
        corpus.n_terms,
        corpus.char_sizes,
    )
